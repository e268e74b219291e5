"""Past commits as evidence: the files changed by earlier commits whose messages resemble the report.

A project's history holds its earlier fixes; a report that reads like an earlier commit's message often concerns
the files that commit changed. `CommitLog` indexes the messages and changed files of a repository's non-merge
commits (cached on disk per git directory, extended when a commit's ancestry holds unseen commits); `scores`
ranks the ancestors of the investigated commit by BM25 against the report and gives each changed file its
commits' similarity. Only ancestors count: nothing later than the investigated commit can leak in.
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from funnel.localize.terms import count_terms

__all__ = ("HistoryConfig", "HistorySource", "CommitLog", "cochange_partners", "find_git_dir", "history_scores")

_CACHE_VERSION = 1
_MEMO_SIZE = 4
_GIT_TIMEOUT_S = 120.0
_FORMAT = "--format=%x00%H%x01%B%x02"


@dataclass(frozen=True)
class HistoryConfig:
    """Knobs of the history signal."""

    commits: int = 30
    """Most similar past commits whose files score."""
    max_files: int = 20
    """Commits changing more files than this (sweeping refactors, releases) are left out."""
    k1: float = 1.2
    """BM25 term-frequency saturation over commit messages."""
    b: float = 0.75
    """BM25 length normalization over commit messages."""
    min_similarity: float = 90.0
    """Commits whose BM25 against the report is below this are ignored (a message sharing a few common words
    with a long report is no evidence)."""
    cochange_max_files: int = 8
    """Co-change counts only commits changing at most this many files (a sweeping change couples nothing)."""
    cochange_min_commits: int = 3
    """A file's partners are counted only when at least this many such commits changed it."""
    cochange_min_together: int = 2
    """A partner must have changed together with the file in at least this many of those commits."""


@dataclass
class CommitLog:
    """Message terms and changed files of a repository's non-merge commits, with an inverted index."""

    shas: list[str] = field(default_factory=list)
    """Commit ids, in the order they were indexed."""
    files: list[tuple[str, ...]] = field(default_factory=list)
    """Files each commit changed (repository-relative)."""
    lengths: list[int] = field(default_factory=list)
    """Message length of each commit in terms."""
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """term → (commit index, term count) for every commit whose message has it."""
    _index: dict[str, int] = field(default_factory=dict, repr=False)
    _by_file: dict[str, list[int]] | None = field(default=None, repr=False)
    """path → the commits changing it, built on the first co-change question and kept up to date by `add`."""

    def __post_init__(self) -> None:
        self._index = {sha: k for k, sha in enumerate(self.shas)}

    def add(self, sha: str, message: str, files: Iterable[str]) -> None:
        """Index one commit (a commit already indexed is ignored)."""
        if sha in self._index:
            return
        k = len(self.shas)
        self._index[sha] = k
        self.shas.append(sha)
        self.files.append(tuple(files))
        if self._by_file is not None:
            self._index_files(k)
        terms = count_terms(message)
        self.lengths.append(sum(terms.values()))
        for term, n in terms.items():
            self.postings.setdefault(term, []).append((k, n))

    def indices(self, shas: Iterable[str]) -> set[int]:
        """Index positions of those of `shas` that are indexed."""
        return {self._index[s] for s in shas if s in self._index}

    def catch_up(self, git_dir: Path, commit: str) -> tuple[set[int], bool]:
        """Index the non-merge ancestors of `commit` (the commit itself included) not indexed yet; return their
        index positions and whether any was added."""
        ancestry = _git(git_dir, "rev-list", "--no-merges", commit).split()
        missing = [s for s in ancestry if s not in self._index]
        if missing:
            _extend(self, git_dir, commit, missing, complete=len(missing) == len(ancestry))
        return self.indices(ancestry), bool(missing)

    @classmethod
    def load(cls, git_dir: Path, commit: str = "HEAD", cache_dir: Path | None = None) -> tuple[CommitLog, set[int]]:
        """The log of `git_dir` (from the cache, extended with any ancestor of `commit` it lacks) and the index
        positions of `commit`'s non-merge ancestors (the commit itself included)."""
        cache = _cache_file(git_dir, cache_dir) if cache_dir is not None else None
        log = (_read_cache(cache) if cache is not None else None) or cls()
        among, grew = log.catch_up(git_dir, commit)
        if grew and cache is not None:
            _write_cache(cache, log)
        return log, among

    def scores(self, text: str, among: set[int], config: HistoryConfig | None = None) -> dict[str, float]:
        """Files changed by the commits of `among` most similar to `text`: each file sums its commits' BM25
        (relative to the best commit) / √(files the commit changed); the best file scores highest."""
        config = config or HistoryConfig()
        if not among:
            return {}
        n = len(among)
        avg = sum(self.lengths[k] for k in among) / n or 1.0
        sims: dict[int, float] = {}
        for term, count in count_terms(text).items():
            postings = [(k, tf) for k, tf in self.postings.get(term, ()) if k in among]
            if not postings:
                continue
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            weight = (1.0 + math.log(count)) * idf
            for k, tf in postings:
                if 0 < len(self.files[k]) <= config.max_files:
                    norm = config.k1 * (1 - config.b + config.b * self.lengths[k] / avg)
                    sims[k] = sims.get(k, 0.0) + weight * tf * (config.k1 + 1) / (tf + norm)
        best = sorted(((k, s) for k, s in sims.items() if s >= config.min_similarity),
                      key=lambda item: (-item[1], item[0]))[: config.commits]
        if not best:
            return {}
        top = best[0][1]
        out: dict[str, float] = {}
        for k, sim in best:
            files = self.files[k]
            for path in files:
                out[path] = out.get(path, 0.0) + sim / top / math.sqrt(len(files))
        return out

    def _index_files(self, k: int) -> None:
        for name in self.files[k]:
            self._by_file.setdefault(name, []).append(k)

    def partners(self, path: str, among: set[int], config: HistoryConfig | None = None) -> dict[str, float]:
        """The files that changed together with `path` in the commits of `among`: each with the share of the
        commits changing `path` (at most `cochange_max_files` files each) that changed it too; empty when
        `path` changed in fewer than `cochange_min_commits` of them."""
        config = config or HistoryConfig()
        if self._by_file is None:
            self._by_file = {}
            for k in range(len(self.files)):
                self._index_files(k)
        commits = [k for k in self._by_file.get(path, ()) if k in among
                   and 1 < len(self.files[k]) <= config.cochange_max_files]
        if len(commits) < config.cochange_min_commits:
            return {}
        together: dict[str, int] = {}
        for k in commits:
            for name in self.files[k]:
                if name != path:
                    together[name] = together.get(name, 0) + 1
        return {name: n / len(commits) for name, n in together.items() if n >= config.cochange_min_together}


@dataclass(frozen=True)
class HistorySource:
    """Where a run's history comes from: a git directory and the investigated commit (later commits never count)."""

    git_dir: Path
    """The repository's git directory (a bare mirror or a work tree's `.git`)."""
    commit: str = "HEAD"
    """The investigated commit."""

    @classmethod
    def locate(cls, root: Path, git_dir: Path | str | None = None, commit: str | None = None) -> HistorySource | None:
        """The source for a tree: `git_dir` when given (a git directory, bare or not, or a work tree), else the git
        directory of the work tree at `root`; None when there is neither."""
        found = _absolute_git_dir(Path(git_dir)) if git_dir else find_git_dir(root)
        return cls(found, commit or "HEAD") if found is not None else None

    def has_commit(self) -> bool:
        """Whether the git directory holds the investigated commit (True when git cannot tell: missing, timed out)."""
        try:
            _git(self.git_dir, "rev-parse", "--verify", "--quiet", f"{self.commit}^{{commit}}")
        except subprocess.CalledProcessError:
            return False
        except (OSError, subprocess.SubprocessError):
            return True
        return True

    def scores(self, text: str, *, cache_dir: Path | None = None, config: HistoryConfig | None = None) -> dict[str, float]:
        """`history_scores` of `text` over this source."""
        return history_scores(text, self.git_dir, self.commit, cache_dir=cache_dir, config=config)

    def partners(self, paths: Iterable[str], *, cache_dir: Path | None = None,
                 config: HistoryConfig | None = None) -> dict[str, dict[str, float]]:
        """`cochange_partners` of `paths` over this source."""
        return cochange_partners(paths, self.git_dir, self.commit, cache_dir=cache_dir, config=config)


def _absolute_git_dir(path: Path) -> Path | None:
    """The git directory at `path` (itself when bare, its `.git` when a work tree), or None."""
    try:
        out = _git(path, "rev-parse", "--absolute-git-dir", work_tree=True).strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out) if out else None


def find_git_dir(root: Path) -> Path | None:
    """The git directory of the work tree whose top level is `root` (None when `root` is not the top of a git work
    tree, e.g. a plain directory or a sub-folder of another project's checkout, or git is missing)."""
    try:
        top, git_dir = _git(root, "rev-parse", "--show-toplevel", "--absolute-git-dir", work_tree=True).splitlines()
        same = Path(top).resolve() == Path(root).resolve()
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return Path(git_dir) if same and git_dir else None


_LOCK = threading.Lock()
_MEMO: dict[Path, CommitLog] = {}


def _log(git_dir: Path, commit: str, cache_dir: Path | None) -> tuple[CommitLog, set[int]] | None:
    """The log of `git_dir` and the positions of `commit`'s ancestors (None when git or the history is
    unavailable). A log loaded once stays in memory for later calls."""
    git_dir = Path(git_dir)
    try:
        with _LOCK:
            log = _MEMO.get(git_dir)
            if log is not None:
                among, _ = log.catch_up(git_dir, commit)
            else:
                log, among = CommitLog.load(git_dir, commit, cache_dir)
                while len(_MEMO) >= _MEMO_SIZE:
                    _MEMO.pop(next(iter(_MEMO)))
                _MEMO[git_dir] = log
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return log, among


def history_scores(text: str, git_dir: Path, commit: str = "HEAD", *, cache_dir: Path | None = None,
                   config: HistoryConfig | None = None) -> dict[str, float]:
    """Files changed by the past commits (ancestors of `commit` in `git_dir`) that read most like `text`;
    empty when git or the history is unavailable."""
    found = _log(git_dir, commit, cache_dir)
    return found[0].scores(text, found[1], config) if found is not None else {}


def cochange_partners(paths: Iterable[str], git_dir: Path, commit: str = "HEAD", *, cache_dir: Path | None = None,
                      config: HistoryConfig | None = None) -> dict[str, dict[str, float]]:
    """For each of `paths`, the files that changed together with it in the ancestors of `commit`, with how often
    (`CommitLog.partners`); empty when git or the history is unavailable."""
    found = _log(git_dir, commit, cache_dir)
    if found is None:
        return {}
    log, among = found
    with _LOCK:  # `partners` builds the log's path index on first use
        return {path: log.partners(path, among, config) for path in paths}


def _git(where: Path, *args: str, work_tree: bool = False, stdin: str | None = None) -> str:
    place = ["-C", str(where)] if work_tree else ["--git-dir", str(where)]
    done = subprocess.run(["git", *place, "-c", "core.quotePath=false", *args], input=stdin, capture_output=True,
                          text=True, errors="replace", timeout=_GIT_TIMEOUT_S, check=True)
    return done.stdout


def _extend(log: CommitLog, git_dir: Path, commit: str, missing: list[str], *, complete: bool) -> None:
    """Index the `missing` commits: the whole history of `commit` when nothing of it is indexed yet, else only
    those commits."""
    if complete:
        out = _git(git_dir, "log", "--no-merges", "--name-only", "--no-renames", _FORMAT, commit)
    else:
        out = _git(git_dir, "log", "--no-walk=unsorted", "--stdin", "--name-only", "--no-renames", _FORMAT,
                   stdin="\n".join(missing) + "\n")
    for chunk in out.split("\x00")[1:]:
        sha, _, rest = chunk.partition("\x01")
        message, _, names = rest.partition("\x02")
        log.add(sha.strip(), message, [line for line in names.splitlines() if line.strip()])


def _cache_file(git_dir: Path, cache_dir: Path) -> Path:
    key = hashlib.sha256(str(Path(git_dir).resolve()).encode()).hexdigest()[:20]
    return cache_dir / "history" / f"{key}.v{_CACHE_VERSION}.pickle"


def _read_cache(path: Path) -> CommitLog | None:
    try:
        with path.open("rb") as fh:
            state = pickle.load(fh)  # noqa: S301 - our own cache file, written by _write_cache
        return CommitLog(shas=state["shas"], files=state["files"], lengths=state["lengths"], postings=state["postings"])
    except (OSError, EOFError, pickle.UnpicklingError, KeyError, TypeError, AttributeError):
        return None


def _write_cache(path: Path, log: CommitLog) -> None:
    """Write atomically (temp file + rename), so a concurrent reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            pickle.dump({"shas": log.shas, "files": log.files, "lengths": log.lengths, "postings": log.postings}, fh,
                        protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass

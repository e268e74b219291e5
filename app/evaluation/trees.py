"""Materialize the tree of a repository at one commit into a shared, read-only cache.

Layout: `<cache>/<owner>__<name>/<commit>-exact/` (`app.git_export`: the commit's files whatever its export
attributes say). A tree is extracted into a temporary sibling directory and
renamed into place, so a directory that exists is always complete. Blobs missing from a partial clone
(large files left out of a snapshot) are listed first and excluded, so the rest of the tree still arrives.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from app.evaluation.errors import EvalInputError, EvalSetupError
from app.git_export import EXACT_TREE_SUFFIX, ExportError, extract_commit

DEFAULT_CACHE_DIRS = (Path("/work/bench-cache/trees"),)
"""Shared caches used when they exist and nothing else is configured."""

CACHE_ENV = "BUGSLEUTH_CACHE_DIR"
"""Environment variable naming bugsleuth's cache directory; trees go in its `trees/` subfolder."""


@dataclass(frozen=True)
class Tree:
    """A materialized tree."""

    path: Path
    """Directory holding the files of the commit."""
    missing: tuple[str, ...] = ()
    """Paths left out because their blobs are absent from the git directory (empty when read from cache)."""
    cached: bool = True
    """True when the tree was already in the cache."""


@dataclass
class TreeCache:
    """A directory of materialized trees, one per (repository, commit)."""

    root: Path
    """Cache directory."""
    read_only: bool = True
    """Remove write permission from extracted files (directories stay writable so the cache can be pruned)."""
    _git: str = field(default="git", repr=False)

    def path_for(self, repo: str, commit: str) -> Path:
        """Where the tree of `repo` (`owner/name`) at `commit` lives in this cache."""
        owner, _, name = repo.partition("/")
        if not owner or not name or "/" in name or owner.startswith("."):
            raise EvalInputError(f"repository {repo!r} is not of the form owner/name")
        return self.root / f"{owner}__{name}" / f"{commit}{EXACT_TREE_SUFFIX}"

    def materialize(self, repo: str, git_dir: Path, commit: str) -> Tree:
        """The tree of `repo` at `commit`, extracting it from `git_dir` unless it is already cached."""
        dest = self.path_for(repo, commit)
        if dest.is_dir():
            return Tree(dest)
        git_dir = Path(git_dir)
        if not git_dir.exists():
            raise EvalInputError(f"git directory {git_dir} for {repo} does not exist")
        git_dir = _resolve_git_dir(git_dir)
        full = self._rev_parse(git_dir, commit, repo)
        missing = self.missing_blobs(git_dir, full)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{commit[:12]}-", dir=dest.parent))
        os.chmod(tmp, 0o755)
        try:
            self._extract(git_dir, full, missing, tmp)
            if self.read_only:
                _remove_write_bits(tmp)
            try:
                os.rename(tmp, dest)
            except OSError:
                if dest.is_dir():  # another process won the race; its tree is just as good
                    return Tree(dest, tuple(missing))
                raise
        finally:
            if tmp.exists():
                _rmtree(tmp)
        return Tree(dest, tuple(missing), cached=False)

    def missing_blobs(self, git_dir: Path, commit: str) -> list[str]:
        """Paths of the commit whose blobs are absent from `git_dir`."""
        listing = self._run(git_dir, ["ls-tree", "-r", "-z", "--full-tree", commit]).stdout
        blobs: dict[str, list[str]] = {}
        for entry in listing.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            _mode, kind, sha = meta.split(b" ")
            if kind == b"blob":
                blobs.setdefault(sha.decode(), []).append(path.decode("utf-8", "surrogateescape"))
        if not blobs:
            return []
        checked = subprocess.run(
            [self._git, "--git-dir", str(git_dir), "cat-file", "--batch-check"],
            input="".join(f"{sha}\n" for sha in blobs).encode(),
            capture_output=True,
            check=False,
            env=_git_env(),
        )
        missing: list[str] = []
        for line in checked.stdout.decode().splitlines():
            sha, _, status = line.partition(" ")
            if status == "missing":
                missing.extend(blobs.get(sha, []))
        return sorted(missing)

    def _rev_parse(self, git_dir: Path, commit: str, repo: str) -> str:
        done = subprocess.run(
            [self._git, "--git-dir", str(git_dir), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
            capture_output=True,
            text=True,
            check=False,
            env=_git_env(),
        )
        if done.returncode != 0:
            raise EvalInputError(f"commit {commit} of {repo} is not in {git_dir}")
        return done.stdout.strip()

    def _extract(self, git_dir: Path, commit: str, missing: list[str], dest: Path) -> None:
        pathspec = ["."] + [f":(exclude,literal){path}" for path in missing] if missing else []
        try:
            extract_commit(git_dir, commit, dest, git=self._git, pathspec=pathspec, env=_git_env())
        except ExportError as exc:
            raise EvalSetupError(str(exc)) from exc

    def _run(self, git_dir: Path, args: list[str]) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run(
            [self._git, "--git-dir", str(git_dir), *args], capture_output=True, check=False, env=_git_env()
        )
        if done.returncode != 0:
            raise EvalSetupError(
                f"git {' '.join(args[:2])} in {git_dir} failed: {done.stderr.decode(errors='replace').strip()}"
            )
        return done


def default_cache_dir() -> Path:
    """The tree cache used when none is given: `$BUGSLEUTH_CACHE_DIR/trees`, else the shared
    `/work/bench-cache/trees` when it exists, else `~/.cache/bugsleuth/trees`."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser() / "trees"
    for candidate in DEFAULT_CACHE_DIRS:
        if candidate.is_dir():
            return candidate
    return Path.home() / ".cache" / "bugsleuth" / "trees"


def _resolve_git_dir(path: Path) -> Path:
    """A work tree's `.git`, or the path itself when it is a bare repository."""
    dot_git = path / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # worktrees and submodules: `gitdir: <path>`
        text = dot_git.read_text().strip()
        if text.startswith("gitdir:"):
            target = Path(text.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else (path / target).resolve()
    return path


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    env["GIT_NO_LAZY_FETCH"] = "1"  # a partial clone must not try to download the missing blobs
    return env


def _remove_write_bits(root: Path) -> None:
    mask = ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode & mask)


def _rmtree(path: Path) -> None:
    def _retry(func, target, _exc):  # type: ignore[no-untyped-def]
        os.chmod(os.path.dirname(target), 0o755)
        func(target)

    shutil.rmtree(path, onexc=_retry) if sys.version_info >= (3, 12) else shutil.rmtree(path, onerror=_retry)

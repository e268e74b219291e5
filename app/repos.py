"""The repository registry at work: clone/fetch git URLs into the cache, resolve the ref a report names, and
materialize a per-commit read-only tree with `git archive` (no worktrees, nothing ever written to the repo)."""

from __future__ import annotations

import asyncio
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from app.config import Settings
from app.git_export import EXACT_TREE_SUFFIX, ExportError, extract_commit
from app.views import RepoView

_GIT_TIMEOUT_S = 600.0
_locks: dict[str, asyncio.Lock] = {}

TREE_IN_USE_S = 3600.0
"""A tree used this recently may be under investigation: a size cap never evicts it."""


class RepositoryError(Exception):
    """The repository cannot be read (clone/fetch failed, path gone): the operator's to fix, not the reporter's."""


@dataclass(frozen=True)
class PreparedTree:
    """A tree ready to investigate."""

    root: Path
    """Read-only directory with the files of `commit` (or the local path itself when it is not a git repo)."""
    commit: str | None
    """Commit investigated (None for a plain directory)."""
    note: str = ""
    """What happened while resolving (e.g. the named ref was not found and the default head was used)."""
    git_dir: Path | None = None
    """The git directory the tree came from (its history up to `commit` is ranking evidence), or None."""


def is_git_url(location: str) -> bool:
    """Whether a registry location is a git URL (rather than a local path)."""
    return "://" in location or bool(re.match(r"^[\w.-]+@[\w.-]+:", location))


def _git(args: list[str], *, git_dir: Path | None = None, cwd: Path | None = None) -> str:
    cmd = ["git"] + ([f"--git-dir={git_dir}"] if git_dir else []) + args
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, env=env)
    except (UnicodeEncodeError, ValueError) as exc:  # NUL or half a surrogate pair: no git name holds one
        raise RepositoryError(f"git {' '.join(args[:2])} cannot take its arguments: {exc}") from None
    if proc.returncode != 0:
        raise RepositoryError(f"git {' '.join(args[:2])} failed: {proc.stderr.strip()[:500]}")
    return proc.stdout.strip()


_NAME_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")


def repository_name_problem(name: str) -> str | None:
    """Why `name` cannot name a repository (None when it can): `owner/name` (or `group/sub/name`), each part
    letters, digits, `.`, `_`, `-`, and no part `.` or `..` (names become directories in the data dir)."""
    parts = name.split("/")
    if all(_NAME_SEGMENT.fullmatch(p) and p not in (".", "..") for p in parts):
        return None
    return (
        f"repository name {name[:200]!r} is not usable: give `owner/name`, each part made of letters, digits, "
        "'.', '_' or '-', with no empty, '.' or '..' part"
    )


def _safe(name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "__", name)
    return f"_{safe}" if safe.startswith(".") or not safe else safe  # never `.`, `..` or a hidden directory


def tree_path(settings: Settings, repo_name: str, commit: str) -> Path:
    """Where the read-only tree of `repo_name` at `commit` lives in the tree cache."""
    return Path(settings.trees_dir) / _safe(repo_name) / f"{commit}{EXACT_TREE_SUFFIX}"


def git_dir_of(path: Path) -> Path | None:
    """The git directory of a local checkout or bare repository, or None when `path` is not one."""
    try:
        out = _git(["rev-parse", "--absolute-git-dir"], cwd=path)
    except (RepositoryError, OSError, subprocess.TimeoutExpired):
        return None
    return Path(out)


def _resolve(git_dir: Path, ref: str | None, default_ref: str | None) -> tuple[str, str]:
    notes = []
    if ref:
        for candidate in (ref, f"v{ref}", f"origin/{ref}", f"refs/tags/{ref}"):
            try:
                return _git(["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], git_dir=git_dir), ""
            except RepositoryError:
                continue
        notes.append(f"ref {ref!r} not found; investigated the default branch head instead")
    head = default_ref or "HEAD"
    try:
        commit = _git(["rev-parse", "--verify", f"{head}^{{commit}}"], git_dir=git_dir)
    except RepositoryError as exc:
        raise RepositoryError(f"cannot resolve {head!r}: the repository has no commits?") from exc
    return commit, "; ".join(notes)


def _archive(git_dir: Path, commit: str, dest: Path) -> None:
    if dest.is_dir():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=dest.parent))
    try:
        extract_commit(git_dir, commit, tmp, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"}, timeout=_GIT_TIMEOUT_S)
        _make_read_only(tmp)
        try:
            tmp.rename(dest)
        except OSError:
            if not dest.is_dir():
                raise
    except ExportError as exc:
        raise RepositoryError(str(exc)) from exc
    finally:
        if tmp.exists():
            _make_writable(tmp)
            shutil.rmtree(tmp, ignore_errors=True)


def _make_read_only(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for f in filenames:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                os.chmod(p, 0o444)
    for dirpath, dirnames, _ in os.walk(root, topdown=False):
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if not os.path.islink(p):
                os.chmod(p, 0o555)
    os.chmod(root, 0o555)


def _make_writable(root: Path) -> None:
    for dirpath, dirnames, _ in os.walk(root):
        os.chmod(dirpath, 0o755)


def _ensure_clone(settings: Settings, repo: RepoView) -> Path:
    git_dir = settings.repos_dir / f"{_safe(repo.name)}.git"
    if not (git_dir / "HEAD").exists():
        git_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=git_dir.parent))
        try:
            _git(["clone", "--bare", "--quiet", repo.location, str(tmp / "repo.git")])
            (tmp / "repo.git").rename(git_dir)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    else:
        _git(
            ["fetch", "--quiet", "--prune", "--tags", repo.location, "+refs/heads/*:refs/heads/*"],
            git_dir=git_dir,
        )
    return git_dir


def prepare_tree_sync(settings: Settings, repo: RepoView, ref: str | None) -> PreparedTree:
    """Fetch (git URLs), resolve `ref` (or the default head) and materialize its read-only tree (blocking)."""
    if is_git_url(repo.location):
        git_dir = _ensure_clone(settings, repo)
    else:
        path = Path(repo.location)
        if not path.is_dir():
            raise RepositoryError(f"repository {repo.name!r}: path {path} does not exist")
        git_dir = git_dir_of(path)
        if git_dir is None:
            return PreparedTree(root=path, commit=None, note="not a git repository: investigated the directory as is")
    commit, note = _resolve(git_dir, ref, repo.default_ref)
    dest = tree_path(settings, repo.name, commit)
    _archive(git_dir, commit, dest)
    record_tree_use(dest)
    return PreparedTree(root=dest, commit=commit, note=note, git_dir=git_dir)


@dataclass(frozen=True)
class CachedTree:
    """One per-commit tree in the tree cache."""

    path: Path
    size: int
    """Bytes of its files."""
    used: float
    """Last time an investigation prepared it (Unix seconds)."""


def _use_file(tree: Path) -> Path:
    # Beside the tree, not in it: trees are read-only and hold exactly the commit's files.
    return tree.parent / f".{tree.name}.use"


def _tree_bytes(tree: Path) -> int:
    total = 0
    for dirpath, _, filenames in os.walk(tree):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def record_tree_use(tree: Path) -> None:
    """Note that `tree` is used now (its size is measured once, on first use)."""
    marker = _use_file(tree)
    try:
        if marker.exists():
            os.utime(marker)
        else:
            marker.write_text(f"{_tree_bytes(tree)}\n")
    except OSError:
        pass


def cached_trees(settings: Settings) -> list[CachedTree]:
    """Every tree in the tree cache, least recently used first."""
    out = []
    root = Path(settings.trees_dir)
    for repo_dir in sorted(root.iterdir()) if root.is_dir() else ():
        for tree in sorted(repo_dir.iterdir()) if repo_dir.is_dir() else ():
            if tree.name.startswith(".") or not tree.is_dir():
                continue
            marker = _use_file(tree)
            if not marker.exists():
                record_tree_use(tree)
            try:
                size, used = int(marker.read_text().strip() or 0), marker.stat().st_mtime
            except (OSError, ValueError):
                size, used = _tree_bytes(tree), 0.0
            out.append(CachedTree(tree, size, used))
    return sorted(out, key=lambda t: t.used)


def evict_trees(settings: Settings, max_bytes: int, *, keep_recent_s: float = TREE_IN_USE_S) -> list[CachedTree]:
    """Delete least recently used trees until the cache holds under `max_bytes` (never one used in the last
    `keep_recent_s`: it may be under investigation); the trees deleted."""
    trees = cached_trees(settings)
    total = sum(t.size for t in trees)
    removed: list[CachedTree] = []
    now = time.time()
    for tree in trees:
        if total <= max_bytes:
            break
        if now - tree.used < keep_recent_s:
            continue
        remove_tree(tree.path)
        total -= tree.size
        removed.append(tree)
    return removed


def remove_tree(tree: Path) -> None:
    """Delete a read-only tree and its use record."""
    if tree.is_dir():
        _make_writable(tree)
        shutil.rmtree(tree, ignore_errors=True)
    _use_file(tree).unlink(missing_ok=True)


async def prepare_tree(settings: Settings, repo: RepoView, ref: str | None) -> PreparedTree:
    """`prepare_tree_sync` in a thread, one at a time per repository in this process."""
    lock = _locks.setdefault(repo.name, asyncio.Lock())
    async with lock:
        return await asyncio.to_thread(prepare_tree_sync, settings, repo, ref)


def checkout_root() -> Path:
    """The source checkout the service runs from."""
    return Path(__file__).resolve().parents[1]


def _owner_name(location: str) -> str | None:
    """`owner/name` from the last two parts of a URL, an scp-like address or a path; None when it has fewer."""
    if "://" not in location and ":" not in location:
        location = posixpath.normpath(location)  # a local path such as `/work/proj/.` (a clone of `.`)
    match = re.search(r"[/:]([^/:]+)/([^/]+?)(?:\.git)?/?$", location.rstrip("/"))
    return f"{match.group(1)}/{match.group(2)}" if match else None


def name_from_remote(path: Path, default: str = "bugsleuth/bugsleuth") -> str:
    """`owner/name` from the `origin` remote of a checkout, else `default`."""
    try:
        url = _git(["config", "--get", "remote.origin.url"], cwd=path)
    except (RepositoryError, OSError, subprocess.TimeoutExpired):
        return default
    return _owner_name(url) or default


def name_for_location(location: str) -> str:
    """A registry name guessed from a URL or path (`owner/name`), used when the operator gives none."""
    return _owner_name(location) or Path(location).name

"""The one gate in front of every reader of repository content: resolve the path, check its target, then read.

A file's name says nothing about what it holds: `app/settings.py` may be a symlink to `.env`, a directory
symlink may lead into `.ssh/`, a hard link may share the inode of a key file. Every reader (the repo-map walker
and tag extraction, the offline corpus, the four tools, the verifier, the dashboard's excerpts) therefore asks
`Gate.resolve` / `Gate.read_bytes`, which judge the path as spelled AND the real target: inside the root, not
denied, a regular file. A refusal is a `Refused` with a `reason` the walker records as a skip.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat as _stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from repomap.config import SECRET_DIRS, SECRET_FILE_GLOBS
from repomap.encoding import to_utf8
from schemas.text import unstorable_reason

__all__ = ("DENY_GLOBS", "DenyRules", "Gate", "Refusal", "Refused", "Resolved", "denied_files", "read_regular")

_WHY = "(secret files and .git internals are never shown)"

DENY_GLOBS: tuple[str, ...] = (*SECRET_FILE_GLOBS, *SECRET_DIRS, ".git")
"""File or directory names never indexed, shown, searched or read; a match on any path component withholds the
whole subtree. Matched case-insensitively. `.git` covers every git internal (objects, config with credentials)."""


class Refusal(StrEnum):
    """Why the gate refused a path (the values double as the walker's skip reasons)."""

    denied = "denied"
    """The path or its real target matches a deny rule (secret file, `.git` internals, a per-repository deny)."""
    symlink_escape = "symlink_escape"
    """The real target lies outside the repository."""
    symlink_loop = "symlink_loop"
    """Resolving the path loops."""
    broken_symlink = "broken_symlink"
    """The target does not exist."""
    not_regular = "not_regular"
    """A FIFO, socket or device file (reading a FIFO would block forever)."""
    unreadable = "unreadable"
    """Permission denied or another OS error."""


class Refused(Exception):
    """A path the gate will not let through; `str()` says why in words, `reason` says it as data."""

    def __init__(self, rel: str, reason: Refusal, detail: str) -> None:
        super().__init__(detail)
        self.rel = rel
        """The path as asked (repository-relative)."""
        self.reason = reason
        """Why, as a fixed value."""


_NAME_MEMO = 1 << 16
"""Path components whose deny verdict is remembered (directory names repeat on every path below them)."""


class DenyRules:
    """Which repository-relative paths are withheld: `DENY_GLOBS` plus per-repository `deny` patterns.

    A pattern without `/` matches any path component; one with `/` matches the whole path (and its subtree).
    """

    def __init__(self, deny: Sequence[str] = ()) -> None:
        self.deny: tuple[str, ...] = tuple(d.strip().strip("/") for d in deny if d.strip().strip("/"))
        """Per-repository patterns on top of `DENY_GLOBS`."""
        names = (*DENY_GLOBS, *(d for d in self.deny if "/" not in d))
        self._name_re = re.compile("|".join(fnmatch.translate(g.lower()) for g in names))
        self._path_globs = tuple(d.lower() for d in self.deny if "/" in d)
        self._names: dict[str, bool] = {}

    def denies_name(self, name: str) -> bool:
        """True when one path component (a file or directory name) is withheld wherever it appears."""
        hit = self._names.get(name)
        if hit is None:
            if len(self._names) >= _NAME_MEMO:
                self._names.clear()
            hit = self._names[name] = self._name_re.match(name.lower()) is not None
        return hit

    def denies(self, rel: str) -> bool:
        """True when a repository-relative path (judged by its spelling only) is withheld."""
        rel = rel.replace("\\", "/").strip("/")
        if not rel or rel == ".":
            return False
        if any(self.denies_name(part) for part in rel.split("/")):
            return True
        return self.denies_path(rel)

    def denies_path(self, rel: str) -> bool:
        """True when the whole path matches a per-repository pattern with a `/` (name patterns not checked)."""
        low = rel.lower()
        return any(fnmatch.fnmatchcase(low, g) or fnmatch.fnmatchcase(low, g + "/*") for g in self._path_globs)


@dataclass(frozen=True)
class Resolved:
    """A path the gate let through."""

    rel: str
    """The path as asked, normalized."""
    real: Path
    """The real (symlink-free) absolute path, inside the root."""
    real_rel: str
    """`real` relative to the root."""
    st: os.stat_result
    """Its stat (of the target)."""


class Gate:
    """Path checks for one tree. Cheap per file: a directory's real path is resolved once and cached, so a path
    without symlinks costs one `lstat`; a symlink (or a path under a followed directory symlink) is resolved."""

    def __init__(self, root: Path | str, *, deny: Sequence[str] | DenyRules = ()) -> None:
        self.root = Path(os.path.realpath(root))
        """The tree's root, symlinks resolved."""
        self.rules = deny if isinstance(deny, DenyRules) else DenyRules(deny)
        """The deny rules applied to spelled and real paths."""
        self._prefix = str(self.root).rstrip(os.sep) + os.sep
        self._dirs: dict[str, str] = {"": str(self.root)}
        self._denied_inodes: set[tuple[int, int]] | None = None

    def denies(self, rel: str) -> bool:
        """True when a path is withheld by its spelling alone (see `DenyRules.denies`)."""
        return self.rules.denies(rel)

    def relative(self, real: str) -> str:
        """The root-relative POSIX spelling of a real path inside the root (`.` for the root)."""
        if real == str(self.root):
            return "."
        return PurePosixPath(*Path(real[len(self._prefix):]).parts).as_posix()

    def _inside(self, real: str) -> bool:
        return real == str(self.root) or real.startswith(self._prefix)

    def _real_dir(self, reldir: str) -> str:
        """The real path of a directory of the tree (cached), or raise `Refused`."""
        hit = self._dirs.get(reldir)
        if hit is None:
            parent, _, name = reldir.rpartition("/")
            found = self._check_target(reldir, os.path.join(self._real_dir(parent), name))
            if isinstance(found, Refused):  # not cached: the caller may create the directory later
                raise found
            hit = self._dirs[reldir] = found[0]
        return hit

    def _check_target(self, rel: str, candidate: str) -> tuple[str, os.stat_result] | Refused:
        """(real path, its stat) of one entry whose directory is already real, or why not."""
        try:
            st = os.lstat(candidate)
            if not _stat.S_ISLNK(st.st_mode):
                return candidate, st
            real = os.path.realpath(candidate)
            if not self._inside(real):
                return Refused(rel, Refusal.symlink_escape, f"{rel!r} is a symlink that points outside the repository")
            if self.rules.denies(self.relative(real)):
                return Refused(rel, Refusal.denied, f"{rel!r} leads to a withheld file {_WHY}")
            return real, os.stat(real)
        except OSError as exc:
            return self._os_refusal(rel, exc)

    @staticmethod
    def _os_refusal(rel: str, exc: OSError) -> Refused:
        if isinstance(exc, FileNotFoundError | NotADirectoryError):
            return Refused(rel, Refusal.broken_symlink, f"{rel!r} does not exist")
        if exc.errno == 40:  # ELOOP
            return Refused(rel, Refusal.symlink_loop, f"{rel!r} is a symlink loop")
        return Refused(rel, Refusal.unreadable, f"{rel!r} cannot be opened ({exc.strerror})")

    def resolve(self, rel: str) -> Resolved:
        """Check a repository-relative POSIX path: its spelling (no `..`, not absolute, not denied), every symlink on
        the way, its real target (inside the root, not denied). Raises `Refused`; files and directories pass."""
        if rel.startswith("/") or ".." in rel.split("/"):
            raise Refused(rel, Refusal.symlink_escape, f"{rel!r} leads outside the repository")
        if why := unstorable_reason(rel):  # NUL or half a surrogate pair: no file's name holds one
            raise Refused(rel, Refusal.broken_symlink, f"{rel!r} does not exist: a path {why}")
        rel = rel.strip("/") or "."
        if rel == ".":
            return Resolved(".", self.root, ".", os.stat(self.root))
        if self.rules.denies(rel):
            raise Refused(rel, Refusal.denied, f"{rel!r} is withheld {_WHY}")
        parent, _, name = rel.rpartition("/")
        found = self._check_target(rel, os.path.join(self._real_dir(parent), name))
        if isinstance(found, Refused):
            raise found
        target, st = found
        if target == self._prefix + rel and _clean(rel):
            real_rel = rel  # no symlink on the way: the real path is the spelled one, judged above
        else:
            real_rel = self.relative(target)
            if self.rules.denies(real_rel):
                raise Refused(rel, Refusal.denied, f"{rel!r} leads to a withheld file {_WHY}")
        if not (_stat.S_ISREG(st.st_mode) or _stat.S_ISDIR(st.st_mode)):
            what = f"{rel!r} is {_kind(st.st_mode)}; only regular files and directories can be read"
            raise Refused(rel, Refusal.not_regular, what)
        if _stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and (st.st_dev, st.st_ino) in self.denied_inodes():
            raise Refused(rel, Refusal.denied, f"{rel!r} is a hard link to a withheld file")
        return Resolved(rel, Path(target), real_rel, st)

    def denied_inodes(self) -> set[tuple[int, int]]:
        """(device, inode) of every withheld file of the tree: a hard link shares them (walked once, on demand)."""
        if self._denied_inodes is None:
            found: set[tuple[int, int]] = set()
            for entry in denied_files(self.root, self.rules):
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                found.add((st.st_dev, st.st_ino))
            self._denied_inodes = found
        return self._denied_inodes

    def read_bytes(self, rel: str, *, max_bytes: int | None = None, head: int | None = None) -> bytes:
        """The bytes of a file the gate lets through (`resolve`), opened without following a last-moment symlink
        and without blocking on a FIFO swapped in. Raises `Refused` (too large: `unreadable` with the size)."""
        resolved = self.resolve(rel)
        if not _stat.S_ISREG(resolved.st.st_mode):
            raise Refused(rel, Refusal.not_regular, f"{rel!r} is a directory, not a file")
        return read_regular(resolved.real, rel=rel, max_bytes=max_bytes, head=head)


def denied_files(root: Path | str, rules: DenyRules, *, skip: frozenset[str] = frozenset(),
                 max_depth: int | None = None) -> Iterator[os.DirEntry]:
    """Every regular file of the tree the rules withhold (itself or a directory above it), symlinks not followed;
    directories named in `skip` are not entered, nor those deeper than `max_depth`."""
    stack: list[tuple[str, str, int, bool]] = [(str(root), "", 0, False)]
    while stack:
        absdir, reldir, depth, denied = stack.pop()
        try:
            with os.scandir(absdir) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            rel = f"{reldir}/{e.name}" if reldir else e.name
            is_denied = denied or rules.denies_name(e.name) or rules.denies_path(rel)
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name not in skip and (max_depth is None or depth < max_depth):
                        stack.append((e.path, rel, depth + 1, is_denied))
                elif is_denied and e.is_file(follow_symlinks=False):
                    yield e
            except OSError:
                continue


def read_regular(path: str | Path, *, rel: str, max_bytes: int | None = None, head: int | None = None,
                 follow: bool = False) -> bytes:
    """The bytes of a regular file (at most its first `head` bytes; UTF-8 for a UTF-16 file), opened without
    blocking (a FIFO never hangs the reader) and, unless `follow`, without following a symlink as the last
    component. Raises `Refused` (`not_regular`; `unreadable`, also for a file over `max_bytes`)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise Gate._os_refusal(rel, exc) from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not _stat.S_ISREG(st.st_mode):
            raise Refused(rel, Refusal.not_regular, f"{rel!r} is {_kind(st.st_mode)}")
        if max_bytes is not None and st.st_size > max_bytes:
            raise Refused(rel, Refusal.unreadable, f"{rel!r} is {st.st_size:,} bytes, over {max_bytes:,}")
        try:
            return to_utf8(fh.read() if head is None else fh.read(head))
        except OSError as exc:
            raise Gate._os_refusal(rel, exc) from None


def _clean(rel: str) -> bool:
    """True when `Gate.relative` would spell `rel` (stripped of outer slashes) unchanged: no empty or `.` part."""
    return "//" not in rel and rel != "." and not rel.startswith("./") and not rel.endswith("/.") and "/./" not in rel


def _kind(mode: int) -> str:
    if _stat.S_ISFIFO(mode):
        return "a FIFO"
    if _stat.S_ISSOCK(mode):
        return "a socket"
    if _stat.S_ISCHR(mode) or _stat.S_ISBLK(mode):
        return "a device file"
    return "not a regular file"

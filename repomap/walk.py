"""Which files of a tree are worth indexing: `.gitignore` (nested, git not needed), default excludes, size, binaries.

`IgnoreRules` is the one set of ignore rules in bugsleuth; the `list_dir` tool reuses it.
"""

from __future__ import annotations

import errno
import os
import re
import stat as _stat
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from repomap.config import MapConfig
from repomap.encoding import file_looks_binary
from repomap.gate import DenyRules, Gate, Refusal, Refused, read_regular
from repomap.gitignore import RuleGroup, compile_patterns

_MAX_RULES_BYTES = 1 << 20
"""Largest `.gitignore` read (a bigger one is ignored)."""


class SkipReason(StrEnum):
    """Why a file or directory was left out of the map."""

    ignored = "ignored"
    """Matched a `.gitignore` rule."""
    excluded = "excluded"
    """Matched the configured exclude list (vendored, generated, build output, lock file)."""
    too_large = "too_large"
    """Larger than `MapConfig.max_file_bytes`."""
    binary = "binary"
    """Has a NUL byte in its head."""
    unsupported = "unsupported"
    """No grammar for its extension."""
    symlink_loop = "symlink_loop"
    """A symlink leading back into a directory being walked."""
    symlink_escape = "symlink_escape"
    """A symlink pointing outside the repository."""
    broken_symlink = "broken_symlink"
    """A symlink whose target does not exist."""
    unreadable = "unreadable"
    """Permission denied or another OS error."""
    denied = "denied"
    """A secret or `.git` internal, by its name or (for a symlink or hard link) by its real target: never read."""
    not_regular = "not_regular"
    """A FIFO, socket or device file."""
    too_deep = "too_deep"
    """A directory deeper than `MapConfig.max_depth`."""
    bad_name = "bad_name"
    """A name no report can cite (`citable`): bytes that are not UTF-8, a control character (a newline would split
    the report's line, and no JSON or database text holds the undecodable bytes), a backtick (it ends the
    citation's code span) or a backslash."""


_BAD_NAME = re.compile(r"[\x00-\x08\x0a-\x1f\x7f`\\\udc80-\udcff]")
"""A control character (a tab aside), a backtick (which ends the code span a report cites a path in), a backslash
(which every reader of a cited path takes for a Windows separator) or an undecodable byte (`os.scandir` hands
those over as lone surrogates)."""
BAD_NAME_HOLDS = "a control character, a backtick, a backslash or bytes that are not UTF-8"
"""What an uncitable name holds, in the words the listing and the investigation's questions use."""


def citable(path: str) -> bool:
    """Whether a report can name this path: no control character but a tab, no backtick, no backslash, no
    undecodable byte."""
    return _BAD_NAME.search(path) is None


RACY_NS = 2_000_000_000
"""A file or directory modified this recently is not trusted by its stat: a later change within the clock's
granularity may leave its size and mtime as they are."""


@dataclass(frozen=True)
class WalkedFile:
    """One file that passed every rule."""

    path: str
    """Repository-relative POSIX path."""
    size: int
    """Size in bytes."""
    mtime_ns: int
    """Modification time, for the cheap "unchanged?" pre-check."""


@dataclass
class WalkResult:
    """The files to index, in path order, and how many entries were skipped for which reason."""

    files: list[WalkedFile] = field(default_factory=list)
    """Files that passed every rule, sorted by path."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Count of skipped entries per `SkipReason` value."""
    dirs: list[tuple[str, int, int]] = field(default_factory=list)
    """(absolute path, mtime_ns, ctime_ns) of every directory listed: unchanged, they hold the same entries."""
    too_large: list[str] = field(default_factory=list)
    """Files skipped as `too_large` (a size check, unlike every other skip, can change without a listing change)."""
    linked: bool = False
    """A symlink or a hard-linked file was met: the walk depends on more than these directories' listings."""
    attribute_dirs: list[str] = field(default_factory=list)
    """Directories (root-relative, "" for the root) whose listing holds a `.gitattributes`: a reader of the
    project's attributes opens these instead of probing every directory."""

    def skip(self, reason: SkipReason, n: int = 1) -> None:
        """Count `n` entries skipped for `reason`."""
        self.skipped[reason.value] = self.skipped.get(reason.value, 0) + n


def read_ignore_file(path: Path) -> list[str] | None:
    """The lines of an ignore file; [] when it is absent (or a broken link), None when it is there but not a
    readable regular file (a FIFO named `.gitignore`, a directory, too large...). Never blocks on a FIFO; the
    patterns are only matched, never shown."""
    try:
        data = read_regular(path, rel=str(path), max_bytes=_MAX_RULES_BYTES, follow=True)
    except Refused as refused:
        return [] if refused.reason is Refusal.broken_symlink else None
    return data.decode("utf-8-sig", errors="replace").splitlines()  # git skips a byte order mark too


class IgnoreRules:
    """Gitignore semantics for one tree: nested `.gitignore` files, `.git/info/exclude`, and the configured excludes.

    Works on plain directories (no git needed). `.git` is always ignored.
    """

    def __init__(self, root: Path | str, config: MapConfig | None = None) -> None:
        self.root = Path(root)
        self.config = config or MapConfig()
        self._exclude_dirs = frozenset(self.config.exclude_dirs) | {".git"}
        self._excludes = compile_patterns(self.config.file_patterns)
        self._dir_groups: dict[str, tuple[RuleGroup, ...]] = {}
        self._no_gitignore: set[str] = set()
        self.consulted: list[str] = []
        """Every ignore file looked for (read or found absent), absolute paths."""
        self.unreadable: list[str] = []
        """Ignore files that are not readable regular files (a FIFO named `.gitignore`...), root-relative: their
        rules are not applied, and a reader that would block on them (ripgrep) must not read them either."""

    def note_listing(self, reldir: str, names: list[str]) -> None:
        """Tell the rules what a directory holds, so one without a `.gitignore` is not probed for it."""
        if ".gitignore" not in names and reldir not in self._dir_groups:
            self._no_gitignore.add(reldir)

    def _read(self, path: Path) -> list[str]:
        self.consulted.append(str(path))
        lines = read_ignore_file(path)
        if lines is None:
            self.unreadable.append(os.path.relpath(path, self.root))
        return lines or []

    def groups_for(self, reldir: str) -> tuple[RuleGroup, ...]:
        """The gitignore rule groups in force inside directory `reldir` ("" for the root), outermost first."""
        cached = self._dir_groups.get(reldir)
        if cached is not None:
            return cached
        if not self.config.honour_gitignore:
            groups: tuple[RuleGroup, ...] = ()
        elif reldir == "":
            lines = self._read(self.root / ".git" / "info" / "exclude") + self._read(self.root / ".gitignore")
            groups = compile_patterns(lines, "")
        else:
            parent = reldir.rpartition("/")[0]
            groups = self.groups_for(parent)
            if reldir not in self._no_gitignore:
                groups += compile_patterns(self._read(self.root / reldir / ".gitignore"), reldir)
        self._dir_groups[reldir] = groups
        return groups

    def match(self, relpath: str, is_dir: bool) -> SkipReason | None:
        """Why this entry is skipped, judging only its own name (its parent directories are assumed walked)."""
        name = relpath.rpartition("/")[2]
        if is_dir and name in self._exclude_dirs:
            return SkipReason.excluded
        if name == ".git":
            return SkipReason.excluded
        for group in reversed(self._excludes):
            if group.matches(relpath, is_dir):
                if group.negate:
                    break
                return SkipReason.excluded
        parent = relpath.rpartition("/")[0]
        for group in reversed(self.groups_for(parent)):
            sub = relpath[len(group.base) + 1 :] if group.base else relpath
            if group.matches(sub, is_dir):
                return None if group.negate else SkipReason.ignored
        return None

    def is_ignored(self, relpath: str, is_dir: bool) -> bool:
        """True when `relpath` (repository-relative POSIX) or any of its parent directories is ignored or excluded."""
        relpath = relpath.strip("/")
        if relpath in ("", "."):
            return False
        parts = relpath.split("/")
        for i in range(1, len(parts)):
            if self.match("/".join(parts[:i]), True) is not None:
                return True
        return self.match(relpath, is_dir) is not None


def _extension(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


class MapCancelled(Exception):
    """The caller's cancel event was set while the map was being built (walk, read, parse or graph): no map."""


_CANCEL_CHECK_EVERY = 256
"""Entries between two looks at the cancel event (a look costs a lock; a directory entry far less)."""


@dataclass
class _Frame:
    """One directory on the walk's stack."""

    absdir: str
    reldir: str
    depth: int
    """0 for the root."""
    via_link: bool
    """Reached through a followed symlink, so its entries' real paths differ from their spelling."""
    ancestors: tuple[tuple[int, int], ...]
    """(device, inode) of the real directories from the root down to this one (symlink-loop detection)."""


def walk_files(
    root: Path | str,
    config: MapConfig | None = None,
    *,
    extensions: frozenset[str] | None = None,
    sniff: bool = True,
    rules: IgnoreRules | None = None,
    gate: Gate | None = None,
    cancel: threading.Event | None = None,
) -> WalkResult:
    """Every file under `root` that passes the ignore rules, the gate, the depth cap, size limit and binary sniff,
    sorted by path.

    Iterative (a directory 10,000 levels deep costs no stack); directories deeper than `config.max_depth` are
    skipped as `too_deep`. Symlinks (and paths under a followed directory symlink) are judged by their real target
    through `gate` (denied, escaping, looping, broken: each a recorded skip). `extensions` (lower-case, with the
    dot) keeps only those files; others count as `unsupported`. With `sniff=False` the binary check is left to
    the caller (who reads the file anyway). Raises `MapCancelled` once `cancel` is set.
    """
    config = config or MapConfig()
    root = Path(root)
    rules = rules or IgnoreRules(root, config)
    result = WalkResult()
    try:
        gate = gate or Gate(root, deny=config.deny)
        root_stat = os.stat(root)
    except OSError:
        result.skip(SkipReason.unreadable)
        return result
    deny = gate.rules
    stack = [_Frame(str(root), "", 0, False, ((root_stat.st_dev, root_stat.st_ino),))]
    seen = 0
    while stack:
        frame = stack.pop()
        try:
            dir_stat = os.stat(frame.absdir)
            result.dirs.append((frame.absdir, dir_stat.st_mtime_ns, dir_stat.st_ctime_ns))
            with os.scandir(frame.absdir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            result.skip(SkipReason.unreadable)
            result.linked = True  # may become readable without a listing change above it
            continue
        names = [e.name for e in entries]
        rules.note_listing(frame.reldir, names)
        if ".gitattributes" in names:
            result.attribute_dirs.append(frame.reldir)
        subdirs: list[_Frame] = []
        for entry in entries:
            seen += 1
            if cancel is not None and seen % _CANCEL_CHECK_EVERY == 0 and cancel.is_set():
                raise MapCancelled("cancelled while walking")
            rel = f"{frame.reldir}/{entry.name}" if frame.reldir else entry.name
            if entry.is_symlink():
                result.linked = True
            try:
                sub = _judge(entry, rel, frame, config, rules, gate, deny, result)
            except OSError:
                result.skip(SkipReason.unreadable)
                continue
            if sub is None:
                continue
            if sub is True:
                if not _keep_file(entry, rel, config, extensions, sniff, result):
                    continue
                st = entry.stat(follow_symlinks=True)
                result.linked = result.linked or st.st_nlink > 1
                result.files.append(WalkedFile(rel, st.st_size, st.st_mtime_ns))
                continue
            subdirs.append(sub)
        stack.extend(reversed(subdirs))
    result.files.sort(key=lambda f: f.path)
    return result


def _judge(entry: os.DirEntry, rel: str, frame: _Frame, config: MapConfig, rules: IgnoreRules, gate: Gate,
           deny: DenyRules, result: WalkResult) -> _Frame | bool | None:
    """One directory entry: a frame to walk, True for a file to consider, None when skipped (and counted)."""
    is_link = entry.is_symlink()
    if is_link and not config.follow_symlinks:
        return None
    if entry.name == ".git":  # always left out, by IgnoreRules too; not counted as a refused secret
        result.skip(SkipReason.excluded)
        return None
    if not citable(entry.name):
        result.skip(SkipReason.bad_name)
        return None
    if deny.denies_name(entry.name) or deny.denies_path(rel):
        result.skip(SkipReason.denied)
        return None
    try:
        st = entry.stat(follow_symlinks=True)
    except FileNotFoundError:
        result.skip(SkipReason.broken_symlink if is_link else SkipReason.unreadable)
        return None
    except OSError as exc:
        result.skip(SkipReason.symlink_loop if exc.errno == errno.ELOOP else SkipReason.unreadable)
        return None
    is_dir = _stat.S_ISDIR(st.st_mode)
    if not is_dir and not _stat.S_ISREG(st.st_mode):
        result.skip(SkipReason.not_regular)
        return None
    reason = rules.match(rel, is_dir)
    if reason is not None:
        result.skip(reason)
        return None
    if is_link or frame.via_link or (not is_dir and st.st_nlink > 1):
        try:
            gate.resolve(rel)
        except Refused as refused:
            result.skip(SkipReason(refused.reason.value))
            return None
    if not is_dir:
        return True
    key = (st.st_dev, st.st_ino)
    if key in frame.ancestors:
        result.skip(SkipReason.symlink_loop)
        return None
    if frame.depth + 1 > config.max_depth:
        result.skip(SkipReason.too_deep)
        return None
    return _Frame(entry.path, rel, frame.depth + 1, frame.via_link or is_link, (*frame.ancestors, key))


def _keep_file(entry: os.DirEntry, rel: str, config: MapConfig, extensions: frozenset[str] | None, sniff: bool,
               result: WalkResult) -> bool:
    if extensions is not None and _extension(entry.name) not in extensions:
        result.skip(SkipReason.unsupported)
        return False
    if entry.stat(follow_symlinks=True).st_size > config.max_file_bytes:
        result.skip(SkipReason.too_large)
        result.too_large.append(rel)
        return False
    if sniff and file_looks_binary(entry.path, config.sniff_bytes):
        result.skip(SkipReason.binary)
        return False
    return True

"""Which files of a tree are worth indexing: `.gitignore` (nested, git not needed), default excludes, size, binaries.

`IgnoreRules` is the one set of ignore rules in bugsleuth; the `list_dir` tool reuses it.
"""

from __future__ import annotations

import os
import re
import stat as _stat
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from repomap.config import MapConfig


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

    def skip(self, reason: SkipReason, n: int = 1) -> None:
        """Count `n` entries skipped for `reason`."""
        self.skipped[reason.value] = self.skipped.get(reason.value, 0) + n


@dataclass(frozen=True)
class _Group:
    """A run of gitignore rules of one polarity from one `.gitignore`, as (at most) two regexes.

    Only negation changes the outcome of "last match wins", so a run without a change of polarity can be
    tested as one alternation.
    """

    base: str
    any_re: re.Pattern[str] | None
    dir_re: re.Pattern[str] | None
    negate: bool

    def matches(self, sub: str, is_dir: bool) -> bool:
        """True when the path `sub` (relative to `base`) matches a rule of the run."""
        if self.any_re is not None and self.any_re.match(sub):
            return True
        return is_dir and self.dir_re is not None and self.dir_re.match(sub) is not None


def _translate(pattern: str) -> str:
    """Translate the glob part of one gitignore pattern (already stripped of `!`, anchors and `/`) to a regex."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                before_ok = i == 0 or pattern[i - 1] == "/"
                after = pattern[i + 2 : i + 3]
                if before_ok and after == "/":
                    out.append("(?:.*/)?")
                    i += 3
                    continue
                if before_ok and i + 2 == n:
                    out.append(".*")
                    i += 2
                    continue
                out.append("[^/]*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
                continue
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _parse_line(line: str) -> tuple[str, bool, bool] | None:
    """One gitignore line to (regex body, negate, dir_only), or None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    if not line or line.startswith("#"):
        return None
    stripped = line.rstrip(" ")
    if stripped != line and stripped.endswith("\\"):
        stripped += " "
    line = stripped
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = _translate(line)
    if not anchored:
        body = "(?:.*/)?" + body
    return body, negate, dir_only


def compile_patterns(lines: list[str] | tuple[str, ...], base: str = "") -> tuple[_Group, ...]:
    """Compile gitignore lines found in directory `base` (repository-relative, "" for the root)."""
    groups: list[_Group] = []
    any_run: list[str] = []
    dir_run: list[str] = []
    polarity: bool | None = None

    def flush() -> None:
        if polarity is None or not (any_run or dir_run):
            return
        any_re = re.compile("(?:" + "|".join(any_run) + r")\Z") if any_run else None
        dir_re = re.compile("(?:" + "|".join(dir_run) + r")\Z") if dir_run else None
        groups.append(_Group(base, any_re, dir_re, polarity))

    for raw in lines:
        parsed = _parse_line(raw)
        if parsed is None:
            continue
        body, negate, dir_only = parsed
        if polarity is not None and negate != polarity:
            flush()
            any_run, dir_run = [], []
        polarity = negate
        (dir_run if dir_only else any_run).append(body)
    flush()
    return tuple(groups)


class IgnoreRules:
    """Gitignore semantics for one tree: nested `.gitignore` files, `.git/info/exclude`, and the configured excludes.

    Works on plain directories (no git needed). `.git` is always ignored.
    """

    def __init__(self, root: Path | str, config: MapConfig | None = None) -> None:
        self.root = Path(root)
        self.config = config or MapConfig()
        self._exclude_dirs = frozenset(self.config.exclude_dirs) | {".git"}
        self._excludes = compile_patterns(self.config.file_patterns)
        self._dir_groups: dict[str, tuple[_Group, ...]] = {}
        self._no_gitignore: set[str] = set()

    def note_listing(self, reldir: str, names: list[str]) -> None:
        """Tell the rules what a directory holds, so one without a `.gitignore` is not probed for it."""
        if ".gitignore" not in names and reldir not in self._dir_groups:
            self._no_gitignore.add(reldir)

    def _read(self, path: Path) -> list[str]:
        try:
            return path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []

    def groups_for(self, reldir: str) -> tuple[_Group, ...]:
        """The gitignore rule groups in force inside directory `reldir` ("" for the root), outermost first."""
        cached = self._dir_groups.get(reldir)
        if cached is not None:
            return cached
        if not self.config.honour_gitignore:
            groups: tuple[_Group, ...] = ()
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


def _is_binary(path: Path, sniff_bytes: int) -> bool:
    with open(path, "rb") as fh:
        return b"\0" in fh.read(sniff_bytes)


def walk_files(
    root: Path | str,
    config: MapConfig | None = None,
    *,
    extensions: frozenset[str] | None = None,
    sniff: bool = True,
    rules: IgnoreRules | None = None,
) -> WalkResult:
    """Every file under `root` that passes the ignore rules, size limit and binary sniff, sorted by path.

    `extensions` (lower-case, with the dot) keeps only those files; others count as `unsupported`.
    With `sniff=False` the binary check is left to the caller (who reads the file anyway).
    """
    config = config or MapConfig()
    root = Path(root)
    rules = rules or IgnoreRules(root, config)
    result = WalkResult()
    try:
        root_real = os.path.realpath(root)
        root_stat = os.stat(root)
    except OSError:
        result.skip(SkipReason.unreadable)
        return result
    root_prefix = root_real.rstrip(os.sep) + os.sep
    max_bytes = config.max_file_bytes
    visiting: set[tuple[int, int]] = {(root_stat.st_dev, root_stat.st_ino)}

    def visit(absdir: str, reldir: str) -> None:
        try:
            with os.scandir(absdir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            result.skip(SkipReason.unreadable)
            return
        rules.note_listing(reldir, [e.name for e in entries])
        for entry in entries:
            rel = f"{reldir}/{entry.name}" if reldir else entry.name
            try:
                is_link = entry.is_symlink()
                if is_link and not config.follow_symlinks:
                    continue
                try:
                    st = entry.stat(follow_symlinks=True)
                except FileNotFoundError:
                    result.skip(SkipReason.broken_symlink if is_link else SkipReason.unreadable)
                    continue
                except OSError as exc:
                    is_loop = getattr(exc, "errno", None) == 40  # ELOOP
                    result.skip(SkipReason.symlink_loop if is_loop else SkipReason.unreadable)
                    continue
                is_dir = _stat.S_ISDIR(st.st_mode)
                if not is_dir and not _stat.S_ISREG(st.st_mode):
                    continue
                reason = rules.match(rel, is_dir)
                if reason is not None:
                    result.skip(reason)
                    continue
                if is_link:
                    real = os.path.realpath(entry.path)
                    if real != root_real and not real.startswith(root_prefix):
                        result.skip(SkipReason.symlink_escape)
                        continue
                if is_dir:
                    key = (st.st_dev, st.st_ino)
                    if key in visiting:
                        result.skip(SkipReason.symlink_loop)
                        continue
                    visiting.add(key)
                    visit(entry.path, rel)
                    visiting.discard(key)
                    continue
                if extensions is not None and _extension(entry.name) not in extensions:
                    result.skip(SkipReason.unsupported)
                    continue
                if st.st_size > max_bytes:
                    result.skip(SkipReason.too_large)
                    continue
                if sniff and _is_binary(Path(entry.path), config.sniff_bytes):
                    result.skip(SkipReason.binary)
                    continue
                result.files.append(WalkedFile(rel, st.st_size, st.st_mtime_ns))
            except OSError:
                result.skip(SkipReason.unreadable)

    visit(str(root), "")
    result.files.sort(key=lambda f: f.path)
    return result

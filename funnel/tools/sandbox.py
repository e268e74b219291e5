"""The security boundary of the four tools: every path is resolved against the repository root here.

The bug report is untrusted text and the model may be steered by it, so nothing a tool returns may come
from outside the repository, from `.git/` internals or from a secret file, whatever path spelling it asks for.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Literal

from funnel.errors import ToolError, UnrecoverableError, UserError
from funnel.limits import ToolLimits
from repomap.config import MAX_DEPTH, MapConfig
from repomap.encoding import file_looks_binary
from repomap.gate import DENY_GLOBS, Gate, Refusal, Refused
from repomap.walk import IgnoreRules, read_ignore_file, walk_files
from schemas.diagnosis import absolute_spelling

__all__ = ("SECRET_GLOBS", "Sandbox", "ToolLimits", "cap_bytes", "printable")

SECRET_GLOBS: tuple[str, ...] = DENY_GLOBS
"""File or directory names that are never shown, searched or read (`repomap.gate.DENY_GLOBS`, the one list)."""

_MAX_WALK_PATHS = 200_000

PathKind = Literal["file", "dir", "any"]


_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_PLACEHOLDER = re.compile(r"<[A-Za-z_ -]+>")
"""A template placeholder such as `<path>` (the report template's examples are written this way)."""


def printable(name: str) -> str:
    """A path or name with control characters (newlines included) shown as `\\xNN`, so no file name can
    forge extra lines in a tool's output."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", name)


def cap_bytes(text: str, limit: int, *, hint: str = "narrow the request") -> str:
    """Cut `text` to at most `limit` UTF-8 bytes (marker included), with an explicit marker saying how much was cut."""
    data = text.encode("utf-8", "surrogateescape")
    if len(data) <= limit:
        return text
    marker_room = 120
    keep = max(0, limit - marker_room)
    head = data[:keep].decode("utf-8", "ignore")
    cut = len(data) - len(head.encode("utf-8", "surrogateescape"))
    marker = f"\n...[output truncated: {cut:,} more bytes not shown; {hint}]"
    return _cap_bytes_hard(head + marker, limit)


def _cap_bytes_hard(text: str, limit: int) -> str:
    """Last-resort byte cut (used when even the marker would overflow a tiny limit)."""
    data = text.encode("utf-8", "surrogateescape")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


class Sandbox:
    """A read-only view of one repository tree: resolves paths, withholds secrets, refuses escapes.

    `deny` adds per-repository glob patterns to `SECRET_GLOBS`: a pattern without `/` matches any path
    component (like `SECRET_GLOBS`); a pattern with `/` matches the whole repository-relative path.
    """

    def __init__(self, root: str | os.PathLike[str], *, deny: Sequence[str] = (), limits: ToolLimits | None = None):
        if limits is not None and not isinstance(limits, ToolLimits):
            raise UserError(f"limits must be a ToolLimits, got {type(limits).__name__}")
        if isinstance(deny, str):
            raise UserError("deny must be a sequence of glob patterns, not a single string")
        root_path = Path(root)
        if not root_path.is_dir():
            raise UnrecoverableError(f"repository root {str(root_path)!r} does not exist or is not a directory")
        self.root: Path = Path(os.path.realpath(root_path))
        """The repository root, with symlinks resolved."""
        self.limits: ToolLimits = limits or ToolLimits()
        """Caps applied by every tool using this sandbox."""
        self.gate: Gate = Gate(self.root, deny=deny)
        """The gate every path goes through (the same one the repo map reads with)."""
        self.deny: tuple[str, ...] = self.gate.rules.deny
        """Per-repository deny patterns, added to `SECRET_GLOBS`."""
        self._walk_cache: list[str] | None = None
        self._unreadable: list[str] | None = None
        self._withheld: dict[str, bool] = {}

    # ---- secrets ---------------------------------------------------------------------------------

    def is_secret(self, rel: str) -> bool:
        """True when a repository-relative path is withheld (a secret file, `.git/` internals, or denied)."""
        return self.gate.denies(rel)

    def withholds(self, rel: str) -> bool:
        """True when a path found by a tool (e.g. a search hit) must not be shown: withheld by its name or refused by
        the gate for its real target (a symlink or hard link to a secret, a link out of the root). Cached."""
        hit = self._withheld.get(rel)
        if hit is None:
            try:
                self.gate.resolve(rel)
                hit = False
            except Refused:
                hit = True
            self._withheld[rel] = hit
        return hit

    @property
    def rg_exclude_globs(self) -> tuple[str, ...]:
        """Negative ripgrep globs that keep secrets out of a search before any result is filtered."""
        globs = [f"!{g}" for g in SECRET_GLOBS] + [f"!{d}" for d in self.deny]
        # ripgrep globs are case-sensitive: add the upper-case spelling of the common ones.
        globs += [f"!{g.upper()}" for g in SECRET_GLOBS if g.upper() != g]
        return tuple(globs)

    # ---- paths -----------------------------------------------------------------------------------

    def relative(self, path: Path) -> str:
        """The repository-relative POSIX spelling of an absolute path inside the root (`.` for the root)."""
        rel = os.path.relpath(path, self.root)
        return "." if rel == "." else PurePosixPath(*Path(rel).parts).as_posix()

    def normalize(self, path: str) -> str:
        """Lexically normalize a requested path to a repository-relative POSIX path, refusing escapes."""
        if not isinstance(path, str):
            raise ToolError(f"path must be a string, got {type(path).__name__}")
        if "\x00" in path:
            raise ToolError("Refused: the path contains a NUL byte. Give a plain repository-relative path.")
        raw = path.strip()
        spelled = raw.replace("\\", "/")
        if absolute_spelling(spelled):
            hint = self._absolute_hint(spelled)
            raise ToolError(
                f"Refused: {raw!r} is an absolute path. Paths are relative to the repository root "
                f"(e.g. 'src/module.py').{hint}"
            )
        parts: list[str] = []
        for part in spelled.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    raise ToolError(
                        f"Refused: {raw!r} leads outside the repository. Only files under the repository root "
                        "can be read; use list_dir('.') to see what is there."
                    )
                parts.pop()
                continue
            parts.append(part)
        return "/".join(parts) or "."

    def on_disk(self, rel: str) -> str:
        """A normalized path as the file system spells it: when it is not there as written, its other Unicode form
        (NFC or NFD) if that one is. A name committed from macOS is often decomposed (`cafe\u0301.py`), while a
        reader types it composed (`café.py`); the two look alike and name the same file to a person."""
        if rel.isascii() or os.path.lexists(self.root / rel):
            return rel
        for form in ("NFC", "NFD"):
            other = unicodedata.normalize(form, rel)
            if other != rel and os.path.lexists(self.root / other):
                return other
        return rel

    def resolve(self, path: str, *, kind: PathKind = "any") -> Path:
        """Resolve a requested path to a real path inside the root, or raise `ToolError` saying why not.

        Refuses absolute paths, `..` escapes, symlinks leading outside the root, NUL bytes, secrets,
        device files, FIFOs and sockets; `kind` also checks file-vs-directory.
        """
        rel = self.on_disk(self.normalize(path))
        if self.is_secret(rel):
            raise ToolError(f"Refused: {rel!r} is withheld (secret files and .git internals are never shown).")
        try:
            resolved = self.gate.resolve(rel)
        except Refused as refused:
            if refused.reason is Refusal.broken_symlink:
                raise ToolError(self._not_found_message(rel)) from None
            raise ToolError(f"Refused: {refused}.") from None
        real, st = resolved.real, resolved.st
        if kind == "file" and stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{rel!r} is a directory, not a file. Use list_dir to see its entries.")
        if kind == "dir" and not stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{rel!r} is a file, not a directory. Use read_range to read it.")
        return real

    def is_binary(self, path: Path) -> bool:
        """True when the file looks binary (a NUL byte in its first 8 KiB, UTF-16 text aside), the rule ripgrep uses
        too."""
        try:
            return file_looks_binary(path)
        except OSError:
            return True

    # ---- suggestions -----------------------------------------------------------------------------

    def known_paths(self) -> list[str]:
        """Every non-secret file and directory path under the root, per the repo map's ignore rules (cached)."""
        if self._walk_cache is None:
            walked = _walk_paths(self.root, limit=_MAX_WALK_PATHS, rules=IgnoreRules(self.root))
            self._walk_cache = [p for p in walked if not self.is_secret(p)]
        return self._walk_cache

    def unreadable_ignore_files(self) -> list[str]:
        """`.gitignore` files (and `.git/info/exclude`) that are not readable regular files: a FIFO would block
        ripgrep forever. Found once by a scan of the directories, far cheaper than the walk of `known_paths`;
        one under a git-ignored directory counts too."""
        if self._unreadable is None:
            self._unreadable = _unreadable_ignore_files(self.root)
        return self._unreadable

    def nearest_paths(self, rel: str, n: int = 5) -> list[str]:
        """The existing paths closest to a path that does not exist (same file name first, then similar spelling)."""
        paths = self.known_paths()
        name = rel.rsplit("/", 1)[-1].lower()
        same_name = [p for p in paths if p.rsplit("/", 1)[-1].lower() == name]
        same_name.sort(key=lambda p: -difflib.SequenceMatcher(None, rel, p).ratio())
        close = difflib.get_close_matches(rel, paths, n=n, cutoff=0.5)
        if len(close) < n:
            names = {}
            for p in paths:
                names.setdefault(p.rsplit("/", 1)[-1], p)
            close += [names[m] for m in difflib.get_close_matches(rel.rsplit("/", 1)[-1], list(names), n=n, cutoff=0.7)]
        return list(dict.fromkeys([*same_name, *close]))[:n]

    def _not_found_message(self, rel: str) -> str:
        if _PLACEHOLDER.search(rel):
            return (f"Refused: {rel!r} is a placeholder from the report template, not a file. Use a "
                    "repository-relative path you have seen in a tool result or the repository map "
                    "(list_dir('.') shows the top level).")  # fmt: skip
        nearest = self.nearest_paths(rel)
        if nearest:
            listing = "\n".join(f"  {p}" for p in nearest)
            return f"Not found: {rel!r} does not exist in the repository. Nearest existing paths:\n{listing}"
        return f"Not found: {rel!r} does not exist in the repository. Use list_dir('.') to see what is there."

    def _absolute_hint(self, spelled: str) -> str:
        root = self.root.as_posix()
        if spelled.startswith(root + "/"):
            return f" Did you mean {spelled[len(root) + 1:]!r}?"
        parts = [p for p in spelled.split("/") if p and p not in (".", "..")]
        known = set(self.known_paths())
        for i in range(1, len(parts)):
            tail = "/".join(parts[i:])
            if tail in known and not self.is_secret(tail):
                return f" Did you mean {tail!r}?"
        return ""


def _unreadable_ignore_files(root: Path) -> list[str]:
    """Root-relative `.gitignore` files (and `.git/info/exclude`) the walker's rules could not read, in every
    directory but `.git` and the configured excluded ones (no symlinked directory followed, the map's depth cap)."""
    skip = frozenset(MapConfig().exclude_dirs) | {".git"}
    exclude = os.path.join(root, ".git", "info", "exclude")
    candidates = [exclude] if os.path.lexists(exclude) else []
    stack: list[tuple[str, int]] = [(str(root), 0)]
    while stack:
        here, depth = stack.pop()
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    if entry.name == ".gitignore":
                        candidates.append(entry.path)
                    elif depth < MAX_DEPTH and entry.name not in skip and entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, depth + 1))
        except OSError:
            continue
    return sorted(os.path.relpath(path, root) for path in candidates if read_ignore_file(Path(path)) is None)


def _walk_paths(root: Path, *, limit: int, rules: IgnoreRules | None = None) -> list[str]:
    """Every file and directory path the repo map's walker keeps (any size, binaries too), for suggestions."""
    config = MapConfig(max_file_bytes=1 << 62)
    result = walk_files(root, config, sniff=False, rules=rules or IgnoreRules(root, config))
    files = [f.path for f in result.files[:limit]]
    dirs: set[str] = set()
    for p in files:
        parts = p.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    return sorted(dirs) + files

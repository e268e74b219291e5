"""The security boundary of the four tools: every path is resolved against the repository root here.

The bug report is untrusted text and the model may be steered by it, so nothing a tool returns may come
from outside the repository, from `.git/` internals or from a secret file, whatever path spelling it asks for.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from funnel.errors import ToolError, UnrecoverableError, UserError
from repomap.config import SECRET_DIRS, SECRET_FILE_GLOBS

__all__ = ("SECRET_GLOBS", "Sandbox", "ToolLimits", "cap_bytes", "printable")

SECRET_GLOBS: tuple[str, ...] = (*SECRET_FILE_GLOBS, *SECRET_DIRS, ".git")
"""File or directory names that are never shown, searched or read; a match on any path component withholds
the whole subtree. Matched case-insensitively. `.git` covers every git internal (objects, config, hooks)."""

_BINARY_SNIFF_BYTES = 8192
_MAX_WALK_PATHS = 200_000

PathKind = Literal["file", "dir", "any"]


@dataclass(frozen=True)
class ToolLimits:
    """Caps that keep every tool output small and every tool call short. Plain data, set per run."""

    max_output_bytes: int = 24_000
    """Hard cap on the UTF-8 size of any rendered tool output; the cut is marked explicitly."""
    read_max_lines: int = 200
    """Most lines one `read_range` call returns."""
    max_line_chars: int = 500
    """Longest line `read_range` shows before cutting it with a `...[truncated]` marker."""
    search_line_chars: int = 300
    """Longest line `search` shows (match or context) before cutting it."""
    search_max_results: int = 200
    """Ceiling on `max_results` whatever the caller asks for."""
    search_max_context: int = 10
    """Ceiling on context lines around each match."""
    search_timeout_s: float = 10.0
    """Ceiling on one search's wall time; ripgrep is killed when it runs over."""
    search_max_read_bytes: int = 64 * 1024 * 1024
    """Most bytes of ripgrep output read before it is killed (guards against million-line matches)."""
    list_max_entries: int = 200
    """Most entries one `list_dir` call shows."""
    list_max_depth: int = 5
    """Deepest `list_dir` may go."""
    symbol_max_results: int = 20
    """Most definitions one `find_symbol` call shows."""

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if not isinstance(value, int | float) or value <= 0:
                raise UserError(f"ToolLimits.{name} must be a positive number, got {value!r}")


_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


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
        self.deny: tuple[str, ...] = tuple(d.strip().strip("/") for d in deny if d.strip().strip("/"))
        """Per-repository deny patterns, added to `SECRET_GLOBS`."""
        self._name_globs = tuple(g.lower() for g in SECRET_GLOBS) + tuple(
            d.lower() for d in self.deny if "/" not in d
        )
        self._path_globs = tuple(d.lower() for d in self.deny if "/" in d)
        self._walk_cache: list[str] | None = None

    # ---- secrets ---------------------------------------------------------------------------------

    def is_secret(self, rel: str) -> bool:
        """True when a repository-relative path is withheld (a secret file, `.git/` internals, or denied)."""
        rel = rel.replace("\\", "/").strip("/")
        if not rel or rel == ".":
            return False
        low = rel.lower()
        for part in low.split("/"):
            if any(fnmatch.fnmatchcase(part, g) for g in self._name_globs):
                return True
        return any(fnmatch.fnmatchcase(low, g) or fnmatch.fnmatchcase(low, g + "/*") for g in self._path_globs)

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
        if spelled.startswith(("/", "~")) or (len(spelled) > 1 and spelled[1] == ":" and spelled[0].isalpha()):
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

    def resolve(self, path: str, *, kind: PathKind = "any") -> Path:
        """Resolve a requested path to a real path inside the root, or raise `ToolError` saying why not.

        Refuses absolute paths, `..` escapes, symlinks leading outside the root, NUL bytes, secrets,
        device files, FIFOs and sockets; `kind` also checks file-vs-directory.
        """
        rel = self.normalize(path)
        if self.is_secret(rel):
            raise ToolError(f"Refused: {rel!r} is withheld (secret files and .git internals are never shown).")
        candidate = self.root / rel if rel != "." else self.root
        real = Path(os.path.realpath(candidate))
        if real != self.root and self.root not in real.parents:
            raise ToolError(f"Refused: {rel!r} is a symlink that points outside the repository.")
        real_rel = self.relative(real)
        if self.is_secret(real_rel):
            raise ToolError(f"Refused: {rel!r} leads to a withheld file (secrets and .git internals are never shown).")
        try:
            st = os.stat(real)
        except FileNotFoundError:
            raise ToolError(self._not_found_message(rel)) from None
        except NotADirectoryError:
            raise ToolError(self._not_found_message(rel)) from None
        except OSError as exc:
            raise ToolError(f"Refused: {rel!r} cannot be opened ({exc.strerror}).") from None
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            what = (
                "a FIFO"
                if stat.S_ISFIFO(st.st_mode)
                else "a socket"
                if stat.S_ISSOCK(st.st_mode)
                else "a device file"
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "not a regular file"
            )
            raise ToolError(f"Refused: {rel!r} is {what}; only regular files and directories can be read.")
        if kind == "file" and stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{rel!r} is a directory, not a file. Use list_dir to see its entries.")
        if kind == "dir" and not stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{rel!r} is a file, not a directory. Use read_range to read it.")
        return real

    def is_binary(self, path: Path) -> bool:
        """True when the file looks binary (a NUL byte in its first 8 KiB), the rule ripgrep uses too."""
        try:
            with open(path, "rb") as f:
                return b"\x00" in f.read(_BINARY_SNIFF_BYTES)
        except OSError:
            return True

    # ---- suggestions -----------------------------------------------------------------------------

    def known_paths(self) -> list[str]:
        """Every non-secret file and directory path under the root, per the repo map's ignore rules (cached)."""
        if self._walk_cache is None:
            from funnel.tools._listing import walk_paths

            self._walk_cache = [p for p in walk_paths(self.root, limit=_MAX_WALK_PATHS) if not self.is_secret(p)]
        return self._walk_cache

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

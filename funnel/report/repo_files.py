"""File access for one verification: the sandbox's path rules, a small text cache, and where else a snippet is."""

from __future__ import annotations

import difflib
import os
import threading
from pathlib import Path

from funnel import tools
from funnel.errors import BugsleuthError, ToolError
from funnel.limits import VerifyLimits
from funnel.report.snippets import ELLIPSIS, find_snippet, snippet_chunks
from funnel.tools.sandbox import Sandbox
from repomap.gate import Refused

__all__ = ("RepoFiles", "nearest", "sandbox_for")


class RepoFiles:
    """File access for one verification: the sandbox's path rules plus a small text cache."""

    def __init__(self, root: Path, limits: VerifyLimits, sandbox: Sandbox | None):
        self.sb = sandbox or sandbox_for(root)
        self.limits = limits
        self._texts: dict[str, list[str] | None] = {}

    def spell(self, path: str) -> str:
        """A cited path respelled as repository-relative when it is an absolute path inside the root."""
        p = path.strip().strip("`'\"").removeprefix("file://").replace("\\", "/")
        root = self.sb.root.as_posix()
        if p.startswith(root + "/"):
            p = p[len(root) + 1 :]
        return p.removeprefix("./")

    def resolve(self, path: str) -> tuple[str | None, str | None]:
        """(normalized relative path, None) for a readable text file, else (None, why not)."""
        try:
            rel = self.sb.on_disk(self.sb.normalize(path))
            if not self.sb.is_secret(rel) and not os.path.lexists(self.sb.root / rel):
                # Checked here rather than by the sandbox, whose suggestions compare against every path.
                return None, f"Not found: {rel!r} does not exist in the repository.{self.suggest(rel)}"
            real = self.sb.resolve(rel, kind="file")
        except ToolError as e:
            return None, str(e)
        if self.sb.is_binary(real):
            return None, f"{rel!r} is a binary file; cite source code"
        return rel, None

    def suggest(self, rel: str) -> str:
        """` Nearest existing paths: ...` for a missing path: same file name elsewhere, else similar names nearby."""
        near = self.same_name(rel)[:3]
        if not near:
            parent = rel.rsplit("/", 1)[0] if "/" in rel else "."
            while parent != "." and not (self.sb.root / parent).is_dir():
                parent = parent.rsplit("/", 1)[0] if "/" in parent else "."
            try:
                names = sorted(
                    e.name for e in os.scandir(self.sb.root / parent) if e.is_file() and not self.sb.is_secret(e.name)
                )[:2000]
            except OSError:
                names = []
            prefix = "" if parent == "." else parent + "/"
            near = [prefix + n for n in difflib.get_close_matches(rel.rsplit("/", 1)[-1], names, n=3, cutoff=0.6)]
        return f" Nearest existing paths: {', '.join(near)}." if near else ""

    def lines(self, rel: str) -> list[str] | None:
        """The file's lines, or None when it is too large to check."""
        if rel not in self._texts:
            try:  # through the gate: a quoted snippet can never come from a withheld file
                data = self.sb.gate.read_bytes(rel, max_bytes=self.limits.max_file_bytes)
                self._texts[rel] = data.decode("utf-8", errors="replace").splitlines()
            except Refused:
                self._texts[rel] = None
        return self._texts[rel]

    def same_name(self, rel: str) -> list[str]:
        """Existing files with the same base name, those whose path ends with the cited path first."""
        name = rel.rsplit("/", 1)[-1]
        try:
            known = self.sb.known_paths()
        except (OSError, BugsleuthError):
            return []
        tail = "/" + rel.strip("/")
        same = [p for p in known if p.rsplit("/", 1)[-1] == name and (self.sb.root / p).is_file()]
        return sorted(same, key=lambda p: (not ("/" + p).endswith(tail), -_common_tail(p, rel), p))

    def grep(self, snippet: str) -> list[str]:
        """Files holding the snippet's longest line (ripgrep, bounded); empty when the search is unavailable."""
        chunks = snippet_chunks(snippet)
        raw = [ln.strip() for ln in snippet.split("\n") if ln.strip() and not ELLIPSIS.match(ln)]
        longest = max(raw, key=len, default="")
        if not chunks or len(longest) < 6:
            return []
        try:
            found = tools.search(self.sb, longest, fixed_strings=True, max_results=self.limits.max_candidates,
                           max_per_file=1, timeout_s=self.limits.search_timeout_s)  # fmt: skip
        except BugsleuthError:
            return []
        return list(dict.fromkeys(m.path for m in found.matches))

    def locate(self, snippet: str, hint: str, near: int | None = None) -> list[tuple[str, int, int]]:
        """Where else in the repository the snippet occurs: (path, first, last), nearest `near` within each file.

        Candidates are files with the cited base name and files ripgrep finds holding the snippet's longest
        line. When several hold it, those sharing the longest path tail with the citation win (`models/x.py`
        picks `pkg/models/x.py` over `other/x.py`): the citation then names the file, just too briefly.
        """
        limit = self.limits.max_candidates
        named = self.same_name(hint)
        candidates = list(dict.fromkeys([*named[:limit], *self.grep(snippet)]))[: 2 * limit]
        found = []
        for candidate in candidates:
            path, _problem = self.resolve(candidate)  # the same path rules as a cited path (no symlink escapes)
            if path is None:
                continue
            text = self.lines(path)
            if spans := find_snippet(text or [], snippet):
                found.append((path, *nearest(spans, near)))
        if len(found) > 1:  # keep those sharing the longest path tail with the citation, if any share one
            best = max(_common_tail(f[0], hint) for f in found)
            if best:
                found = [f for f in found if _common_tail(f[0], hint) == best]
        return found


def _common_tail(a: str, b: str) -> int:
    n = 0
    for x, y in zip(reversed(a.split("/")), reversed(b.split("/"))):
        if x != y:
            break
        n += 1
    return n


_SANDBOXES: dict[str, Sandbox] = {}
_SANDBOXES_LOCK = threading.Lock()
_MAX_SANDBOXES = 8


def sandbox_for(root: Path) -> Sandbox:
    """One sandbox per repository root, so its file listing (used for suggestions) is walked once per tree."""
    key = os.path.realpath(root)
    with _SANDBOXES_LOCK:
        sb = _SANDBOXES.pop(key, None)
    sb = sb or Sandbox(root)
    with _SANDBOXES_LOCK:
        _SANDBOXES[key] = sb
        while len(_SANDBOXES) > _MAX_SANDBOXES:
            _SANDBOXES.pop(next(iter(_SANDBOXES)))
    return sb


def nearest(spans: list[tuple[int, int]], start: int | None) -> tuple[int, int]:
    if start is None:
        return spans[0]
    return min(spans, key=lambda s: abs(s[0] - start))

"""`list_dir`: a depth-limited directory listing under the repo map's ignore rules."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from funnel.errors import ToolError
from funnel.tools.sandbox import Sandbox, cap_bytes, printable
from repomap.walk import BAD_NAME_HOLDS, IgnoreRules, citable

__all__ = ("EntryKind", "ListEntry", "ListResult", "list_dir")

EntryKind = Literal["file", "dir", "symlink"]


@dataclass
class ListEntry:
    """One entry of a listing."""

    path: str
    """Repository-relative POSIX path."""
    kind: EntryKind
    """`file`, `dir` or `symlink` (a symlink is never followed by `list_dir`)."""
    depth: int
    """1 for direct children of the listed directory."""
    size: int | None = None
    """Size in bytes of a file; None for directories, symlinks and withheld entries."""
    withheld: bool = False
    """A secret file: its name is shown so the model knows it exists, its contents never are."""
    target: str | None = None
    """Where a symlink points, repository-relative; `(outside the repository)` when it escapes."""
    omitted_children: int = 0
    """Entries inside this directory not shown because of the depth limit (0 when expanded)."""


@dataclass
class ListResult:
    """A directory listing, and what it left out."""

    path: str
    """The listed directory, repository-relative (`.` for the root)."""
    depth: int
    """How deep the listing goes."""
    entries: list[ListEntry]
    """Entries in walk order (directories expanded depth-first, names sorted, directories first)."""
    omitted: int = 0
    """Entries not shown because of the entry cap."""
    ignored: int = 0
    """Entries hidden by the ignore rules (`.gitignore`, vendored, build output, caches)."""
    bad_names: int = 0
    """Entries whose names no report can cite (`repomap.walk.citable`), left out as the map leaves them out."""
    max_output_bytes: int = 24_000
    """Byte cap applied by `render`."""

    def render(self) -> str:
        """The text the agent sees: an indented tree, sizes, withheld and symlink markers, then what was left out."""
        out = [f"{printable(self.path)}/ (depth {self.depth})" if self.path != "." else f"./ (depth {self.depth})"]
        for e in self.entries:
            indent = "  " * e.depth
            name = printable(e.path.rsplit("/", 1)[-1])
            if e.kind == "dir" and e.withheld:
                out.append(f"{indent}{name}/  [withheld: secret directory]")
            elif e.kind == "dir":
                more = f"  ({e.omitted_children} entries, not expanded)" if e.omitted_children else ""
                out.append(f"{indent}{name}/{more}")
            elif e.kind == "symlink":
                out.append(f"{indent}{name} -> {printable(e.target or '')}  [symlink]")
            elif e.withheld:
                out.append(f"{indent}{name}  [withheld: secret file]")
            else:
                out.append(f"{indent}{name}  {_size(e.size or 0)}")
        if not self.entries:
            out.append("  (empty)")
        notes = []
        if self.omitted:
            notes.append(f"{self.omitted} more entries not shown (cap reached); list a subdirectory instead")
        if self.ignored:
            notes.append(f"{self.ignored} entries hidden by ignore rules (.gitignore, vendored, build output)")
        if self.bad_names:
            notes.append(f"{self.bad_names} entries left out: their names hold {BAD_NAME_HOLDS}, so no report can "
                         "cite them")
        out += [f"[{n}]" for n in notes]
        return cap_bytes("\n".join(out), self.max_output_bytes, hint="list a subdirectory or a smaller depth")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def list_dir(sb: Sandbox, path: str = ".", depth: int = 1) -> ListResult:
    """Entries of a repository directory with kind and size, `depth` levels deep, under the repo map's ignore rules.

    `.git/` is left out; secret files are listed by name only, marked withheld; symlinks are shown, never
    followed. Raises `ToolError` for a missing, refused or non-directory path.
    """
    lim = sb.limits
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ToolError(f"depth must be an integer >= 1, got {depth!r}")
    depth = min(depth, lim.list_max_depth)
    real = sb.resolve(path, kind="dir")
    rel = sb.relative(real)
    rules = IgnoreRules(sb.root)
    entries: list[ListEntry] = []
    counters = {"omitted": 0, "ignored": 0, "bad_names": 0}

    def scan(absdir: Path, reldir: str, count: bool = True) -> list[os.DirEntry]:
        try:
            with os.scandir(absdir) as it:
                items = list(it)
        except OSError:
            return []
        kept = []
        for entry in items:
            erel = f"{reldir}/{entry.name}" if reldir != "." else entry.name
            if entry.name == ".git":
                continue
            if not citable(entry.name):  # left out of the map too
                counters["bad_names"] += count
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            # Secrets are listed as withheld even when the ignore rules exclude them (they do, by default).
            if not sb.is_secret(erel) and rules.match(erel, is_dir) is not None:
                counters["ignored"] += count
                continue
            kept.append(entry)
        kept.sort(key=lambda e: (not e.is_dir(follow_symlinks=False), e.name))
        return kept

    def visit(absdir: Path, reldir: str, level: int) -> None:
        for entry in scan(absdir, reldir):
            erel = f"{reldir}/{entry.name}" if reldir != "." else entry.name
            if len(entries) >= lim.list_max_entries:
                counters["omitted"] += 1
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                entries.append(ListEntry(erel, "symlink", level, target=_link_target(sb, Path(entry.path))))
            elif stat.S_ISDIR(st.st_mode):
                if sb.is_secret(erel):
                    entries.append(ListEntry(erel, "dir", level, withheld=True))
                    continue
                e = ListEntry(erel, "dir", level)
                entries.append(e)
                if level < depth:
                    visit(Path(entry.path), erel, level + 1)
                else:
                    e.omitted_children = len(scan(Path(entry.path), erel, count=False))
            elif stat.S_ISREG(st.st_mode):
                if sb.is_secret(erel) or (st.st_nlink > 1 and sb.withholds(erel)):  # a hard link to a secret
                    entries.append(ListEntry(erel, "file", level, withheld=True))
                else:
                    entries.append(ListEntry(erel, "file", level, size=st.st_size))
            # FIFOs, sockets and device files are not shown at all

    visit(real, rel, 1)
    return ListResult(rel, depth, entries, counters["omitted"], counters["ignored"], counters["bad_names"],
                      lim.max_output_bytes)


def _link_target(sb: Sandbox, link: Path) -> str:
    real = Path(os.path.realpath(link))
    if real != sb.root and sb.root not in real.parents:
        return "(outside the repository)"
    target = sb.relative(real)
    if sb.is_secret(target):
        return "(withheld)"
    return target if real.exists() else f"{target} (broken)"

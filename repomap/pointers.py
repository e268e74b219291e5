"""What a report points at in the code by itself, outside its stack traces: links to a line (a code host's
permalink, "line 77 of a/b.py") and source lines it quotes. `repomap.focus.Focus` carries both."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ("FILE_PATH", "NAME_CHARS", "CodeLink", "fold", "parse_links", "quoted_lines")

_SOURCE_EXT = frozenset(
    "py pyi pyx js jsx mjs cjs ts tsx go java kt kts scala rs c h cc cpp cxx hpp hh hxx rb php cs swift m mm lua pl "
    "sh vue".split()
)
"""Extensions of source files: what a link to a line can point into."""

# --- links to code lines (a code host's permalink, "line 77 of a/b.py") ---
NAME_CHARS = "0-9A-Za-z_\u00c0-\u024f"
"""The letters a name or a path is written with: ASCII and the Latin letters of European languages. A report in
Chinese, Japanese or Korean writes names straight against its own script (`一个serviceName，`, `discov.EtcdConf中没有`),
which Unicode's `\\w` and `\\b` would fuse into one word, so those scripts bound a name the way a space does."""
FILE_PATH = rf"((?:[{NAME_CHARS}.-]+/)*[{NAME_CHARS}-][{NAME_CHARS}.-]*\.[A-Za-z][A-Za-z0-9]{{0,4}})"
"""A file path as prose writes it (`a/b.py`), as one group; bound it with `NAME_CHARS` on either side."""
_URL = re.compile(r"https?://[^\s/]+/[^\s#]*#(?:L|lines-)\d[^\s]*")
"""A web address with a line anchor; `_permalink` reads it (two simple patterns: no backtracking over a long token)."""
_BLOB = re.compile(r"/(?:blob|blame|src)/[^/]+/")
_ANCHOR = re.compile(r"(?:L|lines-)(\d+)(?:-L?(\d+))?")
_LINE_OF = re.compile(rf"(?<![{NAME_CHARS}])line\s+#?(\d+)\s+(?:of|in)\s+(?:file\s+)?[`'\"]?{FILE_PATH}", re.I)
_FILE_LINE = re.compile(
    rf"(?<![{NAME_CHARS}/.-]){FILE_PATH}[`'\"]?(?:[,:]|\s+[-–—])?\s+(?:at\s+|on\s+)?line\s+#?(\d+)"
    rf"(?![{NAME_CHARS}])", re.I
)
_DIFF_FILE = re.compile(r"^--- (?:a/)?([^\s]+)[^\n]*\n\+\+\+ [^\n]*\n", re.M)
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@[^\n]*\n", re.M)

# --- source lines the report quotes ---
_QUOTE_MIN = 20
_STATEMENT = re.compile(r"[A-Za-z_]\w*\s*[(=.\[]")
_NOT_QUOTES = (">>>", "...", "$", "%", "#", "//", "/*", "*", "In [", "Out[", "from ", "import ", "use ", "Traceback")


def fold(text: str) -> str:
    """`text` with its runs of white space folded to one space and its ends trimmed: how a quoted or patched line is
    compared with the tree's lines."""
    return " ".join(text.split())


@dataclass(frozen=True)
class CodeLink:
    """A line of a file the report points at: a code host's permalink or "line N of path" in the prose."""

    path: str
    """File path as written (a permalink's path inside the repository)."""
    line: int
    """First line pointed at."""
    end_line: int | None = None
    """Last line of a range (`#L10-L20`), when written."""
    text: str = ""
    """The first line's own text, whitespace-folded, where the report gives it (a diff's removed line)."""
    added: tuple[str, ...] = ()
    """The lines a diff puts in place of these (or after this one), whitespace-folded."""
    inserts: bool = False
    """A diff adds lines after this one and removes none."""

    def names(self, path: str) -> bool:
        """Whether `path` is the file this link names: the same path, or one ending in it."""
        return path == self.path or path.endswith("/" + self.path.lstrip("/"))

    def line_in(self, source: str) -> int:
        """The line pointed at in the file's text `source`: `line`, or, when the report gave the line's text and
        `line` does not hold it (the patch was made on another version), the nearest line within 100 that does."""
        if not self.text or not source:
            return self.line
        lines = source.split("\n")
        for d in range(0, 101):
            for n in dict.fromkeys((self.line - d, self.line + d)):
                if 0 < n <= len(lines) and fold(lines[n - 1]) == self.text:
                    return n
        return self.line


def quoted_lines(blocks: Sequence[str], inline: Sequence[str]) -> tuple[str, ...]:
    """The lines of the report's code blocks (their frame lines already taken out) and inline code that read like a
    statement of source code (at least `_QUOTE_MIN` characters, a name followed by `(`, `=`, `.` or `[`), in written
    order: not a prompt (`>>>`, `$`), a comment or an import, which match where they are printed, not the code the
    report means."""
    lines = [ln for block in blocks for ln in block.split("\n")] + list(inline)
    out = (fold(ln) for ln in lines)
    kept = (q for q in out if len(q) >= _QUOTE_MIN and _STATEMENT.search(q) and not q.startswith(_NOT_QUOTES))
    return tuple(dict.fromkeys(kept))[:40]


def _permalink(url: str) -> CodeLink | None:
    """The file and lines of a code host's permalink: GitHub and GitLab (`/-/blob/`) with a `#L<n>` or `#L<n>-L<m>`
    anchor, Bitbucket's `#lines-<n>`; None for any other address."""
    head, _, anchor = url.partition("#")
    lines = _ANCHOR.match(anchor)
    where = _BLOB.search(head)
    path = head[where.end():].split("?", 1)[0].rstrip(")]>\"'`") if where else ""
    if lines is None or not path:
        return None
    return CodeLink(path, int(lines.group(1)), int(lines.group(2)) if lines.group(2) else None)


@dataclass
class _Run:
    """A run of a hunk's changed lines, as it is read."""

    start: int
    end: int
    text: str
    inserts: bool
    added: list[str]

    def link(self, path: str) -> CodeLink:
        return CodeLink(path, self.start, self.end if self.end != self.start else None, fold(self.text),
                        tuple(fold(a) for a in self.added if a.strip()), self.inserts)


def _hunk_links(path: str, first: int, body: str) -> list[CodeLink]:
    """The old file's lines a unified-diff hunk removes (a run of `-` lines), or the line an insertion follows,
    each with its text and what the patch puts there (`CodeLink.text`, `added`)."""
    out: list[CodeLink] = []
    line, run, before = first, None, ""
    for row in body.split("\n"):
        if row.startswith("-"):
            run = run or _Run(line, line, row[1:], False, [])
            run.end = line
            line += 1
        elif row.startswith("+"):
            run = run or _Run(max(line - 1, 1), max(line - 1, 1), before, True, [])
            run.added.append(row[1:])
        elif row.startswith("\\"):  # "\ No newline at end of file"
            continue
        elif row.startswith(" ") or not row:
            if run:
                out.append(run.link(path))
            run, before = None, row[1:]
            line += 1
        else:
            break
    if run:
        out.append(run.link(path))
    return out


def _diff_links(text: str) -> list[tuple[int, CodeLink]]:
    """Lines a unified diff in the report changes (`--- a/x.h` / `+++ b/x.h` / `@@ -184,7 +184,7 @@`): a reporter's
    patch points at the lines it removes as surely as a permalink does."""
    found: list[tuple[int, CodeLink]] = []
    files = list(_DIFF_FILE.finditer(text))
    for k, f in enumerate(files):
        end = files[k + 1].start() if k + 1 < len(files) else len(text)
        if f.group(1) == "/dev/null":
            continue
        hunks = list(_HUNK.finditer(text, f.end(), end))
        for n, h in enumerate(hunks):
            body = text[h.end(): hunks[n + 1].start() if n + 1 < len(hunks) else end]
            found.extend((h.start(), link) for link in _hunk_links(f.group(1), int(h.group(1)), body))
    return found


def parse_links(prose: str) -> tuple[CodeLink, ...]:
    """Lines of source files the report points at, in written order: permalinks
    (`https://host/o/r/blob/REF/a/b.py#L77-L80`) and prose ("line 77 of a/b.py", "a/b.py, line 77", "a/b.py - line
    77") and the lines a unified diff removes (a reporter's patch, of any file); a link written twice (also as a
    shorter path to the same line) is kept once. `prose` is the report without its stack-frame lines
    (`frames.strip_frames`)."""
    found: list[tuple[int, CodeLink]] = []
    for m in _URL.finditer(prose):
        link = _permalink(m.group(0))
        if link is not None:
            found.append((m.start(), link))
    for m in _LINE_OF.finditer(prose):
        found.append((m.start(), CodeLink(m.group(2), int(m.group(1)))))
    for m in _FILE_LINE.finditer(prose):
        found.append((m.start(), CodeLink(m.group(1), int(m.group(2)))))
    found = [(at, link) for at, link in found if link.path.rsplit(".", 1)[-1].lower() in _SOURCE_EXT]
    out: list[CodeLink] = []
    for _, link in sorted(found + _diff_links(prose), key=lambda item: item[0]):  # a patch names a file of any kind
        if not any(o.line == link.line and link.names(o.path) for o in out):
            out.append(link)
    return tuple(out)

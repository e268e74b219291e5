"""Reading `path:line` citations out of markdown text: the path-like tokens, their line suffixes, links and
backticked spans; the helpers behind `funnel.report._markdown` and `funnel.report.parse`."""

from __future__ import annotations

import re

from funnel.inline import CODE_SPAN, span_text

LANGS = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "cjs": "javascript", "jsx": "jsx",
    "ts": "typescript", "tsx": "tsx", "go": "go", "java": "java", "rs": "rust", "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "rb": "ruby", "kt": "kotlin",
    "cs": "csharp", "php": "php", "sh": "bash", "toml": "toml", "yaml": "yaml", "yml": "yaml", "json": "json",
}  # fmt: skip

# Citations are found in linear time: a path-like token first (a run of path characters, taken whole, never
# re-tried from inside), then its line suffix matched at the token's end. Backtracking regexes over prose went
# quadratic on long lines.
_TOKEN = re.compile(r"(?<![\w\u0300-\u036f.@+~/-])[\w\u0300-\u036f.@+~/-]+")
"""A path-like token; combining accents count as letters (a name committed from macOS is often decomposed)."""
RANGE_TO = r"(?:-|–|—|to|through|thru|\.\.)"
"""What stands between the two numbers of a line range written in words: a dash, `to`, `through`, `thru`, `..`."""
_SUFFIXES = (
    re.compile(r"#L(\d+)(?:C\d+)?(?:-L?(\d+))?"),
    re.compile(r":L?(\d+)(?::\d+)?(?:\s*(?:-|–|—)\s*L?(\d+))?"),
    re.compile(r"\s*(?:,|\(|:)?\s*(?:lines?|ll?\.|L)\s*~?\s*(\d+)(?:\s*(?:" + RANGE_TO + r"|:)\s*L?(\d+))?", re.I),
    re.compile(r"\((\d+)(?:,\s*\d+)?\)"),
)
_PAREN = _SUFFIXES[3]
"""`path(12)`, `path(12,5)`: how MSVC, the .NET compilers and Visual Studio print a location; a file's only, so that
`np.zeros(3)` is no citation."""
_CLOSE = re.compile(r"(?:`|\*\*|\*|\"|')(?=[:,(\s])")
"""A closing backtick, bold or quote between a path and its line (`` `a.py`:12 ``, `"a.py", line 12`); a file's
only, so that `` `Foo.bar` lines 3-4 `` is no citation of `Foo.bar`."""


_KNOWN_EXT = set(LANGS) | {
    "md", "rst", "txt", "cfg", "ini", "html", "htm", "css", "scss", "vue", "svelte", "sql", "swift", "m", "mm",
    "scala", "clj", "ex", "exs", "erl", "hs", "lua", "pl", "pm", "r", "dart", "gradle", "xml", "lock", "proto",
    "tf", "ipynb", "jl", "zig", "nim", "ml", "fs", "vb", "groovy", "pyx", "pxd", "f90", "cmake", "mk", "bzl",
    "jq", "cu", "cuh", "pxi", "yy", "el", "tcl",  # the repo map's text sources (its one-letter ones stay prose)
}  # fmt: skip


def _known_ext(name: str) -> bool:
    """Whether `name`'s last dotted part (the whole name when it has no dot) is an extension of source, markup or
    configuration (`_KNOWN_EXT`)."""
    return name.rsplit(".", 1)[-1].lower() in _KNOWN_EXT


def _pathlike(path: str) -> bool:
    """A directory in it, or a name with a known extension; a bare word that spells an extension (`go`, `c`, `pm`)
    is prose."""
    return "/" in path or known_ext(path)


_LINK = re.compile(r"\[([^\]\n]{0,1000})\]\(<?([^)\s>]{1,2000})>?(?:[ \t]+\"[^\"\n]{0,1000}\")?\)")
"""A markdown link, its label and target bounded (a reply of `[a](` repeated was read in quadratic time)."""


_CODE_URL = re.compile(
    r"https?://[^\s/]+/[^\s#?]{0,300}?/(?:blob|blame|src)/[^\s/#?]+/(?P<path>[^\s#?)\]>\"'`]+)(?:\?[^\s#)\]>\"'`]*)?"
    r"(?:#(?:L|lines-)(?P<start>\d+)(?:C\d+)?(?:[-:]L?(?P<end>\d+))?)?")
"""A code host's address of a file in the repository (GitHub, GitLab's `/-/blob/`, Bitbucket's `/src/`, Gitea), with
its line anchor when written; the revision is taken as one path segment (a commit, `main`). The part before
`/blob/` is bounded, so that a long run of addresses is read in linear time."""


def _repo_path(m: re.Match[str]) -> str:
    """The repository path (and `#L` lines) a code host's address names."""
    lines = f"#L{m.group('start')}" + (f"-L{m.group('end')}" if m.group("end") else "") if m.group("start") else ""
    return m.group("path") + lines


def delink(text: str) -> str:
    """Markdown links replaced by their target when it is a repository path (`[x](src/x.py#L3)`), else their label;
    a code host's address of a file (`https://github.com/o/r/blob/<rev>/src/x.py#L3`), linked or bare, replaced by
    the path and lines it names (`src/x.py#L3`)."""

    def keep(m: re.Match[str]) -> str:
        target = m.group(2).removeprefix("file://")
        if code := _CODE_URL.fullmatch(target):
            return _repo_path(code)
        return m.group(1) if re.match(r"^[a-z][a-z0-9+.-]*://|^mailto:|^#", target, re.I) else target

    text = _LINK.sub(keep, text) if "](" in text else text
    return _CODE_URL.sub(_repo_path, text) if "://" in text else text


Location = tuple[str, int | None, int | None]


def _scan(text: str) -> list[Location]:
    """Every citation in `text`, in order: (path, first line or None, last line or None)."""
    text = delink(text)
    found: list[Location] = []
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        path = token.rstrip(".-~@+")
        if not path or "//" in path or _looks_like_number(path) or path.startswith(("-", "+")):
            continue
        start = end = None
        if len(path) == len(token):  # a line suffix follows the path directly, or past a closing tick or quote
            close = _CLOSE.match(text, m.end())
            for at in (m.end(), close.end()) if close else (m.end(),):
                sm = next((sm for suffix in _SUFFIXES if (sm := suffix.match(text, at))), None)
                if sm and ((sm.re is not _PAREN and at == m.end()) or _pathlike(path)):
                    start, end = int(sm.group(1)), int(sm.group(2)) if sm.lastindex == 2 else None
                    break
        if not _pathlike(path) and (start is None or "." not in path.strip(".")):
            continue
        path = path.removeprefix("./")
        if start is not None and end is not None and end < start:
            start, end = end, start
        found.append((path, start, end if end is not None else start))
        if len(found) >= 200:
            break
    return found


def parse_location(text: str) -> Location | None:
    """The citation in `text`: the first `path:12`, `path:12-20`, `path#L12-L20` or `path, lines 12-20`, else the
    first bare path.

    A bare name counts only when it looks like a file (`a/b`, or a known extension), so `Config.load` is not
    taken for a path. Markdown links count by their target.
    """
    found = _scan(text)
    return next((f for f in found if f[1] is not None), found[0] if found else None)


def all_locations(text: str) -> list[Location]:
    """Every citation in a line of prose, in order."""
    return _scan(text.replace("`", " "))


def ticked_location(head: str) -> tuple[tuple[str, int | None, int | None] | None, str | None]:
    """The location cited in a list-item head, and the backticked text that holds it (if any)."""
    loc = parse_location(head)
    for tick in re.findall(r"`([^`]+)`", head):
        if whole := _whole_tick(tick, loc[0] if loc else None):
            return whole, tick
        if loc and (tl := parse_location(tick)) and tl[0] == loc[0]:
            return (tl if tl[1] is not None else loc), tick
    return loc, None


_WHOLE_TICK = re.compile(r"(?P<path>[^`\n]*?)(?::L?(?P<start>\d+)(?:\s*[-–—]\s*L?(?P<end>\d+))?)?")


def _whole_tick(tick: str, found: str | None) -> Location | None:
    """A backticked citation read whole when its path holds a character a path-like token stops at (a space, a
    colon, brackets and parentheses as in `app/(shop)/[id]/page.tsx`, `#`, `%`, quotes, an emoji), which cut the
    path where a citation is found token by token (`docs/User Guide.md:3-9` found as `docs/User` or `Guide.md`), or
    starts with `-` or `+`, which prose never cites (a diff's line, a bullet): only when the tick holds the path
    found, and its whole names one file with a known extension."""
    m = _WHOLE_TICK.fullmatch(tick.strip())
    if m is None or not (path := m.group("path").strip()) or path == found:
        return None
    if (found is not None and found not in path) or (_TOKEN.fullmatch(path) and path[0] not in "-+"):
        return None
    if not _known_ext(path):
        return None
    named = [t for t in _TOKEN.findall(path) if "." in t and _known_ext(t)]
    if len(named) != 1 or not path.endswith(named[0]):  # `a.py or b.py`, `a.py::f`: not one file
        return None
    start = int(m.group("start")) if m.group("start") else None
    end = int(m.group("end")) if m.group("end") else start
    return path.removeprefix("./"), start, (max(start, end) if start is not None and end is not None else end)


def known_ext(name: str) -> bool:
    """Whether a file name ends in an extension of source, markup or configuration (`orders.py`, not `and/or`)."""
    return "." in name.strip(".") and _known_ext(name)


def prose_locations(text: str) -> list[Location]:
    """Every citation in a text of prose, in order: a backticked one whose path holds a character the token scan
    stops at (a space: `docs/User Guide.md:3-9`) read whole, the rest token by token (`all_locations`)."""
    found: list[Location] = []
    at = 0
    for m in CODE_SPAN.finditer(text):
        if (whole := _whole_tick(span_text(m.group(2)), None)) is not None:
            found += all_locations(text[at : m.start()]) + [whole]
            at = m.end()
    return found + all_locations(text[at:])


def _looks_like_number(path: str) -> bool:
    return bool(re.fullmatch(r"[\d.]+", path)) or bool(re.fullmatch(r"v?\d+(\.\d+)+", path))

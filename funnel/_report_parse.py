"""String-level reading of markdown reports: sections, list items, fences and `path:line` citations.

The helpers behind `funnel.report_md.parse_report`; they build no models.
"""

from __future__ import annotations

import re

from schemas.enums import Role

LANGS = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "cjs": "javascript", "jsx": "jsx",
    "ts": "typescript", "tsx": "tsx", "go": "go", "java": "java", "rs": "rust", "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "rb": "ruby", "kt": "kotlin",
    "cs": "csharp", "php": "php", "sh": "bash", "toml": "toml", "yaml": "yaml", "yml": "yaml", "json": "json",
}  # fmt: skip


_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # order matters: "Fix complexity" is complexity, "Root cause analysis" is the root cause
    ("open_questions", ("open question", "questions", "unknowns", "unanswered")),
    ("confidence", ("confidence",)),
    ("complexity", ("complexity", "effort", "size of the fix")),
    ("risk", ("risk",)),
    ("root_cause", ("root cause", "cause", "analysis", "why", "evidence", "explanation")),
    ("affected_files", ("affected", "suspect", "location", "files", "relevant code", "culprit", "where")),
    ("proposed_changes", ("proposed", "change", "fix", "suggest", "remediation", "patch", "recommend", "solution")),
    ("summary", ("summary", "tl;dr", "tldr", "overview", "synopsis", "problem")),
)
REQUIRED = ("summary", "root_cause", "affected_files")

_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+#.-]*)[^`]*$")
ITEM = re.compile(r"^(\s*)(?:\d+[.)]|[-*+])\s+(.*)$")
_EMPTY_WORDS = {"none", "n/a", "na", "nothing", "-", "—", "no", "none.", "tbd", "unknown", "(none)", "none known"}

_PATH = r"(?P<path>(?:[A-Za-z]:)?[\w.@+~-]*(?:/[\w.@+~-]+)*\.[A-Za-z0-9_+-]{1,12}|(?:[\w.@+~-]+/)+[\w.@+~-]+)"
_NUM = r"(?P<start>\d+)(?:\s*(?:-|–|—|to|\.\.|:)\s*L?(?P<end>\d+))?"
_LOC_PATTERNS = (
    re.compile(_PATH + r"#L(?P<start>\d+)(?:C\d+)?(?:-L?(?P<end>\d+))?"),
    re.compile(_PATH + r"\s*(?:,|\(|:)?\s*(?:lines?|ll?\.|L)\s*" + _NUM + r"\)?", re.IGNORECASE),
    re.compile(_PATH + r":L?(?P<start>\d+)(?:(?::\d+)?\s*(?:-|–|—)\s*L?(?P<end>\d+))?"),
    re.compile(_PATH + r"(?![\w/])"),
)
ROLE = re.compile(r"\b(cause|symptom|related)\b", re.IGNORECASE)
_ROLE_ALIASES = {"root cause": Role.cause, "primary": Role.cause, "prime suspect": Role.cause, "context": Role.related}
LEVEL_ALIASES = {
    "complexity": {"trivial": "trivial", "tiny": "trivial", "one-line": "trivial", "simple": "small", "easy": "small",
                   "small": "small", "moderate": "medium", "medium": "medium", "large": "large", "big": "large",
                   "high": "large", "low": "small", "hard": "large", "complex": "large"},
    "risk": {"low": "low", "minimal": "low", "minor": "low", "medium": "medium", "moderate": "medium",
             "high": "high", "significant": "high", "severe": "high"},
}  # fmt: skip
CONFIDENCE_WORDS = {"very high": 0.9, "high": 0.8, "medium": 0.5, "moderate": 0.5, "low": 0.25, "very low": 0.1}


_KNOWN_EXT = set(LANGS) | {
    "md", "rst", "txt", "cfg", "ini", "html", "htm", "css", "scss", "vue", "svelte", "sql", "swift", "m", "mm",
    "scala", "clj", "ex", "exs", "erl", "hs", "lua", "pl", "pm", "r", "dart", "gradle", "xml", "lock", "proto",
    "tf", "ipynb", "jl", "zig", "nim", "ml", "fs", "vb", "groovy", "pyx", "pxd", "f90", "cmake", "mk", "bzl",
}  # fmt: skip


def _pathlike(path: str) -> bool:
    return "/" in path or path.rsplit(".", 1)[-1].lower() in _KNOWN_EXT


_LINK = re.compile(r"\[([^\]\n]*)\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")


def delink(text: str) -> str:
    """Markdown links replaced by their target when it is a repository path (`[x](src/x.py#L3)`), else their label."""

    def keep(m: re.Match[str]) -> str:
        target = m.group(2).removeprefix("file://")
        return m.group(1) if re.match(r"^[a-z][a-z0-9+.-]*://|^mailto:|^#", target, re.I) else target

    return _LINK.sub(keep, text) if "](" in text else text


def parse_location(text: str) -> tuple[str, int | None, int | None] | None:
    """Find the first `path:12`, `path:12-20`, `path#L12-L20` or `path, lines 12-20` citation in `text`.

    A bare name without lines counts only when it looks like a file (`a/b`, or a known extension), so
    `Config.load` is not taken for a path. Markdown links count by their target.
    """
    text = delink(text)
    best: tuple[int, str, int | None, int | None] | None = None
    for pattern in _LOC_PATTERNS:
        for m in pattern.finditer(text):
            path = m.group("path").rstrip(".,;:)]'\"").lstrip("(['\"")
            if not path or _looks_like_number(path) or "//" in text[max(0, m.start() - 3) : m.start() + 1]:
                continue  # a number, a version or part of a URL
            groups = m.groupdict()
            start = int(groups["start"]) if groups.get("start") else None
            end = int(groups["end"]) if groups.get("end") else None
            if not _pathlike(path) and (start is None or "." not in path):
                continue
            if best is None or m.start() < best[0] or (m.start() == best[0] and best[2] is None and start):
                best = (m.start(), path, start, end)
            break
    if best is None:
        return None
    _, path, start, end = best
    path = path.removeprefix("./")
    if start is not None and end is not None and end < start:
        start, end = end, start
    return path, start, end if end is not None else start


def all_locations(text: str) -> list[tuple[str, int | None, int | None]]:
    """Every citation in a line of prose, in order."""
    found = []
    rest = text.replace("`", " ")
    while (loc := parse_location(rest)) is not None and len(found) < 50:
        found.append(loc)
        cut = rest.find(loc[0])
        if cut < 0:
            break
        rest = rest[cut + len(loc[0]) :]
        rest = re.sub(r"^(?::L?\d+|#L\d+|[\s,(]*lines?\s*\d+)(?:[-–:]L?\d+)*", "", rest)
    return found


def ticked_location(head: str) -> tuple[tuple[str, int | None, int | None] | None, str | None]:
    """The location cited in a list-item head, and the backticked text that holds it (if any)."""
    loc = parse_location(head)
    if loc is None:
        return None, None
    for tick in re.findall(r"`([^`]+)`", head):
        if (tl := parse_location(tick)) and tl[0] == loc[0]:
            return (tl if tl[1] is not None else loc), tick
    return loc, None


def _looks_like_number(path: str) -> bool:
    return bool(re.fullmatch(r"[\d.]+", path)) or bool(re.fullmatch(r"v?\d+(\.\d+)+", path))


def _section_of(title: str) -> str | None:
    if (loc := parse_location(title)) and loc[1] is not None:
        return None  # `### 1. src/fix.py:10` is an item, not a section
    t = re.sub(r"[*_`:#]|^\s*\d+[.)]\s*", "", title).strip().lower()
    if len(t.split()) > 6:
        return None
    for name, words in _SECTIONS:
        if any(w in t for w in words):
            return name
    return None


_CANONICAL = {
    "summary": "summary", "root cause": "root_cause", "affected files": "affected_files",
    "proposed changes": "proposed_changes", "proposed change": "proposed_changes", "complexity": "complexity",
    "risk": "risk", "confidence": "confidence", "open questions": "open_questions",
}  # fmt: skip
_INLINE_BOLD = re.compile(r"^ {0,3}(?:\*\*|__)([^*_]{2,40}?)\s*:?\s*(?:\*\*|__)\s*:?\s*(.*)$")
_INLINE_PLAIN = re.compile(r"^ {0,3}([A-Za-z][A-Za-z ]{2,20}):\s*(.*)$")


def _pseudo_heading(line: str) -> tuple[str, str] | None:
    """`**Confidence:** 0.8`, `**Summary**` or `Risk: low` on a line of its own: (section, rest of line)."""
    if m := _INLINE_BOLD.match(line):
        if name := _section_of(m.group(1)):
            return name, m.group(2)
    if m := _INLINE_PLAIN.match(line):
        if name := _CANONICAL.get(m.group(1).strip().lower()):
            return name, m.group(2)
    return None


def closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) <= {fence[0]}


def split_sections(lines: list[str], notes: list[str]) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current: str | None = None
    current_level = 0
    fence: str | None = None

    def start(name: str, level: int) -> None:
        nonlocal current, current_level
        if sections.get(name):
            notes.append(f"section {name.replace('_', ' ')!r} appears twice; the parts were joined")
        sections.setdefault(name, [])
        current, current_level = name, level

    for line in lines:
        if fence is not None:
            fence = None if closes(line, fence) else fence
        elif opened := FENCE_OPEN.match(line):
            fence = opened.group(2)
        elif m := _HEADING.match(line):
            level, title = len(m.group(1)), m.group(2).strip()
            name = _section_of(title)
            if current and level > current_level and name in (None, current):
                sections[current].append(line)  # a sub-heading belongs to its section
                continue
            if name:
                start(name, level)
            else:
                if title and sections:
                    notes.append(f"ignored section {title[:60]!r}")
                current = None
            continue
        elif (pseudo := _pseudo_heading(line)) and pseudo[0] != current:
            start(pseudo[0], current_level if current else 6)
            if pseudo[1].strip():
                sections[pseudo[0]].append(pseudo[1])
            continue
        if current:
            sections[current].append(line)
    return sections


def is_empty(text: str) -> bool:
    return re.sub(r"[*_`.]", "", text.strip()).strip().lower() in _EMPTY_WORDS | {""}


def plain_text(lines: list[str]) -> str:
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    text = "\n\n".join(" ".join(p) for p in paragraphs if p)
    return "" if is_empty(text) else text


def list_items(lines: list[str], *, allow_loose: bool = False) -> list[tuple[str, list[str]]]:
    """Split section lines into (head, body lines) list items; fenced blocks stay inside their item."""
    items: list[tuple[str, list[str]]] = []
    base: int | None = None
    fence: str | None = None
    for line in lines:
        if fence is not None:
            if closes(line, fence):
                fence = None
            if items:
                items[-1][1].append(line)
            continue
        if opened := FENCE_OPEN.match(line):
            fence = opened.group(2)
            if items:
                items[-1][1].append(line)
            continue
        m = ITEM.match(line) or _HEADING.match(line)
        indent = len(line) - len(line.lstrip())
        if m and (base is None or indent <= base):
            base = indent if base is None else base
            items.append((m.group(2).strip(), []))
        elif allow_loose and base is None and line.strip() and indent == 0 and parse_location(line) is not None:
            items.append((line.strip(), []))
        elif items:
            items[-1][1].append(line)
    return items


def fenced_blocks(body: list[str]) -> list[tuple[str, str]]:
    """All fenced blocks in an item body as (language, text), dedented by the fence's own indentation."""
    blocks: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        m = FENCE_OPEN.match(body[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3)
        content: list[str] = []
        i += 1
        while i < len(body) and not closes(body[i], fence):
            line = body[i]
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            content.append(line[strip:])
            i += 1
        blocks.append((lang.lower(), "\n".join(content).rstrip("\n")))
        i += 1
    return blocks


def outside_fences(body: list[str]) -> list[str]:
    out: list[str] = []
    fence: str | None = None
    for line in body:
        if fence is not None:
            if closes(line, fence):
                fence = None
            continue
        if m := FENCE_OPEN.match(line):
            fence = m.group(2)
            continue
        out.append(line)
    return out


def symbol_in(head: str, loc_text: str | None) -> str | None:
    rest = head.replace(f"`{loc_text}`", " ", 1) if loc_text else head
    for tick in re.findall(r"`([^`]+)`", rest):
        tick = tick.strip()
        if parse_location(tick):
            continue
        name = re.sub(r"\(.*\)$", "", tick).strip()
        name = re.sub(r"^(def|class|function|func|fn|method)\s+", "", name)
        if re.fullmatch(r"[A-Za-z_$][\w$.:<>#~]*", name):
            return name.replace("::", ".").replace("#", ".")
    m = re.search(r"\b(?:in|function|method|class|symbol:?)\s+([A-Za-z_][\w.]*)\b", rest)
    if m and m.group(1).lower() not in {"the", "a", "an", "this", "that", "cause", "symptom", "related"}:
        return m.group(1)
    return None


def role_in(text: str) -> Role:
    lowered = text.lower()
    for alias, role in _ROLE_ALIASES.items():
        if alias in lowered:
            return role
    m = ROLE.search(text)
    return Role(m.group(1).lower()) if m else Role.cause


_FIELD = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(lines?|symbol|function|method|class|role|kind)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.+)$", re.I)
LINES_VALUE = re.compile(r"L?(\d+)(?:\s*(?:-|–|—|to|\.\.)\s*L?(\d+))?")


def item_fields(body: list[str]) -> dict[str, str]:
    """`**Lines:** 10-20`, `Symbol: foo`, `Role: cause` lines under an item (first of each kind)."""
    found: dict[str, str] = {}
    for line in outside_fences(body):
        if m := _FIELD.match(line):
            key = m.group(1).lower()
            key = "lines" if key.startswith("line") else "role" if key in {"role", "kind"} else "symbol"
            found.setdefault(key, m.group(2).strip())
    return found


def table_rows(lines: list[str]) -> list[list[str]] | None:
    """The body rows of a markdown table (header and rule dropped), or None when the section is not a table."""
    rows = [ln.strip() for ln in outside_fences(lines) if ln.strip().startswith("|")]
    if len(rows) < 3 or not re.fullmatch(r"\|?[\s:|-]+\|?", rows[1]):
        return None
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[2:]]


def bullets(lines: list[str]) -> list[str]:
    items = list_items(lines)
    if not items:
        text = plain_text(lines)
        return [text] if text else []
    out = []
    for head, body in items:
        text = " ".join([head, *(ln.strip() for ln in outside_fences(body) if ln.strip())]).strip()
        if text and not is_empty(text):
            out.append(text)
    return out


def unwrap_fence(lines: list[str]) -> list[str] | None:
    """A whole report wrapped in a ```markdown fence, as chat models like to write it, without the fence."""
    body = [ln for ln in lines]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    if not body or not (m := FENCE_OPEN.match(body[0])) or m.group(3).lower() not in {"", "markdown", "md", "text"}:
        return None
    body = body[1:]
    if body and closes(body[-1], m.group(2)):
        body = body[:-1]
    return body

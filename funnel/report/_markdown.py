"""String-level reading of markdown reports: sections, list items, fences and `path:line` citations.

The helpers behind `funnel.report.parse.parse_report`; they build no models.
"""

from __future__ import annotations

import re

from funnel.inline import code_spans
from funnel.report._locations import parse_location
from schemas.enums import Role



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

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")


def is_heading(line: str) -> bool:
    """Whether the line is an ATX heading (`## Summary`)."""
    return _heading(line) is not None


def _heading(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line, closing `#`s removed."""
    if not (m := _HEADING.match(line)):
        return None
    title = m.group(2).strip()
    bare = title.rstrip("#")
    if bare != title and (not bare or bare[-1] in " \t"):
        title = bare.strip()
    return len(m.group(1)), title
FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+#.-]*)[^`]*$")
ITEM = re.compile(r"^(\s*)(?:\d+[.)]|[-*+])\s+(.*)$")
_EMPTY_WORDS = {"none", "n/a", "na", "nothing", "-", "—", "no", "none.", "tbd", "unknown", "(none)", "none known"}

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
        elif heading := _heading(line):
            level, title = heading
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
        item = ITEM.match(line)
        head = item.group(2) if item else (h[1] if (h := _heading(line)) else None)
        indent = len(line) - len(line.lstrip())
        if head is not None and (base is None or indent <= base):
            base = indent if base is None else base
            items.append((head.strip(), []))
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


def _clean_symbol(text: str) -> str | None:
    name = text.strip()
    if name.endswith(")"):
        name = name.split("(", 1)[0].strip()
    name = re.sub(r"^(def|class|function|func|fn|method)\s+", "", name)
    if re.fullmatch(r"[A-Za-z_$][\w$.:<>#~]*", re.sub(r"`[^`\s]+`", "x", name)):  # `default`: an escaped identifier
        return name.replace("::", ".").replace("#", ".").strip(".")
    return None


def symbol_in(head: str, loc_text: str | None) -> str | None:
    """The function or class named in a list-item head (a backticked name, `in foo`, `path.py::Class::method`)."""
    if node := re.search(r"\.\w{1,12}::([\w:.]+)", head):  # a pytest-style node id
        return _clean_symbol(node.group(1))
    rest = head.replace(f"`{loc_text}`", " ", 1) if loc_text else head
    for tick in code_spans(rest):
        if parse_location(tick):
            continue
        if name := _clean_symbol(tick):
            return name
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

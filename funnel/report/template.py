"""The markdown report: the one fixed template every explorer writes, and its lenient parser.

Any explorer (a PydanticAI agent on any provider, an external CLI agent, the offline investigator) ends
with a markdown report in this template; `parse_report` turns it into a `ReportDraft` (unvalidated), the
validator in `funnel.verify` checks it against the repository, and `render_report` writes it back.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from funnel.report._markdown import (
    CONFIDENCE_WORDS,
    FENCE_OPEN,
    ITEM,
    LANGS,
    LEVEL_ALIASES,
    LINES_VALUE,
    REQUIRED,
    ROLE,
    all_locations,
    bullets,
    closes,
    fenced_blocks,
    is_empty,
    item_fields,
    list_items,
    outside_fences,
    parse_location,
    plain_text,
    role_in,
    split_sections,
    symbol_in,
    table_rows,
    ticked_location,
    unwrap_fence,
)
from schemas.diagnosis import Diagnosis
from schemas.enums import Complexity, Risk, Role

__all__ = (
    "REPORT_TEMPLATE",
    "DraftAffectedFile",
    "DraftChange",
    "DraftRating",
    "DraftRootCause",
    "ReportDraft",
    "parse_report",
    "render_report",
    "format_location",
    "parse_location",
)

REPORT_TEMPLATE = """\
## Summary
One or two sentences: what is wrong, as the user sees it.

## Root cause
Why it happens, in plain words.

- Evidence: an observation from the code, citing `path/to/file.py:120`.
- Evidence: another observation.

## Affected files
1. `path/to/file.py:120-134` — `Class.method` (cause)
   ```python
   the lines 120-134 quoted exactly as read
   ```
2. `path/to/other.py:40-41` — `helper` (symptom)
   ```python
   the quoted lines
   ```

## Proposed changes
- `path/to/file.py` — `Class.method`: what to change and why.
  ```diff
  - old line
  + new line
  ```

## Complexity
small — one function, no API change.

## Risk
low — the change is local and covered by tests.

## Confidence
0.7

## Open questions
- Anything only the reporter can answer.
"""
"""The template shown to explorers: fixed headings, ranked `path:start-end` citations with a role and a quoted
snippet, levels `trivial|small|medium|large` and `low|medium|high`, confidence between 0.0 and 1.0."""


class _Draft(BaseModel):
    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)


class DraftRootCause(_Draft):
    """The root-cause section as written."""

    explanation: str = ""
    """Why the bug happens, in plain words."""
    evidence: list[str] = Field(default_factory=list)
    """Supporting observations, each short, citing `path:line` where possible."""


class DraftAffectedFile(_Draft):
    """One cited location as written; lines may be missing and nothing is checked yet."""

    path: str = ""
    """Repository-relative path exactly as cited."""
    line_start: int | None = None
    """First cited line (1-based), if any."""
    line_end: int | None = None
    """Last cited line (1-based), if any."""
    symbol: str | None = None
    """Enclosing function or class (`Class.method`), if named."""
    role: Role = Role.cause
    """What this location contributes: cause, symptom or related."""
    evidence: str = ""
    """The snippet quoted from the cited lines, verbatim."""


class DraftChange(_Draft):
    """One proposed change as written."""

    path: str = ""
    """File to change."""
    symbol: str | None = None
    """Function or class to change."""
    description: str = ""
    """What to change and why."""
    diff: str | None = None
    """Optional unified-diff sketch."""


class DraftRating(_Draft):
    """A complexity or risk level with its reason, as written."""

    level: str | None = None
    """The level word (`trivial|small|medium|large` for complexity, `low|medium|high` for risk)."""
    reason: str = ""
    """Why this level."""


class ReportDraft(_Draft):
    """The content of a markdown report, mirroring `Diagnosis` but not yet checked against the repository."""

    summary: str = ""
    """One or two sentences on what is wrong."""
    root_cause: DraftRootCause = Field(default_factory=DraftRootCause)
    """Root-cause explanation and evidence."""
    affected_files: list[DraftAffectedFile] = Field(default_factory=list)
    """Ranked cited locations, prime suspect first."""
    proposed_changes: list[DraftChange] = Field(default_factory=list)
    """Suggested changes for a person."""
    complexity: DraftRating | None = None
    """Size of the fix."""
    risk: DraftRating | None = None
    """Risk of the fix."""
    confidence: float | None = None
    """Confidence in the root cause, 0.0 to 1.0."""
    open_questions: list[str] = Field(default_factory=list)
    """What only the reporter can answer."""
    notes: list[str] = Field(default_factory=list)
    """What the parser could not read (missing sections, unreadable values); leave empty when filling by hand."""

    def is_empty(self) -> bool:
        """True when nothing usable was found."""
        return not (
            self.summary
            or self.root_cause.explanation
            or self.root_cause.evidence
            or self.affected_files
            or self.proposed_changes
        )


# --------------------------------------------------------------------------------------------------- rendering

def _lang(path: str) -> str:
    return LANGS.get(path.rsplit(".", 1)[-1].lower(), "") if "." in path else ""


def _fence(text: str, lang: str, indent: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    body = "\n".join((indent + line) if line else "" for line in text.rstrip("\n").split("\n"))
    return f"{indent}{ticks}{lang}\n{body}\n{indent}{ticks}"


def format_location(path: str, line_start: int | None, line_end: int | None) -> str:
    """`path:start-end`, `path:line` or `path`, as the template cites locations."""
    if line_start is None:
        return path
    if line_end is None or line_end == line_start:
        return f"{path}:{line_start}"
    return f"{path}:{line_start}-{line_end}"


def _level(rating: object) -> tuple[str | None, str]:
    if rating is None:
        return None, ""
    level = getattr(rating, "level", None)
    return (str(level) if level is not None else None), getattr(rating, "reason", "") or ""


_LEADING_MARKER = re.compile(r"^(\s*)(\d+[.)]\s|[-*+]\s)", re.M)
"""A line of the explanation that would read back as a list item (the root cause's evidence bullets)."""
_ESCAPED_MARKER = re.compile(r"^(\s*)\\(\d+[.)]\s|[-*+]\s)")


def render_report(report: Diagnosis | ReportDraft) -> str:
    """Write a diagnosis or a draft in the fixed markdown template (`parse_report` reads it back unchanged)."""
    none = "_None._"
    out: list[str] = ["## Summary", report.summary.strip() or none, "", "## Root cause"]
    rc = report.root_cause
    explanation = _LEADING_MARKER.sub(r"\1\\\2", (rc.explanation if rc else "").strip())
    evidence = list(rc.evidence) if rc else []
    out.append(explanation or none)
    if evidence:
        out.append("")
        out.extend(f"- {' '.join(item.split())}" for item in evidence)
    out += ["", "## Affected files"]
    if not report.affected_files:
        out.append(none)
    for n, item in enumerate(report.affected_files, 1):
        line = f"{n}. `{format_location(item.path, item.line_start, item.line_end)}`"
        if item.symbol:
            line += f" — `{item.symbol}`"
        out.append(f"{line} ({item.role})")
        if item.evidence.strip():
            out.append(_fence(item.evidence, _lang(item.path), " " * (len(str(n)) + 2)))
    out += ["", "## Proposed changes"]
    if not report.proposed_changes:
        out.append(none)
    for change in report.proposed_changes:
        head = f"- `{change.path}`"
        if change.symbol:
            head += f" — `{change.symbol}`"
        out.append(f"{head}: {' '.join(change.description.split())}")
        if change.diff and change.diff.strip():
            out.append(_fence(change.diff, "diff", "  "))
    for title, rating in (("Complexity", report.complexity), ("Risk", report.risk)):
        level, reason = _level(rating)
        out += ["", f"## {title}"]
        if level is None:
            out.append(none)
        else:
            out.append(f"{level} — {' '.join(reason.split())}" if reason.strip() else level)
    confidence = report.confidence
    out += ["", "## Confidence", none if confidence is None else f"{confidence:.2f}"]
    out += ["", "## Open questions"]
    out.extend(f"- {' '.join(q.split())}" for q in report.open_questions) if report.open_questions else out.append(none)
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------------- parsing


_LINES_WORD = re.compile(r"\blines?\s*(\d+)(?:\s*(?:-|–|—|to)\s*(\d+))?", re.I)


def _from_table(rows: list[list[str]]) -> list[DraftAffectedFile]:
    found = []
    for cells in rows:
        loc = next((parse_location(c) for c in cells if parse_location(c)), None)
        if loc is None:
            continue
        path, start, end = loc
        rest = [c for c in cells if not parse_location(c)]
        if start is None and (m := next((LINES_VALUE.fullmatch(c.strip("` ")) for c in rest if LINES_VALUE.fullmatch(c.strip("` "))), None)):
            start, end = int(m.group(1)), int(m.group(2) or m.group(1))
        symbol = next((s for c in rest if (s := symbol_in(c, None))), None)
        role = next((role_in(c) for c in rest if ROLE.search(c)), Role.cause)
        found.append(DraftAffectedFile(path=path, line_start=start, line_end=end, symbol=symbol, role=role))
    return found


def _affected(lines: list[str], notes: list[str]) -> list[DraftAffectedFile]:
    if (rows := table_rows(lines)) is not None:
        return _from_table(rows)
    found: list[DraftAffectedFile] = []
    for head, body in list_items(lines, allow_loose=True):
        loc, loc_text = ticked_location(head)
        if loc is None:
            if not is_empty(head):
                notes.append(f"affected file without a path: {head[:80]!r}")
            continue
        path, start, end = loc
        fields = item_fields(body)
        if start is None and (m := LINES_VALUE.search(fields.get("lines", ""))):
            start, end = int(m.group(1)), int(m.group(2) or m.group(1))
        if start is None and (m := _LINES_WORD.search(head)):  # "`pkg/a.py::f` lines 12-15"
            start, end = int(m.group(1)), int(m.group(2) or m.group(1))
        blocks = [text for lang, text in fenced_blocks(body) if lang not in {"diff", "patch"}]
        evidence = blocks[0] if blocks else ""
        if not evidence:
            quoted = [ln.strip()[1:].removeprefix(" ") for ln in body if ln.strip().startswith(">")]
            evidence = "\n".join(quoted)
        symbol = symbol_in(head, loc_text) or (symbol_in(fields["symbol"], None) if "symbol" in fields else None)
        role_text = head.replace(loc_text or "", "")
        role = role_in(fields["role"]) if "role" in fields and not ROLE.search(role_text) else role_in(role_text)
        found.append(
            DraftAffectedFile(path=path, line_start=start, line_end=end, symbol=symbol, role=role, evidence=evidence)
        )
    return found


def _changes(lines: list[str], notes: list[str]) -> list[DraftChange]:
    changes: list[DraftChange] = []
    items = list_items(lines)
    if not items and any(ln.strip() for ln in lines):
        items = [("", lines)]
    for head, body in items:
        loc, loc_text = ticked_location(head)
        blocks = fenced_blocks(body)
        diff = next((t for lang, t in blocks if lang in {"diff", "patch"} or re.search(r"^(@@|---|\+\+\+)", t, re.M)), None)
        path = loc[0] if loc else ""
        if not path and diff and (m := re.search(r"^\+\+\+ (?:b/)?(\S+)", diff, re.M)):
            path = m.group(1)
        symbol = symbol_in(head, loc_text)
        description = head
        if loc_text:  # drop a leading "`path` — `symbol`:" prefix, keep mentions inside the sentence
            prefix = rf"^\s*`{re.escape(loc_text)}`\s*(?:[—–-]+\s*`{re.escape(symbol or '')}(?:\(\))?`)?\s*[:—–-]*\s*"
            description = re.sub(prefix, "", description, count=1)
        extra = plain_text(outside_fences(body))
        description = " ".join(x for x in (description, extra) if x).strip()
        if not path and not description:
            continue
        if not path:
            notes.append(f"proposed change without a path: {description[:80]!r}")
        changes.append(DraftChange(path=path, symbol=symbol, description=description or "(no description)", diff=diff))
    return changes


def _rating(lines: list[str], kind: str, notes: list[str]) -> DraftRating | None:
    text = plain_text(lines)
    if not text:
        return None
    aliases = LEVEL_ALIASES[kind]
    m = re.search(r"\b(" + "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True)) + r")\b", text, re.I)
    if not m:
        notes.append(f"{kind}: no level found in {text[:60]!r}")
        return DraftRating(level=None, reason=text)
    reason = text[m.end() :]
    reason = re.sub(r"^[\s*_`)\].]*(?:[—–:,-]|\.\s)?\s*", "", reason).strip()
    reason = re.sub(r"^(?:reason|because)\s*:?\s*", "", reason, flags=re.I).strip()
    return DraftRating(level=aliases[m.group(1).lower()], reason=reason)


def _confidence(lines: list[str], notes: list[str]) -> float | None:
    text = plain_text(lines)
    if not text:
        return None
    if m := re.search(r"(?<![\w.])(\d+(?:\.\d+)?|\.\d+)\s*(%|/\s*10\b|/\s*100\b)?", text):
        value = float(m.group(1))
        unit = (m.group(2) or "").replace(" ", "")
        if unit == "%" or unit == "/100" or (not unit and 1 < value <= 100):
            value /= 100
        elif unit == "/10":
            value /= 10
        if not 0 <= value <= 1:
            notes.append(f"confidence {m.group(0)!r} out of range; clamped")
        return min(1.0, max(0.0, value))
    for word, value in sorted(CONFIDENCE_WORDS.items(), key=lambda kv: -len(kv[0])):
        if re.search(rf"\b{word}\b", text, re.I):
            notes.append(f"confidence given as {word!r}; read as {value}")
            return value
    notes.append(f"confidence not readable: {text[:60]!r}")
    return None


def _root_cause(lines: list[str]) -> DraftRootCause:
    prose: list[str] = []
    item_lines: list[str] = []
    in_list = False
    fence: str | None = None
    for line in lines:
        if fence is not None or FENCE_OPEN.match(line):
            if fence is None:
                fence = FENCE_OPEN.match(line).group(2)  # type: ignore[union-attr]
            elif closes(line, fence):
                fence = None
            (item_lines if in_list else prose).append(line)
            continue
        if ITEM.match(line):
            in_list = True
            item_lines.append(line)
        elif in_list and line.strip() and line[:1].isspace():
            item_lines.append(line)
        else:
            in_list = False
            if not re.fullmatch(r"\s*(?:\*\*|__)?evidence(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*", line, re.I):
                prose.append(line)
    evidence = [re.sub(r"^evidence\s*:\s*", "", b, flags=re.I) for b in bullets(item_lines)]
    explanation = plain_text([_ESCAPED_MARKER.sub(r"\1\2", line) for line in outside_fences(prose)])
    return DraftRootCause(explanation=explanation, evidence=evidence)


def parse_report(markdown: str) -> ReportDraft:
    """Read a markdown report leniently; never raises, and says in `notes` what it could not read."""
    if not isinstance(markdown, str):
        return ReportDraft(notes=[f"expected markdown text, got {type(markdown).__name__}"])
    try:
        return _parse(markdown)
    except Exception as e:  # noqa: BLE001 - a parser bug must not lose the report
        return ReportDraft(notes=[f"report could not be parsed ({type(e).__name__}: {e})"])


def _parse(markdown: str) -> ReportDraft:
    notes: list[str] = []
    text = markdown.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines = text.split("\n")
    sections = split_sections(lines, notes)
    if "summary" not in sections and (unwrapped := unwrap_fence(lines)) is not None:
        retry_notes: list[str] = []
        retry = split_sections(unwrapped, retry_notes)
        if len(retry) > len(sections):
            lines, notes, sections = unwrapped, retry_notes, retry
    if not sections:
        notes.append("no template headings found")
    draft = ReportDraft(
        summary=plain_text(outside_fences(sections.get("summary", []))),
        root_cause=_root_cause(sections.get("root_cause", [])),
        affected_files=_affected(sections.get("affected_files", []), notes),
        proposed_changes=_changes(sections.get("proposed_changes", []), notes),
        complexity=_rating(sections.get("complexity", []), "complexity", notes),
        risk=_rating(sections.get("risk", []), "risk", notes),
        confidence=_confidence(sections.get("confidence", []), notes),
        open_questions=bullets(sections.get("open_questions", [])),
    )
    if "affected_files" not in sections:
        # Free-form reports: fall back to every location cited anywhere outside code blocks.
        seen: set[tuple[str, int | None]] = set()
        for line in outside_fences(lines):
            for loc in all_locations(line):
                if loc[1] is not None and (loc[0], loc[1]) not in seen:
                    seen.add((loc[0], loc[1]))
                    draft.affected_files.append(
                        DraftAffectedFile(path=loc[0], line_start=loc[1], line_end=loc[2], role=Role.related)
                    )
        if draft.affected_files:
            notes.append(f"no 'Affected files' section; took {len(draft.affected_files)} locations cited in the text")
    if not draft.summary and draft.root_cause.explanation and "summary" not in sections:
        draft.summary = draft.root_cause.explanation.split("\n\n")[0]
    for name in REQUIRED:
        if name not in sections:
            notes.append(f"missing section {name.replace('_', ' ')!r}")
    if draft.complexity and draft.complexity.level not in {c.value for c in Complexity}:
        draft.complexity.level = None
    if draft.risk and draft.risk.level not in {r.value for r in Risk}:
        draft.risk.level = None
    draft.notes = notes
    return draft

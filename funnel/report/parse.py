"""The lenient parser of the markdown report: `parse_report(markdown) -> ReportDraft`, never raising; what it could
not read is said in `ReportDraft.notes`."""

from __future__ import annotations

import json
import re

from funnel.inline import code_span
from funnel.report._markdown import (
    CONFIDENCE_WORDS,
    FENCE_OPEN,
    ITEM,
    LEVEL_ALIASES,
    LINES_VALUE,
    REQUIRED,
    ROLE,
    bullets,
    closes,
    fenced_blocks,
    is_empty,
    item_fields,
    list_items,
    outside_fences,
    plain_text,
    role_in,
    split_sections,
    symbol_in,
    table_rows,
)
from funnel.report._layout import setext_to_atx, unwrap_fence, unwrap_tags
from funnel.report._locations import RANGE_TO, parse_location, prose_locations, ticked_location
from funnel.report.template import (
    ESCAPED_MARKER,
    DraftAffectedFile,
    DraftChange,
    DraftRating,
    DraftRootCause,
    ReportDraft,
)
from schemas.enums import Complexity, Risk, Role

__all__ = ("parse_report",)


_LINES_WORD = re.compile(
    r"(?:\b[Ll]ines?\b\s*[:=]?|\bL(?=\d))\s*`?(?:~\s*)?L?(\d+)`?(?:\s*" + RANGE_TO + r"\s*`?L?(\d+)`?)?")
"""A line range named in words anywhere in an item's head: `lines 12-15`, `Lines: 3–4`, `` lines `3-4` ``,
`L3–L4`, `lines 3 through 4`, `line ~12`."""
_BARE_RANGE = re.compile(r"\s*(?:`|\*\*)?\s*(?:—|–|-|,)?\s*\((\d+)\s*(?:-|–|—)\s*(\d+)\)")
"""A bare range in parentheses right after the cited path: `pkg/a.go (3-4)`, `**pkg/a.go** (3-4)`."""


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


def _bare_range(head: str, path: str) -> re.Match[str] | None:
    """`(3-4)` right after `path` in `head`."""
    at = head.find(path)
    return _BARE_RANGE.match(head, at + len(path)) if at >= 0 else None


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
        if start is None and (m := _LINES_WORD.search(head) or _bare_range(head, path)):  # "`a.py::f` lines 12-15"
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
            named = rf"`{re.escape(symbol or '')}(?:\(\))?`|{re.escape(code_span(symbol or ''))}"
            prefix = rf"^\s*`{re.escape(loc_text)}`\s*(?:[—–-]+\s*(?:{named}))?\s*[:—–-]*\s*"
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
    explanation = plain_text([ESCAPED_MARKER.sub(r"\1\2", line) for line in outside_fences(prose)])
    return DraftRootCause(explanation=explanation, evidence=evidence)


def parse_report(markdown: str) -> ReportDraft:
    """Read a markdown report leniently; never raises, and says in `notes` what it could not read."""
    if not isinstance(markdown, str):
        return ReportDraft(notes=[f"expected markdown text, got {type(markdown).__name__}"])
    try:
        return _parse(markdown)
    except Exception as e:  # noqa: BLE001 - a parser bug must not lose the report
        return ReportDraft(notes=[f"report could not be parsed ({type(e).__name__}: {e})"])


def _json_draft(text: str) -> ReportDraft | None:
    """A report written as a JSON object with the draft's fields (a model that ignored the template), or None."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[-1].rsplit("```", 1)[0].strip()
    if not body.startswith("{"):
        return None
    try:
        data = json.loads(body)
        if not isinstance(data, dict) or not {"summary", "affected_files"} & data.keys():
            return None
        draft = ReportDraft.model_validate(data)
    except (ValueError, RecursionError):  # not JSON, not the draft's shape, or nested too deep: read it as markdown
        return None
    draft.notes = ["the report is JSON, not the markdown template"]
    return draft


def _parse(markdown: str) -> ReportDraft:
    notes: list[str] = []
    text = unwrap_tags(markdown.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff"))
    if (from_json := _json_draft(text)) is not None:
        return from_json
    lines = setext_to_atx(text.split("\n"))
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
            for loc in prose_locations(line):
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

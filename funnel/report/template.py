"""The markdown report: the one fixed template every explorer writes, its draft model and its renderer.

Any explorer (a PydanticAI agent on any provider, an external CLI agent, the offline investigator) ends
with a markdown report in this template; `funnel.report.parse.parse_report` turns it into a `ReportDraft`
(unvalidated), the validator in `funnel.report.verify` checks it against the repository, and `render_report`
writes it back.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from funnel.inline import code_span
from funnel.report._locations import LANGS, parse_location
from schemas.diagnosis import Diagnosis
from schemas.enums import Role

__all__ = (
    "REPORT_TEMPLATE",
    "DraftAffectedFile",
    "DraftChange",
    "DraftRating",
    "DraftRootCause",
    "ReportDraft",
    "render_report",
    "fence_language",
    "format_location",
    "parse_location",
)

REPORT_TEMPLATE = """\
## Summary
One or two sentences: what is wrong, as the user sees it.

## Root cause
Why it happens, in plain words.

- Evidence: an observation from the code, citing `<path>:<line>`.
- Evidence: another observation.

## Affected files
1. `<path>:<start>-<end>` — `<symbol>` (cause)
   ```<language>
   the lines <start>-<end> quoted exactly as read
   ```
2. `<path>:<start>-<end>` — `<symbol>` (symptom)
   ```<language>
   the quoted lines
   ```

## Proposed changes
- `<path>` — `<symbol>`: what to change and why.
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
snippet (the examples are `<placeholder>`s, never paths a model could copy: the tools refuse them with a hint), levels `trivial|small|medium|large` and `low|medium|high`, confidence between 0.0 and 1.0."""


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

def fence_language(path: str) -> str:
    """The code fence's language tag for a file (`python` for `a.py`), empty when none is known."""
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
ESCAPED_MARKER = re.compile(r"^(\s*)\\(\d+[.)]\s|[-*+]\s)")


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
            line += f" — {code_span(item.symbol)}"
        out.append(f"{line} ({item.role})")
        if item.evidence.strip():
            out.append(_fence(item.evidence, fence_language(item.path), " " * (len(str(n)) + 2)))
    out += ["", "## Proposed changes"]
    if not report.proposed_changes:
        out.append(none)
    for change in report.proposed_changes:
        head = f"- `{change.path}`"
        if change.symbol:
            head += f" — {code_span(change.symbol)}"
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

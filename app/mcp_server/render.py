"""The text an MCP client reads for investigations, lists and repositories (the JSON goes beside it as
structured content)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.types import CallToolResult, TextContent

from app.views import InvestigationDetail, InvestigationSummary, Page, RepoView
from funnel.report.export import to_markdown
from schemas import Status

_WAITING = (Status.queued, Status.running)


def result(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    """A tool result: the text for the model, the JSON for programs."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def _head(item: InvestigationSummary) -> str:
    facts = [item.status.value, item.classification.value]
    if item.prime_suspect:
        facts.append(f"prime suspect {item.prime_suspect}")
    if item.confidence is not None:
        facts.append(f"confidence {item.confidence:.2f}")
    return f"#{item.id} [{', '.join(facts)}] {item.repo or '?'}: {item.title}"


def investigation_text(detail: InvestigationDetail, notes: Sequence[str] = (), base_url: str = "") -> str:
    """An investigation as an agent reads it: a header line, then the validated diagnosis as markdown (or why
    there is none yet)."""
    commit = f" @ {detail.commit[:12]}" if detail.commit else ""
    stats = detail.stats
    lines = [f"Investigation {detail.id}: {detail.status.value} ({detail.classification.value}) · {detail.repo}{commit}"
             f" · explorer {detail.explorer or '?'} · {stats.tool_calls} tool calls"
             + (f" · {stats.duration_s:.1f} s" if stats.duration_s is not None else "")]  # fmt: skip
    lines.append(f"Dashboard: {base_url}{detail.urls.page}")
    lines += [f"Note: {note}" for note in notes]
    lines.append("")
    if detail.status in _WAITING:
        lines.append(f"Still {detail.status.value}: call get_investigation({detail.id}) for the diagnosis.")
    elif detail.diagnosis is not None:
        lines.append(to_markdown(detail.diagnosis, title=f"Diagnosis: {detail.title}"))
    else:
        lines.append(f"No diagnosis: {detail.error or detail.status.value}.")
    return "\n".join(lines).rstrip() + "\n"


def investigation_json(detail: InvestigationDetail) -> dict[str, Any]:
    """The structured content of an investigation (the explorer's raw markdown report left out: the diagnosis is
    its validated form)."""
    return detail.model_dump(mode="json", exclude={"report_markdown"})


def page_text(page: Page[InvestigationSummary]) -> str:
    """One line per investigation, newest first, and where the page sits in the whole list."""
    if not page.items:
        return "No investigations match." if page.total else "No investigations yet (investigate starts one)."
    shown = f"{page.offset + 1}-{page.offset + len(page.items)} of {page.total}"
    more = f"; offset={page.offset + len(page.items)} for more" if page.offset + len(page.items) < page.total else ""
    return "\n".join([_head(item) for item in page.items] + [f"({shown}{more})"]) + "\n"


def repositories_text(repos: Sequence[RepoView], roots: Sequence[Any] | None) -> str:
    """The registered repositories, and which directories may be named by path."""
    lines = [f"{r.name}\t{r.kind}\t{r.location}" + (f"\tdefault ref {r.default_ref}" if r.default_ref else "")
             for r in repos] or ["No repositories registered."]  # fmt: skip
    if roots:
        lines.append("Any directory under " + ", ".join(map(str, roots)) + " may also be named by path.")
    return "\n".join(lines) + "\n"

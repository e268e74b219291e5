"""Reads the dashboard needs beyond `app.store`: full-text search of reports, and the columns behind the stats charts.

Every function takes an `AsyncSession` in a transaction, like `app.store`, and returns plain data.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app._store_common import investigation_filters, summary_page
from app.models import FeedbackRow, Investigation, Report, TraceEventRow
from app.views import InvestigationSummary, Page
from schemas import Classification, Feedback, Status


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


async def search_investigations(
    session: AsyncSession,
    *,
    repo: str | None = None,
    status: Status | None = None,
    classification: Classification | None = None,
    text: str | None = None,
    limit: int = 25,
    offset: int = 0,
) -> Page[InvestigationSummary]:
    """Investigations newest first, filtered like `store.list_investigations`; `text` matches the report title
    or body, or `#id`, case-insensitively."""
    where = investigation_filters(repo=repo, status=status, classification=classification)
    if text and text.strip():
        needle = text.strip()
        clauses = [
            Report.title.ilike(_like_pattern(needle), escape="\\"),
            Report.body.ilike(_like_pattern(needle), escape="\\"),
        ]
        if needle.lstrip("#").isdigit():
            clauses.append(Investigation.id == int(needle.lstrip("#")))
        where.append(or_(*clauses))
    return await summary_page(
        session, where, limit=limit, offset=offset, title=lambda rep: rep.title or _first_line(rep.body)
    )


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:120]
    return ""


async def known_repos(session: AsyncSession) -> list[str]:
    """Repository names that appear on any investigation, sorted (for the filter menu)."""
    rows = await session.scalars(select(Investigation.repo).where(Investigation.repo.is_not(None)).distinct())
    return sorted(r for r in rows if r)


@dataclass(frozen=True)
class RunFacts:
    """The columns of one investigation the stats charts use."""

    status: Status
    """Lifecycle status."""
    termination: str | None
    """Stop reason."""
    tool_calls: int
    """Tool calls."""
    duration_s: float | None
    """Seconds."""


@dataclass(frozen=True)
class Verdict:
    """One feedback verdict and when it was given."""

    verdict: Feedback
    """correct, partly or wrong."""
    created_at: datetime
    """When."""


async def run_facts(session: AsyncSession, *, limit: int = 20_000) -> list[RunFacts]:
    """Status, stop reason, tool calls and duration of the latest `limit` investigations."""
    rows = await session.execute(
        select(Investigation.status, Investigation.termination, Investigation.tool_calls, Investigation.duration_s)
        .order_by(Investigation.id.desc())
        .limit(limit)
    )
    return [RunFacts(status=s, termination=t, tool_calls=n or 0, duration_s=d) for s, t, n, d in rows]


async def verdicts(session: AsyncSession, *, limit: int = 20_000) -> list[Verdict]:
    """The latest `limit` feedback verdicts, oldest first."""
    rows = await session.execute(
        select(FeedbackRow.verdict, FeedbackRow.created_at).order_by(FeedbackRow.id.desc()).limit(limit)
    )
    return [Verdict(verdict=v, created_at=c) for v, c in reversed(rows.all())]


async def status_of(session: AsyncSession, investigation_id: int) -> tuple[Status, int] | None:
    """Status and number of persisted trace events of one investigation, or None when it does not exist."""
    status = await session.scalar(select(Investigation.status).where(Investigation.id == investigation_id))
    if status is None:
        return None
    n = await session.scalar(
        select(func.count()).select_from(TraceEventRow).where(TraceEventRow.investigation_id == investigation_id)
    )
    return status, n or 0



async def reruns_of(session: AsyncSession, investigation_id: int) -> list[tuple[int, Status]]:
    """Ids and statuses of the investigations that rerun this one, oldest first."""
    rows = await session.execute(
        select(Investigation.id, Investigation.status)
        .where(Investigation.rerun_of == investigation_id)
        .order_by(Investigation.id)
    )
    return [(i, s) for i, s in rows]

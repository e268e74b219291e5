"""Pieces shared by `app.store`, `app._store_jobs` and `app.dashboard.queries`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Investigation, Report
from app.views import InvestigationSummary, Page
from schemas import BugReport, Classification, Status
from schemas.text import storable as storable_text

FINISHED = (Status.done, Status.failed, Status.cancelled, Status.skipped)
"""Statuses an investigation never leaves (except through a rerun, which is a new investigation)."""


def storable(text: str | None, limit: int | None = None) -> str | None:
    """Text every backend accepts (`schemas.text.storable`: NUL and lone surrogates become U+FFFD), cut to
    `limit` characters."""
    if text is None:
        return None
    text = storable_text(text)
    return text[:limit] if limit else text


class DuplicateError(Exception):
    """The row already exists (a repository name, a webhook delivery id): the caller's redelivery, not a fault."""


def report_model(rep: Report) -> BugReport:
    """The stored report as a `BugReport`."""
    return BugReport(
        title=rep.title,
        body=rep.body,
        source=rep.source,
        repo=rep.repo,
        ref=rep.ref,
        labels=list(rep.labels or []),
        reporter=rep.reporter,
        url=rep.url,
        external_id=rep.external_id,
    )


def prime_suspect(diagnosis: dict[str, Any] | None) -> str | None:
    """`path:line` of a stored diagnosis's first affected file, or None."""
    files = (diagnosis or {}).get("affected_files") or []
    if not files:
        return None
    first = files[0]
    return f"{first.get('path')}:{first.get('line_start')}"


def summary_fields(inv: Investigation, rep: Report) -> dict[str, Any]:
    """The `InvestigationSummary` fields of one investigation and its report."""
    return dict(
        id=inv.id,
        report_id=inv.report_id,
        repo=inv.repo,
        title=rep.title,
        source=rep.source,
        status=inv.status,
        classification=inv.classification,
        termination=inv.termination,
        confidence=(inv.diagnosis or {}).get("confidence") if inv.diagnosis else None,
        prime_suspect=prime_suspect(inv.diagnosis),
        tool_calls=inv.tool_calls,
        duration_s=inv.duration_s,
        runs=inv.runs,
        rerun_of=inv.rerun_of,
        created_at=inv.created_at,
        started_at=inv.started_at,
        finished_at=inv.finished_at,
    )


def investigation_filters(
    *, repo: str | None, status: Status | None, classification: Classification | None
) -> list[Any]:
    """WHERE clauses selecting investigations by repository, status and classification (each when given)."""
    where: list[Any] = []
    if repo:
        where.append(Investigation.repo == repo)
    if status:
        where.append(Investigation.status == status)
    if classification:
        where.append(Investigation.classification == classification)
    return where


async def summary_page(
    session: AsyncSession,
    where: list[Any],
    *,
    limit: int,
    offset: int,
    title: Callable[[Report], str] | None = None,
) -> Page[InvestigationSummary]:
    """One page of the investigations matching `where`, newest first, with the total count; `title` overrides
    how a summary's title comes from its report (default: the report's title)."""
    base = select(Investigation, Report).join(Report, Report.id == Investigation.report_id).where(*where)
    total = await session.scalar(select(func.count()).select_from(base.subquery())) or 0
    rows = await session.execute(base.order_by(Investigation.id.desc()).limit(limit).offset(offset))
    items = [
        InvestigationSummary(**{**summary_fields(inv, rep), **({"title": title(rep)} if title else {})})
        for inv, rep in rows
    ]
    return Page[InvestigationSummary](items=items, total=total, limit=limit, offset=offset)

"""All data access of the service. Every function takes an `AsyncSession` already in a transaction
(`async with db.session() as s:`) and returns read models from `app.views`, never ORM rows that outlive it.

Callers: the routes, the job runners, the webhook intake and the dashboard. The intake functions live in
`app/_store_intake.py`, the job-lifecycle functions in `app/_store_jobs.py` and the webhook deliveries in
`app/_store_deliveries.py`; all are re-exported here: `store.create_investigation`, `store.claim`,
`store.record_delivery`, ... are the names to use.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app._store_common import (
    FINISHED,
    DuplicateError,
    investigation_filters,
    summary_page,
)
from app._store_common import prime_suspect as _prime_suspect
from app._store_common import report_model as _report_model
from app._store_common import summary_fields as _summary_fields
from app._store_deliveries import (
    find_delivery,
    list_deliveries,
    record_delivery,
    set_delivery_investigation,
)
from app._store_intake import (
    create_investigation,
    create_investigations,
    create_investigations_sync,
    create_rerun,
)
from app._store_jobs import (
    cancel_requested,
    claim,
    claim_next,
    finish,
    investigation_for_job,
    mark_commented,
    queued_without_job,
    request_cancel,
    request_id_of,
    requeue_interrupted,
    run_number,
    set_job_id,
)
from app.models import FeedbackRow, Investigation, Report, Repository, TraceEventRow
from app.views import (
    Counts,
    FeedbackView,
    InvestigationDetail,
    InvestigationStats,
    InvestigationSummary,
    Page,
    RepoView,
    TraceEventView,
    links,
)
from schemas import Classification, Diagnosis, Feedback, Status

# --- repositories -------------------------------------------------------------------------------------------


def _repo_view(row: Repository) -> RepoView:
    kind = "git" if "://" in row.location or row.location.startswith("git@") else "path"
    return RepoView(
        name=row.name, location=row.location, kind=kind, default_ref=row.default_ref, created_at=row.created_at
    )


async def add_repository(
    session: AsyncSession, name: str, location: str, *, default_ref: str | None = None, replace: bool = False
) -> RepoView:
    """Register a repository; raises DuplicateError when the name is taken (unless `replace`)."""
    existing = await session.scalar(select(Repository).where(Repository.name == name))
    if existing is not None:
        if not replace:
            raise DuplicateError(f"repository {name!r} is already registered")
        existing.location, existing.default_ref = location, default_ref
        await session.flush()
        return _repo_view(existing)
    row = Repository(name=name, location=location, default_ref=default_ref)
    session.add(row)
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError as exc:
        raise DuplicateError(f"repository {name!r} is already registered") from exc
    return _repo_view(row)


async def get_repository(session: AsyncSession, name: str) -> RepoView | None:
    """One registered repository by name, or None."""
    if "\x00" in name:
        return None
    row = await session.scalar(select(Repository).where(Repository.name == name))
    return _repo_view(row) if row else None


async def list_repositories(session: AsyncSession) -> list[RepoView]:
    """Every registered repository, by name."""
    rows = await session.scalars(select(Repository).order_by(Repository.name))
    return [_repo_view(r) for r in rows]


# --- reading investigations ----------------------------------------------------------------------------------


def _diagnosis(data: dict[str, Any] | None) -> Diagnosis | None:
    if not data:
        return None
    try:
        return Diagnosis.model_validate(data)
    except ValidationError:
        return None


async def list_investigations(
    session: AsyncSession,
    *,
    repo: str | None = None,
    status: Status | None = None,
    classification: Classification | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page[InvestigationSummary]:
    """Investigations newest first, filtered by repository, status and classification (text search:
    `app.dashboard.queries.search_investigations`)."""
    where = investigation_filters(repo=repo, status=status, classification=classification)
    return await summary_page(session, where, limit=limit, offset=offset)


async def get_investigation(session: AsyncSession, investigation_id: int) -> InvestigationDetail | None:
    """Everything about one investigation (report, diagnosis, stats, feedback), or None."""
    row = (
        await session.execute(
            select(Investigation, Report)
            .join(Report, Report.id == Investigation.report_id)
            .where(Investigation.id == investigation_id)
        )
    ).first()
    if row is None:
        return None
    inv, rep = row
    n_events = await trace_event_count(session, inv.id)
    feedback = await session.scalars(
        select(FeedbackRow).where(FeedbackRow.investigation_id == inv.id).order_by(FeedbackRow.id)
    )
    return InvestigationDetail(
        **_summary_fields(inv, rep),
        report=_report_model(rep),
        classification_confidence=inv.classification_confidence,
        classification_reason=inv.classification_reason,
        explorer=inv.explorer,
        extra_context=inv.extra_context,
        commit=inv.commit,
        diagnosis=_diagnosis(inv.diagnosis),
        report_markdown=inv.report_markdown,
        error=inv.error,
        cancel_requested=inv.cancel_requested,
        stats=InvestigationStats(
            tool_calls=inv.tool_calls,
            input_tokens=inv.input_tokens,
            output_tokens=inv.output_tokens,
            duration_s=inv.duration_s,
            runs=inv.runs,
            trace_events=n_events,
        ),
        feedback=[_feedback_view(f) for f in feedback],
        urls=links(inv.id),
    )


async def get_status(session: AsyncSession, investigation_id: int) -> Status | None:
    """The status of one investigation, or None when it does not exist (the one status lookup)."""
    return await session.scalar(select(Investigation.status).where(Investigation.id == investigation_id))


async def trace_event_count(session: AsyncSession, investigation_id: int) -> int:
    """How many trace events of one investigation are stored (service rows included)."""
    n = await session.scalar(
        select(func.count()).select_from(TraceEventRow).where(TraceEventRow.investigation_id == investigation_id)
    )
    return n or 0


async def count_investigations(session: AsyncSession) -> Counts:
    """Investigations per status, per classification and per both."""
    rows = await session.execute(
        select(Investigation.status, Investigation.classification, func.count()).group_by(
            Investigation.status, Investigation.classification
        )
    )
    by_status: dict[str, int] = {s.value: 0 for s in Status}
    by_class: dict[str, int] = {c.value: 0 for c in Classification}
    both: dict[tuple[str, str], int] = {}
    for status, classification, n in rows:
        by_status[str(status)] = by_status.get(str(status), 0) + n
        by_class[str(classification)] = by_class.get(str(classification), 0) + n
        both[(str(status), str(classification))] = n
    return Counts(by_status=by_status, by_classification=by_class, by_status_classification=both)


async def run_totals(session: AsyncSession) -> dict[str, float]:
    """Tool calls and tokens summed over every investigation (`tool_calls`, `input_tokens`, `output_tokens`)."""
    row = (
        await session.execute(
            select(
                func.coalesce(func.sum(Investigation.tool_calls), 0),
                func.coalesce(func.sum(Investigation.input_tokens), 0),
                func.coalesce(func.sum(Investigation.output_tokens), 0),
            )
        )
    ).one()
    return {"tool_calls": float(row[0]), "input_tokens": float(row[1]), "output_tokens": float(row[2])}


# --- trace events ---------------------------------------------------------------------------------------------


async def append_trace_events(
    session: AsyncSession, investigation_id: int, run: int, events: Iterable[dict[str, Any]]
) -> None:
    """Persist trace events (JSON dicts with a `kind`) of one run, in order."""
    session.add_all(
        TraceEventRow(investigation_id=investigation_id, run=run, kind=str(e.get("kind", "event")), data=e)
        for e in events
    )
    await session.flush()


async def trace_events(
    session: AsyncSession, investigation_id: int, *, after: int = 0, limit: int = 5000
) -> list[TraceEventView]:
    """Trace events of one investigation with id > `after`, oldest first (streams poll with `after`)."""
    rows = await session.scalars(
        select(TraceEventRow)
        .where(TraceEventRow.investigation_id == investigation_id, TraceEventRow.id > after)
        .order_by(TraceEventRow.id)
        .limit(limit)
    )
    return [TraceEventView(id=r.id, run=r.run, kind=r.kind, data=r.data) for r in rows]


# --- feedback and memory -------------------------------------------------------------------------------------


def _feedback_view(row: FeedbackRow) -> FeedbackView:
    return FeedbackView(
        id=row.id,
        investigation_id=row.investigation_id,
        repo=row.repo,
        verdict=row.verdict,
        note=row.note,
        created_at=row.created_at,
    )


async def add_feedback(
    session: AsyncSession, investigation_id: int, verdict: Feedback, note: str = ""
) -> FeedbackView | None:
    """Record a verdict on an investigation (None when it does not exist)."""
    inv = await session.get(Investigation, investigation_id)
    if inv is None:
        return None
    row = FeedbackRow(investigation_id=inv.id, repo=inv.repo, verdict=verdict, note=note)
    session.add(row)
    await session.flush()
    return _feedback_view(row)


async def repo_memory(session: AsyncSession, repo: str | None, *, limit: int = 20) -> str | None:
    """Past verdicts on a repository's diagnoses, as notes for the next run (None when there are none)."""
    if not repo:
        return None
    rows = await session.execute(
        select(FeedbackRow, Investigation, Report)
        .join(Investigation, Investigation.id == FeedbackRow.investigation_id)
        .join(Report, Report.id == Investigation.report_id)
        .where(FeedbackRow.repo == repo)
        .order_by(FeedbackRow.id.desc())
        .limit(limit)
    )
    lines = []
    for fb, inv, rep in rows:
        suspect = _prime_suspect(inv.diagnosis) or "no suspect"
        note = f": {fb.note}" if fb.note else ""
        lines.append(f"- report {rep.title!r}: diagnosis naming {suspect} was judged {fb.verdict.value}{note}")
    if not lines:
        return None
    return "Feedback from maintainers on earlier diagnoses of this repository:\n" + "\n".join(reversed(lines))


async def latest_activity(session: AsyncSession) -> datetime | None:
    """When any investigation last changed (dashboards poll it to refresh)."""
    return await session.scalar(select(func.max(Investigation.updated_at)))


__all__ = (
    "DuplicateError", "FINISHED", "add_feedback", "add_repository", "append_trace_events", "cancel_requested",
    "claim", "claim_next", "count_investigations", "create_investigation", "create_investigations",
    "create_investigations_sync", "create_rerun", "find_delivery", "finish", "get_investigation", "get_repository",
    "get_status", "investigation_for_job", "latest_activity", "list_deliveries", "list_investigations",
    "list_repositories", "mark_commented", "queued_without_job", "record_delivery", "repo_memory", "request_cancel",
    "request_id_of", "requeue_interrupted", "run_number", "run_totals", "set_delivery_investigation", "set_job_id",
    "trace_event_count", "trace_events",
)

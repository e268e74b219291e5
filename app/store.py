"""All data access of the service. Every function takes an `AsyncSession` already in a transaction
(`async with db.session() as s:`) and returns read models from `app.views`, never ORM rows that outlive it.

Callers: the routes, the job runners, the webhook intake and the dashboard. The job-lifecycle functions live
in `app/_store_jobs.py` and are re-exported here: `store.claim`, `store.finish`, ... are the names to use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app._store_common import FINISHED, DuplicateError, report_model as _report_model
from app._store_common import storable as _storable
from app._store_common import investigation_filters, summary_page
from app._store_common import prime_suspect as _prime_suspect
from app._store_common import summary_fields as _summary_fields
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
from app.models import FeedbackRow, Investigation, Report, Repository, TraceEventRow, WebhookDelivery, utcnow
from app.observability import request_id_var
from app.views import (
    Counts,
    DeliveryView,
    FeedbackView,
    InvestigationDetail,
    InvestigationStats,
    InvestigationSummary,
    Page,
    RepoView,
    TraceEventView,
    links,
)
from schemas import BugReport, Classification, ClassificationResult, Diagnosis, Feedback, Source, Status

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


# --- intake -------------------------------------------------------------------------------------------------


async def create_investigation(
    session: AsyncSession,
    report: BugReport,
    classification: ClassificationResult,
    *,
    investigate: bool,
    explorer: str,
) -> tuple[int, int]:
    """Store a report and its investigation (`queued` when `investigate`, else `skipped`); returns
    (investigation id, report id). Flushed, not committed: the caller's transaction decides."""
    return (await create_investigations(session, [(report, classification, investigate)], explorer=explorer))[0]


def _intake_rows(
    items: Sequence[tuple[BugReport, ClassificationResult, bool]],
    request_ids: Sequence[str | None] | None = None,
) -> tuple[list[dict[str, Any]], Callable[[list[int]], list[dict[str, Any]]]]:
    now = utcnow()
    request_ids = request_ids or [request_id_var.get()] * len(items)
    report_rows = [
        dict(
            source=report.source,
            repo=_storable(report.repo, 200),
            title=_storable(report.title),
            body=_storable(report.body),
            ref=_storable(report.ref, 200),
            labels=[_storable(label) for label in report.labels],
            reporter=_storable(report.reporter, 200),
            url=_storable(report.url),
            external_id=_storable(report.external_id, 200),
            created_at=now,
        )
        for report, _, _ in items
    ]

    def investigation_rows(report_ids: list[int], explorer: str) -> list[dict[str, Any]]:
        return [
            dict(
                report_id=report_id,
                repo=_storable(report.repo, 200),
                status=Status.queued if investigate else Status.skipped,
                classification=classification.label,
                classification_confidence=classification.confidence,
                classification_reason=classification.reason,
                explorer=explorer,
                created_at=now,
                updated_at=now,
                finished_at=None if investigate else now,
                request_id=request_id,
            )
            for report_id, (report, classification, investigate), request_id in zip(report_ids, items, request_ids)
        ]

    return report_rows, investigation_rows  # type: ignore[return-value]


_INSERT_REPORTS = insert(Report).returning(Report.id, sort_by_parameter_order=True)
_INSERT_INVESTIGATIONS = insert(Investigation).returning(Investigation.id, sort_by_parameter_order=True)


async def create_investigations(
    session: AsyncSession,
    items: Sequence[tuple[BugReport, ClassificationResult, bool]],
    *,
    explorer: str,
    request_ids: Sequence[str | None] | None = None,
) -> list[tuple[int, int]]:
    """`create_investigation` for many reports at once (two multi-row INSERTs); ids in input order.
    `request_ids`: the HTTP request of each (default: the one being served)."""
    report_rows, investigation_rows = _intake_rows(items, request_ids)
    # Core INSERT ... RETURNING (batched by SQLAlchemy's insertmanyvalues): far cheaper than an ORM flush.
    report_ids = list(await session.scalars(_INSERT_REPORTS, report_rows))
    inv_ids = list(await session.scalars(_INSERT_INVESTIGATIONS, investigation_rows(report_ids, explorer)))
    return list(zip(inv_ids, report_ids))


def create_investigations_sync(
    conn: Connection,
    items: Sequence[tuple[BugReport, ClassificationResult, bool]],
    *,
    explorer: str,
    request_ids: Sequence[str | None] | None = None,
) -> list[tuple[int, int]]:
    """`create_investigations` on a synchronous connection (the SQLite intake writer thread)."""
    report_rows, investigation_rows = _intake_rows(items, request_ids)
    report_ids = list(conn.scalars(_INSERT_REPORTS, report_rows))
    inv_ids = list(conn.scalars(_INSERT_INVESTIGATIONS, investigation_rows(report_ids, explorer)))
    return list(zip(inv_ids, report_ids))


async def create_rerun(
    session: AsyncSession, investigation_id: int, *, extra_context: str | None, explorer: str
) -> int | None:
    """A new queued investigation of the same report (with optional extra context); None if unknown id."""
    old = await session.get(Investigation, investigation_id)
    if old is None:
        return None
    inv = Investigation(
        report_id=old.report_id,
        repo=old.repo,
        status=Status.queued,
        classification=old.classification,
        classification_confidence=old.classification_confidence,
        classification_reason=old.classification_reason,
        explorer=explorer,
        extra_context=extra_context,
        rerun_of=old.id,
        request_id=request_id_var.get(),
    )
    session.add(inv)
    await session.flush()
    return inv.id


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


# --- webhook deliveries --------------------------------------------------------------------------------------


async def record_delivery(
    session: AsyncSession,
    provider: Source,
    *,
    delivery_id: str | None,
    outcome: str,
    reason: str = "",
    authenticated: bool,
    investigation_id: int | None = None,
    identity: str | None = None,
) -> int:
    """Record a webhook delivery; raises DuplicateError when an authenticated delivery with the same key (the
    body's `identity` when it has one, else the delivery id) was seen before."""
    key = identity or delivery_id
    row = WebhookDelivery(
        provider=provider,
        delivery_id=_storable(delivery_id, 200),
        dedup_key=_storable(key, 200) if authenticated and key else None,
        outcome=outcome,
        reason=_storable(reason, 2000),
        investigation_id=investigation_id,
    )
    session.add(row)
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError as exc:
        raise DuplicateError(f"{provider.value} delivery {delivery_id!r} was already received") from exc
    return row.id


async def find_delivery(session: AsyncSession, provider: Source, key: str) -> DeliveryView | None:
    """The authenticated delivery recorded under this key (the body's identity when it had one, else its
    delivery id), or None."""
    row = await session.scalar(
        select(WebhookDelivery).where(
            WebhookDelivery.provider == provider, WebhookDelivery.dedup_key == _storable(key, 200)
        )
    )
    return _delivery_view(row) if row else None


async def set_delivery_investigation(session: AsyncSession, delivery_row_id: int, investigation_id: int) -> None:
    """Link a recorded delivery to the investigation it created."""
    await session.execute(
        update(WebhookDelivery).where(WebhookDelivery.id == delivery_row_id).values(investigation_id=investigation_id)
    )


def _delivery_view(row: WebhookDelivery) -> DeliveryView:
    return DeliveryView(
        id=row.id,
        provider=row.provider,
        delivery_id=row.delivery_id,
        outcome=row.outcome,
        reason=row.reason,
        investigation_id=row.investigation_id,
        received_at=row.received_at,
    )


async def list_deliveries(session: AsyncSession, *, limit: int = 50, offset: int = 0) -> list[DeliveryView]:
    """Webhook deliveries, newest first."""
    rows = await session.scalars(
        select(WebhookDelivery).order_by(WebhookDelivery.id.desc()).limit(limit).offset(offset)
    )
    return [_delivery_view(r) for r in rows]


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

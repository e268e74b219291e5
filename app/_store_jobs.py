"""Job lifecycle in the database: claims, outcomes, cancellation, crash repair. Re-exported by `app.store`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app._store_common import FINISHED, report_model
from app.models import Investigation, Report, utcnow
from schemas import BugReport, Status

# --- job lifecycle --------------------------------------------------------------------------------------------


async def claim(session: AsyncSession, investigation_id: int, *, worker: str, only_queued: bool = False) -> bool:
    """Mark one investigation running (from queued, or from running when its previous worker died);
    False when it is finished, cancelled or unknown. `only_queued`: False as well when another worker runs it
    (a process that runs what it submitted, beside a pool that may have claimed it first)."""
    claimable = [Status.queued] if only_queued else [Status.queued, Status.running]
    result = await session.execute(
        update(Investigation)
        .where(Investigation.id == investigation_id, Investigation.status.in_(claimable))
        .values(status=Status.running, worker=worker, started_at=utcnow(), runs=Investigation.runs + 1)
    )
    return result.rowcount == 1


async def claim_next(
    session: AsyncSession, *, worker: str, busy_repos: dict[str | None, int], per_repo: int, skip: Sequence[int] = ()
) -> tuple[int, str | None] | None:
    """Claim the oldest queued investigation whose repository has fewer than `per_repo` running here;
    returns (id, repository) or None."""
    full = [r for r, n in busy_repos.items() if n >= per_repo and r is not None]
    query = (
        select(Investigation.id, Investigation.repo)
        .where(Investigation.status == Status.queued)
        .order_by(Investigation.id)
    )
    if full:
        query = query.where(Investigation.repo.not_in(full))
    if skip:
        query = query.where(Investigation.id.not_in(list(skip)))
    for candidate, repo in (await session.execute(query.limit(20))).all():
        if await claim(session, candidate, worker=worker):
            return candidate, repo
    return None


async def run_number(session: AsyncSession, investigation_id: int) -> int:
    """How many times a worker started this investigation."""
    return await session.scalar(select(Investigation.runs).where(Investigation.id == investigation_id)) or 0


async def finish(
    session: AsyncSession,
    investigation_id: int,
    *,
    status: Status,
    diagnosis: dict[str, Any] | None = None,
    report_markdown: str | None = None,
    error: str | None = None,
) -> None:
    """Store the outcome of a run and its counters (denormalized from the diagnosis stats)."""
    values: dict[str, Any] = dict(
        status=status, diagnosis=diagnosis, report_markdown=report_markdown, error=error, finished_at=utcnow()
    )
    if diagnosis:
        stats = diagnosis.get("stats") or {}
        values.update(
            termination=(diagnosis.get("termination") or {}).get("reason"),
            commit=stats.get("commit"),
            tool_calls=stats.get("tool_calls", 0),
            input_tokens=stats.get("input_tokens", 0),
            output_tokens=stats.get("output_tokens", 0),
            duration_s=stats.get("duration_s"),
        )
    elif status == Status.cancelled:
        values["termination"] = "cancelled"
    elif status == Status.failed:
        values["termination"] = "error"
    await session.execute(update(Investigation).where(Investigation.id == investigation_id).values(**values))


async def request_cancel(session: AsyncSession, investigation_id: int) -> tuple[Status, int | None] | None:
    """Flag an investigation for cancellation; a queued one is cancelled at once. Returns (status now,
    procrastinate job id) or None when unknown."""
    inv = await session.get(Investigation, investigation_id)
    if inv is None:
        return None
    if inv.status in FINISHED:
        return inv.status, inv.job_id
    inv.cancel_requested = True
    if inv.status == Status.queued:
        inv.status, inv.termination, inv.finished_at = Status.cancelled, "cancelled", utcnow()
    await session.flush()
    return inv.status, inv.job_id


async def cancel_requested(session: AsyncSession, investigation_id: int) -> bool:
    """Whether someone asked to cancel this investigation."""
    return bool(
        await session.scalar(select(Investigation.cancel_requested).where(Investigation.id == investigation_id))
    )


async def set_job_id(session: AsyncSession, investigation_id: int, job_id: int) -> None:
    """Remember the procrastinate job of an investigation."""
    await session.execute(update(Investigation).where(Investigation.id == investigation_id).values(job_id=job_id))


async def requeue_interrupted(session: AsyncSession, *, worker_prefix: str | None = None) -> list[int]:
    """Put `running` investigations back to `queued` (after a restart of the in-process pool)."""
    query = select(Investigation.id).where(Investigation.status == Status.running)
    if worker_prefix:
        query = query.where(Investigation.worker.startswith(worker_prefix))
    ids = list(await session.scalars(query))
    if ids:
        await session.execute(update(Investigation).where(Investigation.id.in_(ids)).values(status=Status.queued))
    return ids


async def queued_without_job(session: AsyncSession, *, older_than_s: float = 0.0) -> list[int]:
    """Queued investigations that have no procrastinate job yet (deferral lost to a crash)."""
    cutoff = utcnow() - timedelta(seconds=older_than_s)
    rows = await session.scalars(
        select(Investigation.id).where(
            Investigation.status == Status.queued, Investigation.job_id.is_(None), Investigation.created_at <= cutoff
        )
    )
    return list(rows)


async def investigation_for_job(session: AsyncSession, investigation_id: int) -> tuple[BugReport, str, str | None]:
    """What a worker needs to run an investigation: (report, explorer, extra context)."""
    inv, rep = (
        await session.execute(
            select(Investigation, Report)
            .join(Report, Report.id == Investigation.report_id)
            .where(Investigation.id == investigation_id)
        )
    ).one()
    return report_model(rep), inv.explorer, inv.extra_context


async def request_id_of(session: AsyncSession, investigation_id: int) -> str | None:
    """The id of the HTTP request that created an investigation, when it came from one."""
    return await session.scalar(select(Investigation.request_id).where(Investigation.id == investigation_id))


async def mark_commented(session: AsyncSession, investigation_id: int) -> None:
    """Remember that the diagnosis was posted back to the tracker."""
    await session.execute(update(Investigation).where(Investigation.id == investigation_id).values(commented=True))

"""Intake in the database: reports and their investigations, one at a time, in batches, and reruns.
Re-exported by `app.store`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, insert
from sqlalchemy.ext.asyncio import AsyncSession

from app._store_common import storable as _storable
from app.models import Investigation, Report, utcnow
from app.observability import request_id_var
from schemas import BugReport, ClassificationResult, Status

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

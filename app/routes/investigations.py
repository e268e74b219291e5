"""`/api/investigations`: list, detail, trace, live events, rerun, feedback, cancel."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request, status
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from app import service, store
from app.deps import ApiAuth, RuntimeDep, ReadSessionDep, Writer
from app.routes._types import MAX_ID, MAX_OFFSET, InvestigationId, Name, Text
from app.streams import investigation_events
from app.views import Accepted, FeedbackView, InvestigationDetail, InvestigationSummary, Page
from schemas import Classification, Feedback, Status

router = APIRouter(prefix="/api/investigations", tags=["investigations"], dependencies=[ApiAuth])

_NOT_FOUND = {404: {"description": "No such investigation"}}


def _missing(investigation_id: int) -> HTTPException:
    return HTTPException(
        status.HTTP_404_NOT_FOUND, f"investigation {investigation_id} not found (GET /api/investigations lists them)"
    )


@router.get("")
async def list_investigations(
    session: ReadSessionDep,
    repo: Annotated[Name | None, Query(description="Repository name")] = None,
    status_: Annotated[Status | None, Query(alias="status")] = None,
    classification: Classification | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Page[InvestigationSummary]:
    """Investigations newest first, filtered and paginated."""
    return await store.list_investigations(
        session, repo=repo, status=status_, classification=classification, limit=limit, offset=offset
    )


@router.get("/{investigation_id}", responses=_NOT_FOUND)
async def get_investigation(investigation_id: InvestigationId, session: ReadSessionDep) -> InvestigationDetail:
    """The report, its classification, the diagnosis and the run's counters."""
    detail = await store.get_investigation(session, investigation_id)
    if detail is None:
        raise _missing(investigation_id)
    return detail


@router.get("/{investigation_id}/trace", responses=_NOT_FOUND)
async def get_trace(investigation_id: InvestigationId, session: ReadSessionDep) -> list[dict[str, Any]]:
    """The trace (the run's JSONL events) as a JSON list, every run in order."""
    if await store.get_status(session, investigation_id) is None:
        raise _missing(investigation_id)
    events = await store.trace_events(session, investigation_id)
    return [{"run": e.run, **e.data} for e in events if e.kind not in ("status", "note")]


@router.get(
    "/{investigation_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **_NOT_FOUND},
)
async def stream_events(
    investigation_id: InvestigationId,
    request: Request,
    runtime: RuntimeDep,
    session: ReadSessionDep,
    after: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
    last_event_id: Annotated[str | None, Header(max_length=20)] = None,
) -> StreamingResponse:
    """Server-sent events: status changes, phase changes and tool calls as they happen."""
    if await store.get_status(session, investigation_id) is None:
        raise _missing(investigation_id)
    if last_event_id and last_event_id.isdigit():
        after = max(after, int(last_event_id))
    stream = investigation_events(runtime, investigation_id, after=after, is_disconnected=request.is_disconnected)
    return StreamingResponse(stream, media_type="text/event-stream", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


class RerunIn(BaseModel):
    """Optional context for a rerun."""

    model_config = ConfigDict(extra="forbid")

    extra_context: Annotated[Text, Field(max_length=20_000)] | None = None
    """What a person adds (a hint, a log, a correction); shown to the investigator."""


@router.post("/{investigation_id}/rerun", status_code=status.HTTP_202_ACCEPTED, dependencies=[Writer], responses=_NOT_FOUND)
async def rerun(investigation_id: InvestigationId, runtime: RuntimeDep, payload: RerunIn | None = None) -> Accepted:
    """Investigate the same report again (a new investigation)."""
    try:
        return await service.rerun(runtime, investigation_id, payload.extra_context if payload else None)
    except service.NotFoundError as exc:
        raise _missing(investigation_id) from exc


class FeedbackIn(BaseModel):
    """A verdict on a diagnosis."""

    model_config = ConfigDict(extra="forbid")

    verdict: Feedback
    """correct, partly or wrong."""
    note: Annotated[Text, Field(max_length=5000)] = ""
    """What was right or wrong; kept as memory for later runs on the repository."""


@router.post("/{investigation_id}/feedback", status_code=status.HTTP_201_CREATED, dependencies=[Writer], responses=_NOT_FOUND)
async def feedback(investigation_id: InvestigationId, payload: FeedbackIn, runtime: RuntimeDep) -> FeedbackView:
    """Record a person's verdict."""
    try:
        return await service.give_feedback(runtime, investigation_id, payload.verdict, payload.note)
    except service.NotFoundError as exc:
        raise _missing(investigation_id) from exc


class CancelOut(BaseModel):
    """Answer to a cancel request."""

    id: int
    """Investigation id."""
    status: Status
    """Status now (`running` until the run notices, within a second)."""


@router.post("/{investigation_id}/cancel", status_code=status.HTTP_202_ACCEPTED, dependencies=[Writer], responses=_NOT_FOUND)
async def cancel(investigation_id: InvestigationId, runtime: RuntimeDep) -> CancelOut:
    """Stop a queued or running investigation."""
    try:
        return CancelOut(id=investigation_id, status=await service.cancel(runtime, investigation_id))
    except service.NotFoundError as exc:
        raise _missing(investigation_id) from exc

"""`POST /api/reports`: the intake."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, status
from pydantic import BaseModel, ConfigDict, Field

from app import service
from app.deps import ApiAuth, RuntimeDep, Writer
from app.routes._types import Name, bounded_text
from app.views import Accepted
from schemas import BugReport, Source
from schemas.report import MAX_BODY_CHARS, MAX_TITLE_CHARS

router = APIRouter(prefix="/api/reports", tags=["reports"], dependencies=[ApiAuth])


class ReportIn(BaseModel):
    """A bug report sent to the API."""

    model_config = ConfigDict(extra="forbid")

    repo: Name
    """Registered repository name (`GET /api/repos`)."""
    title: bounded_text(MAX_TITLE_CHARS, min_length=1, strip=True)
    """One-line title; not blank."""
    body: bounded_text(MAX_BODY_CHARS) = ""
    """Description, stack traces, logs."""
    ref: bounded_text(200, min_length=1, strip=True) | None = None
    """Branch, tag, commit or version; default branch head when absent."""
    labels: Annotated[list[bounded_text(100)], Field(max_length=50)] = Field(default_factory=list)
    """Tracker labels (used by classification)."""
    reporter: bounded_text(200) | None = None
    """Who filed it."""
    url: bounded_text(2000) | None = None
    """Link back to the issue, if any."""


@router.post(
    "",
    status_code=status.HTTP_202_ACCEPTED,
    dependencies=[Writer],
    responses={404: {"description": "Unknown repository"}, 413: {"description": "Body too large"}},
)
async def submit_report(payload: ReportIn, runtime: RuntimeDep) -> Accepted:
    """Store, classify and queue a report; answers once it is committed."""
    report = BugReport(source=Source.api, **payload.model_dump())
    try:
        return await service.submit_report(runtime, report)
    except service.UnknownRepositoryError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc

"""`/webhooks/{provider}`: GitHub, GitLab, Sentry and Jira deliveries (each verified by its own secret)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app import service
from app.deps import RuntimeDep
from schemas import Source

router = APIRouter(prefix="/webhooks", tags=["webhooks"])


@router.post(
    "/{provider}",
    responses={
        202: {"description": "Accepted or ignored (with the reason)"},
        200: {"description": "Redelivery of a known delivery id"},
        400: {"description": "Malformed delivery"},
        401: {"description": "Missing or forged signature"},
    },
)
async def receive(provider: Literal["github", "gitlab", "sentry", "jira"], request: Request, runtime: RuntimeDep) -> JSONResponse:
    """Verify, record and (for bug reports on registered repositories) queue a delivery."""
    body = await request.body()
    answer = await service.handle_webhook(
        runtime, Source(provider), dict(request.headers), body, dict(request.query_params)
    )
    return JSONResponse(answer.body, status_code=answer.status_code)

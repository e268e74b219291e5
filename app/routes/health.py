"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response, status
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST
from app import store
from app.deps import ApiAuth, RuntimeDep, ReadSessionDep

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/ready", responses={503: {"description": "Database unreachable"}})
async def ready(runtime: RuntimeDep) -> JSONResponse:
    """The database answers: the service can take reports."""
    if await runtime.db.ping():
        return JSONResponse({"status": "ready", "database": runtime.db.engine.dialect.name})
    return JSONResponse({"status": "unavailable", "detail": "database unreachable"}, status.HTTP_503_SERVICE_UNAVAILABLE)


@router.get("/metrics", dependencies=[ApiAuth], response_class=Response, responses={200: {"content": {"text/plain": {}}}})
async def metrics(runtime: RuntimeDep, session: ReadSessionDep) -> Response:
    """Prometheus exposition: investigations by status and classification, tool calls, tokens, durations."""
    counts = await store.count_investigations(session)
    totals = await store.run_totals(session)
    return Response(runtime.metrics.render(counts, totals), media_type=CONTENT_TYPE_LATEST)

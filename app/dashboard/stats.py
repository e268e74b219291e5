"""The dashboard's statistics page."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.dashboard import queries as dq
from app.dashboard import view
from app.dashboard._pages import render as _render
from app.dashboard._pages import runtime_of as _runtime

router = APIRouter(include_in_schema=False)
"""The route of the statistics page; `app.dashboard.routes.router` includes it."""


# ---------------------------------------------------------------------------------------------- stats


@router.get("/stats", response_class=HTMLResponse)
async def stats_page(request: Request) -> Response:
    """Charts: tool calls per investigation, durations, termination reasons, feedback accuracy over time."""
    async with _runtime(request).db.read_session() as s:
        facts = await dq.run_facts(s)
        verdicts = await dq.verdicts(s)
    return _render(request, "stats.html", {"nav": "stats", "stats": view.stats_of(facts, verdicts)})

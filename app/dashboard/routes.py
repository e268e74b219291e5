"""The dashboard: server-rendered pages over the store, with a few lines of static JavaScript for live updates.

Pages: `/` (investigations), `/investigations/{id}` (diagnosis and funnel timeline), `/reports/new`, `/stats`,
`/login`. Forms post back here (CSRF-checked) and call the same store and job functions as the JSON API.

This module holds the static files and the investigations list, and includes one router per page group:
`investigation.py` (one investigation and its actions), `reports.py` (new report), `stats.py`, `login.py`
(login, logout); what every page shares is in `_pages.py`. The names of those modules are re-exported here.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from app import store
from app.dashboard import investigation, login, reports, stats, view
from app.dashboard import queries as dq
from app.dashboard._pages import STATIC_DIR, TEMPLATES_DIR, templates
from app.dashboard._pages import enum_or_none as _enum_or_none
from app.dashboard._pages import inline_code as _inline_code  # noqa: F401  (its old name here; the tests use it)
from app.dashboard._pages import render as _render
from app.dashboard._pages import runtime_of as _runtime
from app.dashboard.investigation import (
    MAX_CONTEXT_CHARS,
    MAX_NOTE_CHARS,
    cancel_action,
    feedback_action,
    investigation_page,
    rerun_action,
    status_json,
    timeline_partial,
)
from app.dashboard.login import login_action, login_page, logout_action
from app.dashboard.reports import new_report_action, new_report_page
from app.dashboard.stats import stats_page
from schemas import Classification, Status

PAGE_SIZE = 25
"""Investigations per page of the list."""
_STATIC_TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml", ".png": "image/png"}

router = APIRouter(include_in_schema=False)
"""Every dashboard route; `create_app` includes it."""


# ---------------------------------------------------------------------------------------------- static files


@router.get("/static/{name}")
async def static_file(name: str) -> Response:
    """One of the dashboard's own CSS, JS or image files."""
    path = STATIC_DIR / name
    if "/" in name or name.startswith(".") or path.suffix not in _STATIC_TYPES or not path.is_file():
        return Response("not found", status_code=404, media_type="text/plain")
    return FileResponse(path, media_type=_STATIC_TYPES[path.suffix], headers={"Cache-Control": "public, max-age=86400"})


@router.get("/favicon.ico")
async def favicon() -> Response:
    """Browsers ask for it; the SVG icon is the answer."""
    return RedirectResponse("/static/favicon.svg", status_code=301)


# ---------------------------------------------------------------------------------------------- list


def _filters(request: Request) -> dict[str, Any]:
    q = request.query_params
    f = {
        "q": (q.get("q") or "").strip()[:200],
        "repo": (q.get("repo") or "").strip()[:200],
        "status": q.get("status") if _enum_or_none(Status, q.get("status")) else "",
        "classification": q.get("classification") if _enum_or_none(Classification, q.get("classification")) else "",
    }
    f["any"] = any(f.values())
    try:
        f["page"] = max(1, min(10_000, int(q.get("page") or 1)))
    except ValueError:
        f["page"] = 1
    return f


async def _list_data(request: Request) -> tuple[dict[str, Any], list[view.Row], int, list[str]]:
    f = _filters(request)
    async with _runtime(request).db.read_session() as s:
        page = await dq.search_investigations(
            s,
            repo=f["repo"] or None,
            status=_enum_or_none(Status, f["status"]),
            classification=_enum_or_none(Classification, f["classification"]),
            text=f["q"] or None,
            limit=PAGE_SIZE,
            offset=(f["page"] - 1) * PAGE_SIZE,
        )
        repos = sorted({r.name for r in await store.list_repositories(s)} | set(await dq.known_repos(s)))
    rows = [view.row_of_summary(item) for item in page.items]
    return f, rows, page.total, repos


@router.get("/", response_class=HTMLResponse)
async def investigations_page(request: Request) -> Response:
    """The investigations list: filters, search, pagination; new rows appear without a reload."""
    f, rows, total, repos = await _list_data(request)
    pages = max(1, math.ceil(total / PAGE_SIZE))
    params = {k: f[k] for k in ("q", "repo", "status", "classification") if f[k]}

    def page_url(n: int) -> str:
        return "/?" + urlencode({**params, "page": n})

    live_url = "/partials/investigations"
    return _render(
        request,
        "investigations.html",
        {
            "nav": "investigations",
            "rows": rows,
            "total": total,
            "filters": f,
            "repos": repos,
            "statuses": [s.value for s in Status],
            "classifications": [c.value for c in Classification],
            "page": f["page"],
            "pages": pages,
            "page_url": page_url,
            "live_url": live_url,
        },
    )


@router.get("/partials/investigations", response_class=HTMLResponse)
async def investigation_rows(request: Request) -> Response:
    """The table rows of the list for the current filters (polled by the page); the total is in X-Total-Count."""
    _, rows, total, _ = await _list_data(request)
    response = templates.TemplateResponse(request, "_investigation_rows.html", {"rows": rows})
    response.headers["X-Total-Count"] = str(total)
    return response


# ---------------------------------------------------------------------------------------------- the page groups

router.include_router(investigation.router)
router.include_router(reports.router)
router.include_router(stats.router)
router.include_router(login.router)

__all__ = (
    "MAX_CONTEXT_CHARS", "MAX_NOTE_CHARS", "PAGE_SIZE", "STATIC_DIR", "TEMPLATES_DIR", "cancel_action", "favicon",
    "feedback_action", "investigation_page", "investigation_rows", "investigations_page", "login_action",
    "login_page", "logout_action", "new_report_action", "new_report_page", "rerun_action", "router", "static_file",
    "stats_page", "status_json", "templates", "timeline_partial",
)

"""The dashboard's page of one investigation: diagnosis, cited code, funnel timeline, status polling, and the
actions posted from it (cancel, rerun, feedback)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from app import service, store
from app.dashboard import queries as dq
from app.dashboard import timeline, view
from app.dashboard._pages import FLASH as _FLASH
from app.dashboard._pages import enum_or_none as _enum_or_none
from app.dashboard._pages import error_page as _error_page
from app.dashboard._pages import form_fields as _form
from app.dashboard._pages import guard as _guard
from app.dashboard._pages import render as _render
from app.dashboard._pages import runtime_of as _runtime
from app.dashboard._pages import templates
from app.repos import tree_path
from schemas import BugReport, Feedback

MAX_NOTE_CHARS = 4000
"""Longest feedback note kept."""
MAX_CONTEXT_CHARS = 20_000
"""Longest extra context for a rerun."""

router = APIRouter(include_in_schema=False)
"""The routes of one investigation's page and its actions; `app.dashboard.routes.router` includes it."""


# ---------------------------------------------------------------------------------------------- detail


async def _citations(request: Request, detail: Any) -> list[view.Citation]:
    diagnosis = detail.diagnosis
    if diagnosis is None or not diagnosis.affected_files:
        return []
    runtime = _runtime(request)
    location = None
    if detail.repo:
        async with runtime.db.read_session() as s:
            repo = await store.get_repository(s, detail.repo)
        location = repo.location if repo else None
    commit = detail.commit or diagnosis.stats.commit
    trees: list[Path] = []
    if detail.repo and commit:
        trees.append(tree_path(runtime.settings, detail.repo, commit))
    elif location and not commit and Path(location).is_dir():
        trees.append(Path(location))  # a plain directory is investigated as is

    def build() -> list[view.Citation]:
        cache: dict[str, str | None] = {}
        out = []
        for item in diagnosis.affected_files:
            if item.path not in cache:
                cache[item.path] = view.read_source(location, commit, item.path, trees)
            url = view.web_url(location, commit, item.path, item.line_start, item.line_end)
            out.append(view.citation_of(item, cache[item.path], url))
        return out

    return await asyncio.to_thread(build)


async def _timeline(request: Request, investigation_id: int) -> timeline.Timeline:
    async with _runtime(request).db.read_session() as s:
        events = await store.trace_events(s, investigation_id)
    return timeline.timeline_of(e.data | {"kind": e.kind} for e in events)



def _not_found(request: Request, investigation_id: int) -> Response:
    """The 404 page of an investigation id that does not exist."""
    return _error_page(request, 404, "Not found", f"There is no investigation #{investigation_id}.")

@router.get("/investigations/{investigation_id}", response_class=HTMLResponse)
async def investigation_page(request: Request, investigation_id: int) -> Response:
    """One investigation: diagnosis, cited code, proposed changes, funnel timeline, actions."""
    async with _runtime(request).db.read_session() as s:
        detail = await store.get_investigation(s, investigation_id)
        reruns = await dq.reruns_of(s, investigation_id) if detail is not None else []
    if detail is None:
        return _not_found(request, investigation_id)
    report: BugReport = detail.report
    status = detail.status.value
    meta = [f"from {report.source.value}"]
    if report.reporter:
        meta.append(f"by {report.reporter}")
    if report.ref:
        meta.append(f"ref {report.ref}")
    if detail.extra_context:
        meta.append("rerun with extra context")
    return _render(
        request,
        "investigation.html",
        {
            "inv": detail,
            "title": report.title or view.first_line(report.body) or "(untitled)",
            "status": status,
            "terminal": detail.status in view.TERMINAL,
            "classification": detail.classification.value,
            "diagnosis": detail.diagnosis,
            "citations": await _citations(request, detail),
            "timeline": await _timeline(request, investigation_id),
            "commit": detail.commit or (detail.diagnosis.stats.commit if detail.diagnosis else None),
            "explorer": detail.explorer,
            "created": view.when_text(detail.created_at),
            "duration": view.duration_text(detail.duration_s),
            "tool_calls": detail.tool_calls,
            "error": detail.error,
            "feedback": [
                {"verdict": f.verdict.value, "note": f.note, "created": view.when_text(f.created_at)} for f in detail.feedback
            ],
            "report_text": report.text + (f"\n\n--- extra context ---\n{detail.extra_context}" if detail.extra_context else ""),
            "report_meta": " · ".join(meta),
            "report_markdown": detail.report_markdown,
            "reruns": [{"id": i, "status": st.value} for i, st in reruns],
            # the feedback redirect lands on the actions card: confirm there, where the eye is
            "feedback_saved": _FLASH["feedback"][1] if request.query_params.get("msg") == "feedback" else None,
            **({"flash": None} if request.query_params.get("msg") == "feedback" else {}),
            "classified": f"{detail.classification_reason} ({detail.classification_confidence:.0%})"
            if detail.classification_reason
            else "",
        },
    )


@router.get("/investigations/{investigation_id}/timeline", response_class=HTMLResponse)
async def timeline_partial(request: Request, investigation_id: int) -> Response:
    """The funnel timeline alone (re-fetched by the page as events arrive)."""
    timeline = await _timeline(request, investigation_id)
    return templates.TemplateResponse(request, "_timeline.html", {"timeline": timeline})


@router.get("/investigations/{investigation_id}/status")
async def status_json(request: Request, investigation_id: int) -> Response:
    """`{"status", "terminal", "events"}` of one investigation (polled by the page while it runs)."""
    async with _runtime(request).db.read_session() as s:
        status = await store.get_status(s, investigation_id)
        events = await store.trace_event_count(s, investigation_id) if status is not None else 0
    if status is None:
        return JSONResponse({"detail": "not found"}, status_code=404)
    return JSONResponse({"status": status.value, "terminal": status in view.TERMINAL, "events": events})


@router.post("/investigations/{investigation_id}/cancel")
async def cancel_action(request: Request, investigation_id: int) -> Response:
    """Cancel a queued or running investigation."""
    form = await _form(request)
    if (refusal := await _guard(request, form)) is not None:
        return refusal
    async with _runtime(request).db.read_session() as s:
        before = await store.get_status(s, investigation_id)
    if before is None:
        return _not_found(request, investigation_id)
    try:
        await service.cancel(_runtime(request), investigation_id)
    except service.NotFoundError:
        return _not_found(request, investigation_id)
    msg = "not-running" if before in view.TERMINAL else "cancelled"
    return RedirectResponse(f"/investigations/{investigation_id}?msg={msg}", status_code=303)


@router.post("/investigations/{investigation_id}/rerun")
async def rerun_action(request: Request, investigation_id: int) -> Response:
    """Queue a new investigation of the same report, with optional extra context."""
    form = await _form(request)
    if (refusal := await _guard(request, form)) is not None:
        return refusal
    context = (form.get("extra_context") or "").strip()[:MAX_CONTEXT_CHARS] or None
    try:
        accepted = await service.rerun(_runtime(request), investigation_id, context)
    except service.NotFoundError:
        return _not_found(request, investigation_id)
    return RedirectResponse(f"/investigations/{accepted.id}?msg=rerun", status_code=303)


@router.post("/investigations/{investigation_id}/feedback")
async def feedback_action(request: Request, investigation_id: int) -> Response:
    """Record correct / partly / wrong with an optional note."""
    form = await _form(request)
    if (refusal := await _guard(request, form)) is not None:
        return refusal
    verdict = _enum_or_none(Feedback, form.get("verdict"))
    if verdict is None:
        return _error_page(request, 400, "Pick a verdict", "Choose correct, partly or wrong, then send the feedback again.")
    note = (form.get("note") or "").strip()[:MAX_NOTE_CHARS]
    try:
        await service.give_feedback(_runtime(request), investigation_id, verdict, note)
    except service.NotFoundError:
        return _not_found(request, investigation_id)
    return RedirectResponse(f"/investigations/{investigation_id}?msg=feedback#act-h", status_code=303)

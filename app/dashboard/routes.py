"""The dashboard: server-rendered pages over the store, with a few lines of static JavaScript for live updates.

Pages: `/` (investigations), `/investigations/{id}` (diagnosis and funnel timeline), `/reports/new`, `/stats`,
`/login`. Forms post back here (CSRF-checked) and call the same store and job functions as the JSON API.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape
from pydantic import ValidationError

from app import _dashboard_view as view
from app import dashboard_queries as dq
from app import security, service, store
from app.repos import tree_path
from schemas import BugReport, Classification, Feedback, Source, Status

TEMPLATES_DIR = Path(__file__).resolve().parents[1] / "templates"
STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
PAGE_SIZE = 25
"""Investigations per page of the list."""
MAX_NOTE_CHARS = 4000
"""Longest feedback note kept."""
MAX_CONTEXT_CHARS = 20_000
"""Longest extra context for a rerun."""
_STATIC_TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml", ".png": "image/png"}
_FLASH = {
    "feedback": ("ok", "Thanks — your feedback was saved and will guide later runs on this repository."),
    "cancelled": ("ok", "Cancellation requested; the run stops within a second."),
    "not-running": ("error", "This investigation is not running any more."),
    "rerun": ("ok", "Rerun queued. This is the new investigation."),
    "submitted": ("ok", "Report received; the investigation starts shortly."),
    "skipped": ("ok", "Report stored. Its classification is not investigated, so no run was started."),
    "logged-out": ("ok", "You are logged out."),
}

router = APIRouter(include_in_schema=False)
"""Every dashboard route; `create_app` includes it."""


@lru_cache(maxsize=64)
def _static_version(name: str) -> str:
    try:
        return hashlib.sha256((STATIC_DIR / name).read_bytes()).hexdigest()[:10]
    except OSError:
        return "0"


def _diff_lines(diff: str) -> list[tuple[str, str]]:
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            cls = "meta-line"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        elif line.startswith("@@"):
            cls = "hunk"
        else:
            cls = "ctx"
        out.append((cls, line))
    return out


def _claim_text(claim: Any) -> str:
    if isinstance(claim, dict):
        return ", ".join(f"{k}={v}" for k, v in claim.items() if v not in (None, ""))
    return str(claim)


_TICKS = re.compile(r"`([^`\n]+)`")


def _inline_code(text: Any) -> Markup:
    """Escape a text, then show its `backticked` spans as code (the only markup a diagnosis text gets)."""
    return Markup(_TICKS.sub(lambda m: f"<code>{m.group(1)}</code>", str(escape(str(text or "")))))


def _fmtnum(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".") if not value.is_integer() else str(int(value))
    return str(value)


templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
"""The dashboard's Jinja2 templates (autoescaped: report text and code are always shown as text)."""
templates.env.globals["static"] = lambda name: f"/static/{name}?v={_static_version(name)}"
templates.env.filters["diff_lines"] = _diff_lines
templates.env.filters["claim_text"] = _claim_text
templates.env.filters["fmtnum"] = _fmtnum
templates.env.filters["md"] = _inline_code


# ---------------------------------------------------------------------------------------------- helpers


def _runtime(request: Request) -> Any:
    return request.app.state.runtime


def _can_write(request: Request) -> bool:
    """Acting (submit, cancel, rerun, feedback) needs a login whenever an API token is configured."""
    policy = security.policy_of(request)
    return policy.token is None or request.scope.get("state", {}).get("auth") is not None


def _render(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    msg = request.query_params.get("msg")
    base = {
        "csrf_token": security.csrf_token(request),
        "logged_in": request.scope.get("state", {}).get("auth") == "session",
        "show_login": security.policy_of(request).token is not None and request.scope.get("state", {}).get("auth") is None,
        "can_write": _can_write(request),
        "flash": {"kind": _FLASH[msg][0], "text": _FLASH[msg][1]} if msg in _FLASH else None,
        "nav": "",
    }
    base.update(context)
    return templates.TemplateResponse(request, name, base, status_code=status_code)


def _error_page(request: Request, status_code: int, heading: str, message: str) -> HTMLResponse:
    return _render(request, "error.html", {"heading": heading, "message": message}, status_code=status_code)


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str)}


async def _guard(request: Request, form: dict[str, str]) -> Response | None:
    """The refusal for a form post that lacks a valid CSRF token or the right to act, else None."""
    if not security.csrf_ok(request, form.get(security.CSRF_FIELD)):
        return _error_page(
            request, 403, "Form expired", "The form's security token did not match your session. Reload the page and try again."
        )
    if not _can_write(request):
        return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
    return None


def _enum_or_none(enum: type, value: str | None) -> Any:
    try:
        return enum(value) if value else None
    except ValueError:
        return None


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


async def _timeline(request: Request, investigation_id: int) -> view.Timeline:
    async with _runtime(request).db.read_session() as s:
        events = await store.trace_events(s, investigation_id)
    return view.timeline_of(e.data | {"kind": e.kind} for e in events)


@router.get("/investigations/{investigation_id}", response_class=HTMLResponse)
async def investigation_page(request: Request, investigation_id: int) -> Response:
    """One investigation: diagnosis, cited code, proposed changes, funnel timeline, actions."""
    async with _runtime(request).db.read_session() as s:
        detail = await store.get_investigation(s, investigation_id)
        reruns = await dq.reruns_of(s, investigation_id) if detail is not None else []
    if detail is None:
        return _error_page(request, 404, "Not found", f"There is no investigation #{investigation_id}.")
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
        found = await dq.status_of(s, investigation_id)
    if found is None:
        return JSONResponse({"detail": "not found"}, status_code=404)
    status, events = found
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
        return _error_page(request, 404, "Not found", f"There is no investigation #{investigation_id}.")
    try:
        await service.cancel(_runtime(request), investigation_id)
    except service.NotFoundError:
        return _error_page(request, 404, "Not found", f"There is no investigation #{investigation_id}.")
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
        return _error_page(request, 404, "Not found", f"There is no investigation #{investigation_id}.")
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
        return _error_page(request, 404, "Not found", f"There is no investigation #{investigation_id}.")
    return RedirectResponse(f"/investigations/{investigation_id}?msg=feedback#act-h", status_code=303)


# ---------------------------------------------------------------------------------------------- new report


async def _repo_names(request: Request) -> list[str]:
    async with _runtime(request).db.read_session() as s:
        return [r.name for r in await store.list_repositories(s)]


@router.get("/reports/new", response_class=HTMLResponse)
async def new_report_page(request: Request) -> Response:
    """The form to paste a bug report and pick a repository."""
    repos = await _repo_names(request)
    form = {"repo": request.query_params.get("repo") or "", "ref": "", "title": "", "body": ""}
    return _render(request, "report_new.html", {"nav": "new", "repos": repos, "form": form, "errors": []})


@router.post("/reports/new")
async def new_report_action(request: Request) -> Response:
    """Store and queue the report, then show its investigation."""
    form = await _form(request)
    if (refusal := await _guard(request, form)) is not None:
        return refusal
    repos = await _repo_names(request)
    values = {k: (form.get(k) or "").strip() for k in ("repo", "ref", "title")}
    values["body"] = (form.get("body") or "").replace("\r\n", "\n")
    errors = []
    if not values["title"] and not values["body"].strip():
        errors.append("Write a title or paste the report.")
    if repos and values["repo"] not in repos:
        errors.append(f"Pick one of the registered repositories ({', '.join(repos)}).")
    report = None
    if not errors:
        try:
            report = BugReport(
                title=values["title"],
                body=values["body"],
                repo=values["repo"] or None,
                ref=values["ref"] or None,
                source=Source.dashboard,
            )
        except ValidationError as exc:
            errors.extend(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    if errors or report is None:
        ctx = {"nav": "new", "repos": repos, "form": values, "errors": errors}
        return _render(request, "report_new.html", ctx, status_code=422)
    try:
        accepted = await service.submit_report(_runtime(request), report)
    except service.UnknownRepositoryError:
        ctx = {"nav": "new", "repos": repos, "form": values, "errors": [f"Repository {report.repo!r} is not registered."]}
        return _render(request, "report_new.html", ctx, status_code=422)
    msg = "skipped" if accepted.status == Status.skipped else "submitted"
    return RedirectResponse(f"/investigations/{accepted.id}?msg={msg}", status_code=303)


# ---------------------------------------------------------------------------------------------- stats


@router.get("/stats", response_class=HTMLResponse)
async def stats_page(request: Request) -> Response:
    """Charts: tool calls per investigation, durations, termination reasons, feedback accuracy over time."""
    async with _runtime(request).db.read_session() as s:
        facts = await dq.run_facts(s)
        verdicts = await dq.verdicts(s)
    return _render(request, "stats.html", {"nav": "stats", "stats": view.stats_of(facts, verdicts)})


# ---------------------------------------------------------------------------------------------- login


def _login_page(request: Request, next_url: str, error: str | None, status_code: int) -> HTMLResponse:
    return _render(request, "login.html", {"nav": "login", "next": next_url, "error": error}, status_code=status_code)


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request) -> Response:
    """The token login form."""
    next_url = security.safe_next(request.query_params.get("next"))
    return _login_page(request, next_url, None, 200)


@router.post("/login")
async def login_action(request: Request) -> Response:
    """Check the token; on success start a logged-in session and go where the user was heading."""
    form = await _form(request)
    next_url = security.safe_next(form.get("next"))
    policy = security.policy_of(request)
    client = request.client.host if request.client else "?"
    throttle: security.LoginThrottle = request.app.state.login_throttle
    if not security.csrf_ok(request, form.get(security.CSRF_FIELD)):
        return _login_page(request, next_url, "The form expired. Try again.", 403)
    if throttle.blocked(client):
        return _login_page(request, next_url, "Too many failed attempts. Wait a few minutes.", 429)
    if not policy.token:
        return _login_page(request, next_url, "No API token is configured on this service, so there is nothing to log in to.", 400)
    if not security.token_matches(policy, form.get("token")):
        throttle.failed(client)
        return _login_page(request, next_url, "That token is not right.", 401)
    security.start_login(request, authenticated=True)
    return RedirectResponse(next_url, status_code=303)


@router.post("/logout")
async def logout_action(request: Request) -> Response:
    """End the session."""
    form = await _form(request)
    if not security.csrf_ok(request, form.get(security.CSRF_FIELD)):
        return _error_page(request, 403, "Form expired", "Reload the page and try again.")
    security.end_session(request)
    return RedirectResponse("/login?msg=logged-out", status_code=303)


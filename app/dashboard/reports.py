"""The dashboard's new-report page: the form, and its post that stores and queues the report."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from app import service, store
from app.dashboard._pages import form_fields as _form
from app.dashboard._pages import guard as _guard
from app.dashboard._pages import render as _render
from app.dashboard._pages import runtime_of as _runtime
from schemas import BugReport, Source, Status

router = APIRouter(include_in_schema=False)
"""The routes of the new-report page; `app.dashboard.routes.router` includes it."""


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

"""What every dashboard page shares: the Jinja2 templates and their filters, rendering, error pages, form
reading and the guard of form posts. Used by the dashboard's routers (`app/dashboard/routes.py` and the page
modules it includes)."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from app import security
from funnel.inline import CODE_SPAN, span_text

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
FLASH = {
    "feedback": ("ok", "Thanks — your feedback was saved and will guide later runs on this repository."),
    "cancelled": ("ok", "Cancellation requested; the run stops within a second."),
    "not-running": ("error", "This investigation is not running any more."),
    "rerun": ("ok", "Rerun queued. This is the new investigation."),
    "submitted": ("ok", "Report received; the investigation starts shortly."),
    "skipped": ("ok", "Report stored. Its classification is not investigated, so no run was started."),
    "logged-out": ("ok", "You are logged out."),
}
"""The flash messages a `?msg=` query shows: kind ("ok" or "error") and text."""


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


def _code(m: re.Match[str]) -> str:
    return f"<code>{span_text(m.group(2))}</code>"


def inline_code(text: Any) -> Markup:
    """Escape a text, then show its `backticked` spans as code (the only markup a diagnosis text gets)."""
    return Markup(CODE_SPAN.sub(_code, str(escape(str(text or "")))))


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
templates.env.filters["md"] = inline_code


# ---------------------------------------------------------------------------------------------- helpers


def runtime_of(request: Request) -> Any:
    """The service's `Runtime` (on `app.state`)."""
    return request.app.state.runtime


def _can_write(request: Request) -> bool:
    """Acting (submit, cancel, rerun, feedback) needs a login whenever an API token is configured."""
    policy = security.policy_of(request)
    return policy.token is None or request.scope.get("state", {}).get("auth") is not None


def render(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    """A page from its template, with what every page needs (CSRF token, login state, flash message, nav)."""
    msg = request.query_params.get("msg")
    base = {
        "csrf_token": security.csrf_token(request),
        "logged_in": request.scope.get("state", {}).get("auth") == "session",
        "show_login": security.policy_of(request).token is not None and request.scope.get("state", {}).get("auth") is None,
        "can_write": _can_write(request),
        "flash": {"kind": FLASH[msg][0], "text": FLASH[msg][1]} if msg in FLASH else None,
        "nav": "",
    }
    base.update(context)
    return templates.TemplateResponse(request, name, base, status_code=status_code)


def error_page(request: Request, status_code: int, heading: str, message: str) -> HTMLResponse:
    """The error page with a heading and a message."""
    return render(request, "error.html", {"heading": heading, "message": message}, status_code=status_code)


async def form_fields(request: Request) -> dict[str, str]:
    """The posted form's text fields (file uploads dropped)."""
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str)}


async def guard(request: Request, form: dict[str, str]) -> Response | None:
    """The refusal for a form post that lacks a valid CSRF token or the right to act, else None."""
    if not security.csrf_ok(request, form.get(security.CSRF_FIELD)):
        return error_page(
            request, 403, "Form expired", "The form's security token did not match your session. Reload the page and try again."
        )
    if not _can_write(request):
        return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
    return None


def enum_or_none(enum: type, value: str | None) -> Any:
    """The member of `enum` named by `value`, or None when it is empty or no member."""
    try:
        return enum(value) if value else None
    except ValueError:
        return None

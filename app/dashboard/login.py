"""The dashboard's login: the token form, logging in and logging out."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app import security
from app.dashboard._pages import error_page as _error_page
from app.dashboard._pages import form_fields as _form
from app.dashboard._pages import render as _render

router = APIRouter(include_in_schema=False)
"""The login and logout routes; `app.dashboard.routes.router` includes it."""


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
    if not policy.token:
        return _login_page(request, next_url, "No API token is configured on this service, so there is nothing to log in to.", 400)
    if not security.token_matches(policy, form.get("token")):  # the right token always passes; failures are throttled
        if throttle.blocked(client):
            return _login_page(request, next_url, "Too many failed attempts. Wait a few minutes.", 429)
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

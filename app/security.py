"""Access control for the service: token login with a signed session cookie, CSRF tokens, and strict headers.

Diagnoses quote private code. On a loopback address the service is open to the local user; listening anywhere
else (or with `require_auth` set), every page and API read needs the API token: scripts send it as a bearer
token, people type it once into `/login` and get a signed, HTTP-only, `SameSite=Strict` session cookie.
Every response carries a strict Content-Security-Policy, so pages can run only the service's own static files.

The service calls `install_security(app, settings)` once in `create_app`. The cookie itself (signing, decoding,
the CSRF tokens bound to it) is `app/cookies.py`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi.security import HTTPBearer
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.cookies import SESSION_COOKIE, Session, csrf_token_for, decode_session, new_session, same_secret, session_cookie
from app.hosts import HostPolicy, is_loopback
from app.sessions import FILE_NAME as REVOKED_FILE
from app.sessions import LoginThrottle, SessionRevocations

CSRF_FIELD = "csrf_token"
"""Name of the hidden form field (and `X-CSRF-Token` header) carrying the CSRF token."""
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
"""Sent on every response: no inline script or style, no third-party host, no framing."""
PUBLIC_PATHS = frozenset({"/login", "/health", "/ready", "/healthz", "/livez", "/readyz", "/favicon.ico"})
"""Paths reachable without the token (the login page and liveness probes)."""
PUBLIC_PREFIXES = ("/static/", "/webhooks/", "/api/webhooks/")
"""Path prefixes reachable without the token: static assets, and webhooks (they verify their own signatures)."""
BEARER = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description="`Authorization: Bearer $BUGSLEUTH_API_TOKEN`: needed by every write when a token is set, and by "
    "every read (pages, API, /metrics) when the service listens beyond loopback.",
)
"""The one parser of `Authorization: Bearer ...` (the middleware calls it; OpenAPI declares it)."""
_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class AccessPolicy:
    """Who may read what, derived from the settings once at start-up."""

    require_auth: bool
    """True when every page and API read needs the token."""
    token: str | None
    """The API token (`BUGSLEUTH_API_TOKEN`), or None when none is configured."""
    secret: bytes = field(repr=False)
    """Key that signs session cookies and CSRF tokens."""
    cookie_secure: bool = True
    """Send the session cookie with the `Secure` attribute (needs HTTPS, or a loopback address in browsers)."""
    session_ttl_s: int = 12 * 3600
    """How long a login lasts."""
    max_login_failures: int = 10
    """Failed logins allowed per client address per `login_window_s` before `/login` answers 429."""
    login_window_s: float = 300.0
    """Window for counting failed logins."""
    hosts: HostPolicy = HostPolicy(check=False, names=frozenset())
    """Which `Host` names are answered (DNS rebinding defence)."""

    def host_allowed(self, header: str | None) -> bool:
        """Whether a request with this `Host` header is served."""
        return self.hosts.allows(header)


def _setting(settings: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        value = getattr(settings, name, None)
        if value is not None:
            return value.get_secret_value() if hasattr(value, "get_secret_value") else value
    return default


def access_policy(settings: Any) -> AccessPolicy:
    """Build the access policy from the service settings (host, API token, optional `require_auth` override)."""
    host = _setting(settings, "host", "bind_host", "listen_host", default="127.0.0.1")
    token = _setting(settings, "api_token", "token") or None
    forced = _setting(settings, "require_auth", "dashboard_require_auth")
    require = bool(forced) if forced is not None else not is_loopback(str(host))
    if token:
        secret = hashlib.sha256(b"bugsleuth-session\0" + str(token).encode()).digest()
    else:
        secret = _local_secret(_setting(settings, "data_dir"))
    secure = _setting(settings, "cookie_secure", default=True)
    hosts = HostPolicy.build(require_auth=require, bind_host=str(host), allowed=_setting(settings, "allowed_hosts", default=()))
    return AccessPolicy(
        require_auth=require, token=str(token) if token else None, secret=secret, cookie_secure=bool(secure), hosts=hosts
    )


def _local_secret(data_dir: Any) -> bytes:
    """A signing key kept in the data directory (so every worker process agrees), or a per-process one."""
    if data_dir is None:
        return os.urandom(32)
    path = Path(data_dir) / "session.key"
    try:
        if path.is_file() and len(key := path.read_bytes()) >= 32:
            return key
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".session.key.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(32))
        try:
            os.link(tmp, path)  # atomic and refuses to overwrite: concurrent workers all end up with one key
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        return path.read_bytes()
    except OSError:
        return os.urandom(32)


def token_matches(policy: AccessPolicy, candidate: str | None) -> bool:
    """Whether a presented token is the configured API token (constant-time)."""
    if not policy.token or not candidate:
        return False
    return same_secret(candidate, policy.token)


def is_public(path: str) -> bool:
    """Whether a path is reachable without the token."""
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)


def safe_next(target: str | None) -> str:
    """A local redirect target (path and query only); anything else becomes `/`."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


# ---------------------------------------------------------------------------------------------- request helpers


def policy_of(request: Request) -> AccessPolicy:
    """The access policy installed on the app."""
    return request.app.state.access_policy


def session_of(request: Request) -> Session:
    """The request's session (a fresh anonymous one when the browser sent none)."""
    session = request.scope.get("state", {}).get("session")
    if session is None:  # not behind the middleware (a bare router in a test): give the request its own session
        session = new_session(policy_of(request))
        request.scope.setdefault("state", {})["session"] = session
    return session


def csrf_token(request: Request) -> str:
    """The CSRF token to embed in the page rendered for this request."""
    return csrf_token_for(policy_of(request), session_of(request))


def csrf_ok(request: Request, submitted: str | None) -> bool:
    """Whether a submitted CSRF token (form field or `X-CSRF-Token` header) belongs to this request's session."""
    submitted = submitted or request.headers.get("x-csrf-token")
    if not submitted:
        return False
    return same_secret(submitted, csrf_token(request))


def start_login(request: Request, authenticated: bool) -> None:
    """Replace the request's session (a new id on login, so a planted cookie cannot be reused); sent with the response."""
    policy = policy_of(request)
    session = new_session(policy, authenticated=authenticated)
    state = request.scope.setdefault("state", {})
    state["session"] = session
    state["session_set"] = True


def end_session(request: Request) -> None:
    """Log out: the session's id is revoked (a copy of its cookie is refused from now on, by every process)
    and the browser gets a fresh anonymous session with the response."""
    session = session_of(request)
    if session.authenticated:
        request.app.state.session_revocations.revoke(session.nonce, session.expires)
    start_login(request, authenticated=False)


# ---------------------------------------------------------------------------------------------- the middleware


def _wants_html(scope: Scope, headers: Headers) -> bool:
    return scope["method"] == "GET" and not scope["path"].startswith("/api/") and "text/html" in headers.get("accept", "")


class SecurityMiddleware:
    """Pure ASGI middleware (streams, including server-sent events, pass through untouched).

    On each HTTP request: refuse a `Host` the policy does not answer to (DNS rebinding), decode the session
    cookie (a revoked one counts as none), check bearer or session against the policy, refuse cross-origin writes, and add the security headers (and a new session cookie when one was created).
    """

    def __init__(self, app: ASGIApp, policy: AccessPolicy, revocations: SessionRevocations) -> None:
        self.app = app
        self.policy = policy
        self.revocations = revocations

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        policy = self.policy
        path = scope["path"]
        if not path.startswith(PUBLIC_PREFIXES) and not policy.host_allowed(headers.get("host")):
            await _wrong_host(headers.get("host", ""))(scope, receive, send)
            return
        request = Request(scope)
        session = decode_session(policy, request.cookies.get(SESSION_COOKIE))
        if session is not None and session.authenticated and self.revocations.is_revoked(session.nonce):
            session = None
        state = scope.setdefault("state", {})
        state["session_changed"] = session is None
        if session is None:
            session = new_session(policy)
        state["session"] = session
        credentials = await BEARER(request)
        bearer = credentials.credentials.strip() or None if credentials else None
        bearer_ok = token_matches(policy, bearer)
        state["auth"] = "bearer" if bearer_ok else "session" if session.authenticated else None

        response: Response | None = None
        if scope["method"] in _UNSAFE_METHODS and not path.startswith(PUBLIC_PREFIXES) and not _same_origin(headers):
            response = JSONResponse({"detail": "cross-origin request refused"}, status_code=403)
        elif bearer and not bearer_ok and not is_public(path):
            response = JSONResponse(
                {"detail": "invalid API token"}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
        elif policy.require_auth and not is_public(path) and state["auth"] is None:
            if not policy.token:
                response = JSONResponse(
                    {"detail": "this service listens beyond loopback but has no API token: set BUGSLEUTH_API_TOKEN"},
                    status_code=503,
                )
            elif _wants_html(scope, headers):
                target = path + (("?" + scope["query_string"].decode("latin-1")) if scope.get("query_string") else "")
                response = RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)
            else:
                response = JSONResponse(
                    {"detail": "authentication required: send 'Authorization: Bearer <token>' or log in at /login"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", []))
                present = {k.lower() for k, _ in raw}
                for name, value in _security_headers(path):
                    if name.encode() not in present:
                        raw.append((name.encode(), value.encode()))
                content_type = Headers(raw=raw).get("content-type", "")
                if state.get("session_set") or (state.get("session_changed") and content_type.startswith("text/html")):
                    raw.append((b"set-cookie", session_cookie(policy, state["session"]).encode()))
                message = {**message, "headers": raw}
            await send(message)

        if response is not None:
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)


def _wrong_host(host: str) -> Response:
    shown = host.encode("latin-1", "replace").decode("ascii", "replace")[:100]
    return JSONResponse(
        {
            "detail": f"host {shown!r} is not served here (DNS rebinding defence): use localhost or the address, "
            "or add the name to BUGSLEUTH_ALLOWED_HOSTS"
        },
        status_code=400,
        headers=dict(_security_headers("/")),
    )


def _same_origin(headers: Headers) -> bool:
    """False only when the browser says the request comes from another site or origin (scripts send neither)."""
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:  # modern browsers: authoritative, and present even when Origin is withheld
        return fetch_site in ("same-origin", "none")
    origin = headers.get("origin")
    if origin is None:
        return True
    if origin == "null":
        return False
    return origin.split("://", 1)[-1] == headers.get("host", "")


def _security_headers(path: str) -> list[tuple[str, str]]:
    out = [
        ("content-security-policy", CONTENT_SECURITY_POLICY),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "same-origin"),
        ("cross-origin-opener-policy", "same-origin"),
    ]
    if not path.startswith("/static/"):
        out.append(("cache-control", "no-store"))
    return out


def install_security(app: Any, settings: Any) -> AccessPolicy:
    """Install the access policy and the security middleware on a FastAPI app; returns the policy in force."""
    policy = access_policy(settings)
    data_dir = _setting(settings, "data_dir")
    revocations = SessionRevocations(Path(data_dir) / REVOKED_FILE if data_dir is not None else None)
    app.state.access_policy = policy
    app.state.login_throttle = LoginThrottle(policy)
    app.state.session_revocations = revocations
    app.add_middleware(SecurityMiddleware, policy=policy, revocations=revocations)
    return policy


def describe(policy: AccessPolicy) -> str:
    """One line for the start-up log: whether the service is open or token-protected."""
    return json.dumps({"require_auth": policy.require_auth, "token_configured": bool(policy.token)})

"""The signed session cookie and the CSRF tokens bound to it.

A session is a random id, whether it is logged in, and an expiry, signed with the access policy's key
(HMAC-SHA256): the cookie carries all of it, and the service stores nothing but the ids of sessions logged
out before their expiry (`app/sessions.py`). `app/security.py` decodes the cookie on every request.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # app.security imports this module at run time
    from app.security import AccessPolicy

SESSION_COOKIE = "bugsleuth_session"
"""Name of the session cookie."""


@dataclass(frozen=True)
class Session:
    """The decoded session cookie: a random id, whether it is logged in, and when it expires."""

    nonce: str
    """Random id; CSRF tokens are bound to it."""
    authenticated: bool
    """True after a successful login."""
    expires: int
    """Unix time after which the cookie is refused."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _sign(policy: AccessPolicy, payload: str) -> str:
    return _b64(hmac.new(policy.secret, payload.encode(), hashlib.sha256).digest())


def encode_session(policy: AccessPolicy, session: Session) -> str:
    """The signed cookie value for a session."""
    payload = f"v1.{session.expires}.{session.nonce}.{int(session.authenticated)}"
    return f"{payload}.{_sign(policy, payload)}"


def decode_session(policy: AccessPolicy, value: str | None, *, now: float | None = None) -> Session | None:
    """The session in a cookie value, or None when it is missing, forged, malformed or expired."""
    if not value or not value.isascii():
        return None
    payload, _, signature = value.rpartition(".")
    if not payload or not same_secret(signature, _sign(policy, payload)):
        return None
    try:
        version, expires_text, nonce, auth = payload.split(".")
        expires = int(expires_text)
    except ValueError:
        return None
    if version != "v1" or expires < (now if now is not None else time.time()):
        return None
    return Session(nonce=nonce, authenticated=auth == "1", expires=expires)


def new_session(policy: AccessPolicy, *, authenticated: bool = False) -> Session:
    """A fresh session with a new random id."""
    return Session(nonce=secrets.token_urlsafe(18), authenticated=authenticated, expires=int(time.time()) + policy.session_ttl_s)


def session_cookie(policy: AccessPolicy, session: Session | None) -> str:
    """The `Set-Cookie` header value for a session (None clears the cookie)."""
    if session is None:
        value, max_age = "", 0
    else:
        value, max_age = encode_session(policy, session), policy.session_ttl_s
    attrs = [f"{SESSION_COOKIE}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Strict"]
    if policy.cookie_secure:
        attrs.append("Secure")
    return "; ".join(attrs)


def csrf_token_for(policy: AccessPolicy, session: Session) -> str:
    """The CSRF token bound to a session; forms carry it in a hidden field."""
    return _sign(policy, f"csrf.{session.nonce}")


def same_secret(presented: str, expected: str) -> bool:
    """Constant-time comparison of a presented secret with the expected one, as bytes: any text the client
    sent (non-ASCII header bytes decode to Latin-1 characters) is merely a mismatch."""
    return hmac.compare_digest(presented.encode("utf-8", "replace"), expected.encode("utf-8", "replace"))

"""Helpers shared by the provider parsers: header lookup, signature checks, JSON decoding, outcome builders."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from schemas import BugReport, Source
from schemas.report import clip_body, clip_title

from app.webhooks._outcome import WebhookOutcome


class Invalid(Exception):
    """A delivery that is not what its provider sends (raised inside parsers, turned into `invalid`)."""


def lower_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers with lower-case names (HTTP header names are case-insensitive)."""
    return {str(k).lower(): str(v) for k, v in headers.items()}


def hmac_sha256_hex(secret: str, body: bytes) -> str:
    """Hex HMAC-SHA256 of the raw body."""
    return hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def same(a: str, b: str) -> bool:
    """Constant-time string comparison."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def signs_body(digest: str, secret: str, body: bytes) -> bool:
    """Whether a hex HMAC-SHA256 digest (any case) is the body's signature with `secret`."""
    return same(digest.lower(), hmac_sha256_hex(secret, body))


def shared_secret_problem(
    headers: Mapping[str, str], secret: str, query: Mapping[str, str] | None, *, signature: str
) -> str | None:
    """None when the delivery carries the shared secret itself (for senders that cannot sign), else why not:
    `Authorization: Bearer <secret>`, `X-Bugsleuth-Token: <secret>` or `?secret=<secret>` in the URL.
    `signature` names the provider's signature header, for the message when nothing at all was sent."""
    h = lower_headers(headers)
    auth = h.get("authorization", "")
    token = auth[7:].strip() if auth.lower().startswith("bearer ") else h.get("x-bugsleuth-token", "")
    token = token or (query or {}).get("secret", "")
    if not token:
        return f"missing {signature}, bearer token, X-Bugsleuth-Token header or ?secret= parameter"
    if not same(token, secret):
        return "the shared secret does not match"
    return None


_FORM = "application/x-www-form-urlencoded"


def form_payload(body: bytes) -> bytes:
    """The JSON a form-encoded delivery carries in its `payload` field (GitHub's default content type for a new
    webhook), or `Invalid` saying what is wrong with it."""
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=True)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Invalid(f"body is not valid form data ({_FORM}): {exc}") from None
    if not fields.get("payload"):
        raise Invalid(f"form-encoded body ({_FORM}) has no `payload` field; fields: {sorted(fields)[:10]}")
    return fields["payload"][0].encode("utf-8")


def load_json(body: bytes, content_type: str = "") -> dict[str, Any]:
    """The delivery's JSON object (from its `payload` field when `content_type` says the body is form-encoded), or
    `Invalid` saying what is wrong with it."""
    if content_type.split(";", 1)[0].strip().lower() == _FORM:
        body = form_payload(body)
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Invalid(f"body is not valid JSON: {exc}") from None
    except RecursionError:
        raise Invalid("body is JSON nested deeper than the parser reads (about a thousand levels)") from None
    if not isinstance(data, dict):
        raise Invalid(f"body is JSON but not an object (got {type(data).__name__})")
    return data


def obj(value: Any, where: str) -> dict[str, Any]:
    """`value` as a JSON object, or `Invalid` naming the field."""
    if not isinstance(value, dict):
        raise Invalid(f"`{where}` is missing or not an object")
    return value


def mapping(value: Any) -> dict[str, Any]:
    """An optional JSON object: the value when it is one, else {} (a wrong type reads as absent)."""
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[Any]:
    """An optional JSON array: the value when it is one, else []."""
    return value if isinstance(value, list) else []


def text(value: Any) -> str:
    """A string field, or "" when absent or not a string."""
    return value if isinstance(value, str) else ""


_JSON_TYPES = {bool: "a boolean", int: "a number", float: "a number", list: "an array", dict: "an object"}


def string(container: dict[str, Any], key: str, where: str) -> str:
    """A field that must be a string when present: "" when absent or null, `Invalid` naming the field and the
    type found otherwise (a title of `5` is a malformed delivery, not an empty title)."""
    value = container.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid(f"`{where}` must be a string, got {_JSON_TYPES.get(type(value), type(value).__name__)}")
    return value


def identity(*parts: Any) -> str:
    """The body's own identity of an event (provider's object id, action, update time), for deduplication:
    the delivery id is not covered by the signature, so a resent body with a new id is the same event."""
    key = ":".join("" if p is None else str(p) for p in parts)
    return key if len(key) <= 200 else "sha256:" + hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


def report(source: Source, **fields: Any) -> BugReport:
    """A `BugReport` with title and body clipped to the intake limits."""
    fields["title"] = clip_title(fields.get("title") or "")
    fields["body"] = clip_body(fields.get("body") or "")
    fields["labels"] = [lb for lb in dict.fromkeys(fields.get("labels") or []) if lb]
    return BugReport(source=source, **fields)


def accepted(
    source: Source, event: str | None, delivery_id: str | None, bug: BugReport, *, key: str | None = None
) -> WebhookOutcome:
    """An outcome carrying a report to investigate; `key` is the body's identity (see `identity`)."""
    return WebhookOutcome(kind="accepted", provider=source, event=event, delivery_id=delivery_id, report=bug, identity=key)


def ignored(source: Source, event: str | None, delivery_id: str | None, reason: str) -> WebhookOutcome:
    """An authentic delivery that carries nothing to investigate."""
    return WebhookOutcome(kind="ignored", provider=source, event=event, delivery_id=delivery_id, reason=reason)


def unauthorized(source: Source, reason: str, delivery_id: str | None = None) -> WebhookOutcome:
    """A delivery whose signature or token is missing or wrong."""
    return WebhookOutcome(kind="unauthorized", provider=source, delivery_id=delivery_id, reason=reason)


def invalid(source: Source, reason: str, delivery_id: str | None = None, event: str | None = None) -> WebhookOutcome:
    """An authentic delivery that cannot be understood."""
    return WebhookOutcome(kind="invalid", provider=source, event=event, delivery_id=delivery_id, reason=reason)


def no_secret(source: Source) -> WebhookOutcome:
    """Refusal when no secret is configured: unsigned deliveries are never trusted."""
    return unauthorized(
        source,
        f"no {source.value} webhook secret is configured (set BUGSLEUTH_{source.value.upper()}_WEBHOOK_SECRET); "
        "unsigned deliveries are refused",
    )


def refusal(
    source: Source, secret: str | None, delivery_id: str | None, check: Callable[[str], str | None]
) -> WebhookOutcome | None:
    """The outcome refusing an unauthenticated delivery (no secret configured, or `check(secret)` says why
    not), or None when the delivery is authentic."""
    if not secret:
        return no_secret(source)
    problem = check(secret)
    return unauthorized(source, problem, delivery_id) if problem else None

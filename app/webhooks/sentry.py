"""Sentry integration-platform deliveries: `event_alert` (with the event's stack trace) and `issue` (created).

Signature: `Sentry-Hook-Signature: <hex HMAC-SHA256 of the raw body>` with the integration's client secret.
Delivery id: `Request-ID`, else `<Sentry-Hook-Resource>:<event or issue id>`.
Sentry does not know which repository a project lives in: the repository comes from the `repo` query
parameter of the webhook URL (`/webhooks/sentry?repo=owner/name`), an `X-Bugsleuth-Repo` header, or an
event tag named `repo` or `repository`, in that order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from schemas import Source

from app.webhooks._common import (
    Invalid,
    accepted,
    ignored,
    invalid,
    load_json,
    lower_headers,
    obj,
    refusal,
    report,
    signs_body,
    text,
)
from app.webhooks._outcome import WebhookOutcome

_SOURCE = Source.sentry
_MAX_FRAMES = 60
_SHA = re.compile(r"[0-9a-f]{40}")
_JS_PLATFORMS = frozenset({"javascript", "node", "react-native", "cordova", "electron"})


def verify(headers: Mapping[str, str], body: bytes, secret: str) -> str | None:
    """None when `Sentry-Hook-Signature` matches the body, else why not."""
    given = lower_headers(headers).get("sentry-hook-signature", "").strip()
    if not given:
        return "missing Sentry-Hook-Signature header"
    if not signs_body(given, secret, body):
        return "Sentry-Hook-Signature does not match the body (wrong client secret or altered body)"
    return None


def parse(
    headers: Mapping[str, str], body: bytes, secret: str | None, *, query: Mapping[str, str] | None = None
) -> WebhookOutcome:
    """Verify and interpret one Sentry delivery."""
    h = lower_headers(headers)
    resource = h.get("sentry-hook-resource", "")
    delivery_id = h.get("request-id") or None
    refused = refusal(_SOURCE, secret, delivery_id, lambda s: verify(h, body, s))
    if refused is not None:
        return refused
    try:
        data = load_json(body)
        action = text(data.get("action"))
        name = f"{resource or 'unknown'}/{action or 'unknown'}"
        payload = obj(data.get("data"), "data")
        repo_hint = (query or {}).get("repo") or h.get("x-bugsleuth-repo") or None
        if resource == "event_alert" or (not resource and "event" in payload):
            event = obj(payload.get("event"), "data.event")
            delivery_id = delivery_id or f"event_alert:{text(event.get('event_id')) or event.get('id')}"
            return accepted(_SOURCE, name, delivery_id, _event_report(event, payload, repo_hint))
        if resource == "issue" or (not resource and "issue" in payload):
            issue = obj(payload.get("issue"), "data.issue")
            delivery_id = delivery_id or f"issue:{issue.get('id')}:{action}"
            if action in ("resolved", "archived", "ignored") or text(issue.get("status")) == "resolved":
                return ignored(_SOURCE, name, delivery_id, "closed: the issue is resolved or archived")
            if action != "created":
                return ignored(_SOURCE, name, delivery_id, f"unsupported action {action!r}")
            return accepted(_SOURCE, name, delivery_id, _issue_report(issue, repo_hint))
        if resource == "comment":
            return ignored(_SOURCE, name, delivery_id, "comment: comments are not investigated")
        if resource == "installation":
            return ignored(_SOURCE, name, delivery_id, "ping: installation event")
        return ignored(_SOURCE, name, delivery_id, f"unsupported resource {resource or '(none)'!r}")
    except Invalid as exc:
        return invalid(_SOURCE, str(exc), delivery_id, resource or None)


def _tags(event: dict[str, Any]) -> dict[str, str]:
    tags = event.get("tags") or []
    out: dict[str, str] = {}
    for tag in tags:
        if isinstance(tag, list | tuple) and len(tag) == 2:
            out[str(tag[0])] = str(tag[1])
        elif isinstance(tag, dict) and "key" in tag:
            out[str(tag["key"])] = str(tag.get("value", ""))
    return out


def _exceptions(event: dict[str, Any]) -> list[dict[str, Any]]:
    exc = event.get("exception")
    if not isinstance(exc, dict):  # the API's event shape keeps it under `entries`
        exc = next(
            (e.get("data") for e in event.get("entries") or [] if isinstance(e, dict) and e.get("type") == "exception"),
            None,
        )
    values = exc.get("values") if isinstance(exc, dict) else None
    return [v for v in values or [] if isinstance(v, dict)]


def format_stacktrace(exceptions: list[dict[str, Any]], platform: str) -> str:
    """The event's exceptions as the runtime would print them (Python traceback, or JS `at` lines)."""
    blocks = []
    for value in exceptions:
        frames = [f for f in ((value.get("stacktrace") or {}).get("frames") or []) if isinstance(f, dict)]
        if len(frames) > _MAX_FRAMES:  # keep the innermost frames: that is where the error is
            frames = frames[-_MAX_FRAMES:]
        kind = text(value.get("type")) or "Error"
        message = text(value.get("value"))
        head = f"{kind}: {message}" if message else kind
        if platform in _JS_PLATFORMS:
            lines = [head]
            for f in reversed(frames):  # JS prints innermost first
                path = text(f.get("filename")) or text(f.get("abs_path")) or "<unknown>"
                where = f"{path}:{f.get('lineno') or 0}" + (f":{f['colno']}" if f.get("colno") else "")
                fn = text(f.get("function"))
                lines.append(f"    at {fn} ({where})" if fn else f"    at {where}")
        else:
            lines = ["Traceback (most recent call last):"]
            for f in frames:
                # In-app frames by their project-relative name; library frames by their absolute path, so
                # readers (and the repo map's focus) can tell site-packages from the repository.
                filename, abs_path = text(f.get("filename")), text(f.get("abs_path"))
                if f.get("in_app") is False and abs_path:
                    path = abs_path
                else:
                    path = filename or abs_path or "<unknown>"
                lines.append(f'  File "{path}", line {f.get("lineno") or 0}, in {text(f.get("function")) or "<module>"}')
                if text(f.get("context_line")).strip():
                    lines.append(f"    {text(f.get('context_line')).strip()}")
            lines.append(head)
        blocks.append("\n".join(lines))
    sep = "\n\nDuring handling of the above exception, another exception occurred:\n\n"
    return sep.join(blocks)


def _event_report(event: dict[str, Any], payload: dict[str, Any], repo_hint: str | None):
    tags = _tags(event)
    platform = text(event.get("platform"))
    exceptions = _exceptions(event)
    parts = []
    culprit = text(event.get("culprit"))
    if culprit:
        parts.append(f"Culprit: {culprit}")
    meta = [f"{k}: {tags[k]}" for k in ("environment", "release", "level", "runtime", "browser") if k in tags]
    if text(event.get("release")) and "release" not in tags:
        meta.append(f"release: {text(event['release'])}")
    if meta:
        parts.append("\n".join(meta))
    message = text((event.get("logentry") or {}).get("formatted")) or text(event.get("message"))
    if message:
        parts.append(message)
    trace = format_stacktrace(exceptions, platform)
    if trace:
        parts.append("```\n" + trace + "\n```")
    rule = text(payload.get("triggered_rule"))
    if rule:
        parts.append(f"Alert rule: {rule}")
    release = text(event.get("release")) or tags.get("release", "")
    level = text(event.get("level")) or tags.get("level", "")
    event_id = text(event.get("event_id")) or str(event.get("id") or "")
    return report(
        _SOURCE,
        repo=repo_hint or tags.get("repo") or tags.get("repository") or None,
        ref=release if _SHA.fullmatch(release) else None,
        title=text(event.get("title")) or (exceptions[-1].get("type") if exceptions else "") or "Sentry event",
        body="\n\n".join(parts),
        labels=["sentry", level],
        reporter="sentry",
        url=text(event.get("web_url")) or text(event.get("url")) or None,
        external_id=text(event.get("issue_id")) or event_id or None,
    )


def _issue_report(issue: dict[str, Any], repo_hint: str | None):
    meta = issue.get("metadata") if isinstance(issue.get("metadata"), dict) else {}
    parts = []
    if text(issue.get("culprit")):
        parts.append(f"Culprit: {text(issue['culprit'])}")
    if meta.get("type") or meta.get("value"):
        parts.append(f"{text(meta.get('type'))}: {text(meta.get('value'))}".strip(": "))
    if meta.get("filename"):
        parts.append(f"In {text(meta.get('function')) or '?'} ({text(meta.get('filename'))})")
    for key in ("count", "userCount", "firstSeen", "lastSeen"):
        if issue.get(key) is not None:
            parts.append(f"{key}: {issue[key]}")
    project = issue.get("project") if isinstance(issue.get("project"), dict) else {}
    return report(
        _SOURCE,
        repo=repo_hint or None,
        title=text(issue.get("title")) or "Sentry issue",
        body="\n".join(parts),
        labels=["sentry", text(issue.get("level"))],
        reporter="sentry",
        url=text(issue.get("web_url")) or text(issue.get("permalink")) or None,
        external_id=text(issue.get("shortId")) or (str(issue["id"]) if issue.get("id") is not None else None)
        or text(project.get("slug")) or None,
    )

"""Sentry integration-platform deliveries: `event_alert` (with the event's stack trace) and `issue` (created).

Signature: `Sentry-Hook-Signature: <hex HMAC-SHA256 of the raw body>` with the integration's client secret.
The legacy WebHooks plugin signs nothing: its deliveries carry the secret in the URL (`?secret=`) instead.
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

from app.webhooks import _stacktraces as stacktraces
from app.webhooks._common import (
    Invalid,
    accepted,
    identity,
    ignored,
    invalid,
    items,
    load_json,
    lower_headers,
    mapping,
    obj,
    refusal,
    report,
    shared_secret_problem,
    signs_body,
    string,
    text,
)
from app.webhooks._outcome import WebhookOutcome

_SOURCE = Source.sentry
_SHA = re.compile(r"[0-9a-f]{40}")


def verify(headers: Mapping[str, str], body: bytes, secret: str, query: Mapping[str, str] | None = None) -> str | None:
    """None when `Sentry-Hook-Signature` matches the body (or, unsigned, the delivery carries the secret in
    a header or `?secret=`, all the legacy WebHooks plugin can do), else why not."""
    given = lower_headers(headers).get("sentry-hook-signature", "").strip()
    if not given:
        return shared_secret_problem(headers, secret, query, signature="Sentry-Hook-Signature")
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
    refused = refusal(_SOURCE, secret, delivery_id, lambda s: verify(h, body, s, query))
    if refused is not None:
        return refused
    try:
        data = load_json(body)
        action = text(data.get("action"))
        name = f"{resource or 'unknown'}/{action or 'unknown'}"
        repo_hint = (query or {}).get("repo") or h.get("x-bugsleuth-repo") or None
        if not resource and "data" not in data and isinstance(data.get("event"), dict):
            # The legacy WebHooks plugin: the event at the top, beside the issue's url and the rules.
            event = data["event"]
            delivery_id = delivery_id or f"event_alert:{text(event.get('event_id')) or data.get('id')}"
            bug = _event_report(event, data, repo_hint)
            return accepted(_SOURCE, "webhooks_plugin/triggered", delivery_id, bug, key=_event_key(event))
        payload = obj(data.get("data"), "data")
        if resource == "event_alert" or (not resource and "event" in payload):
            event = obj(payload.get("event"), "data.event")
            delivery_id = delivery_id or f"event_alert:{text(event.get('event_id')) or event.get('id')}"
            bug = _event_report(event, payload, repo_hint)
            return accepted(_SOURCE, name, delivery_id, bug, key=_event_key(event))
        if resource == "issue" or (not resource and "issue" in payload):
            issue = obj(payload.get("issue"), "data.issue")
            delivery_id = delivery_id or f"issue:{issue.get('id')}:{action}"
            if action in ("resolved", "archived", "ignored") or text(issue.get("status")) == "resolved":
                return ignored(_SOURCE, name, delivery_id, "closed: the issue is resolved or archived")
            if action != "created":
                return ignored(_SOURCE, name, delivery_id, f"unsupported action {action!r}")
            key = identity("issue", issue.get("id"), action)
            return accepted(_SOURCE, name, delivery_id, _issue_report(issue, repo_hint), key=key)
        if resource == "comment":
            return ignored(_SOURCE, name, delivery_id, "comment: comments are not investigated")
        if resource == "installation":
            return ignored(_SOURCE, name, delivery_id, "ping: installation event")
        return ignored(_SOURCE, name, delivery_id, f"unsupported resource {resource or '(none)'!r}")
    except Invalid as exc:
        return invalid(_SOURCE, str(exc), delivery_id, resource or None)


def _event_key(event: dict[str, Any]) -> str | None:
    """An event is one occurrence: its id is its identity."""
    event_id = text(event.get("event_id")) or text(event.get("id"))
    return identity("event", event_id) if event_id else None


def _tags(event: dict[str, Any]) -> dict[str, str]:
    tags = items(event.get("tags"))
    out: dict[str, str] = {}
    for tag in tags:
        if isinstance(tag, list | tuple) and len(tag) == 2:
            out[str(tag[0])] = str(tag[1])
        elif isinstance(tag, dict) and "key" in tag:
            out[str(tag["key"])] = str(tag.get("value", ""))
    return out


def _event_report(event: dict[str, Any], payload: dict[str, Any], repo_hint: str | None):
    tags = _tags(event)
    exceptions = stacktraces.exceptions(event)
    parts = []
    culprit = text(event.get("culprit"))
    if culprit:
        parts.append(f"Culprit: {culprit}")
    meta = [f"{k}: {tags[k]}" for k in ("environment", "release", "level", "runtime", "browser") if k in tags]
    if text(event.get("release")) and "release" not in tags:
        meta.append(f"release: {text(event['release'])}")
    if meta:
        parts.append("\n".join(meta))
    message = text(mapping(event.get("logentry")).get("formatted")) or text(event.get("message"))
    if message:
        parts.append(message)
    trace = stacktraces.format_event_traces(event)
    if trace:
        parts.append("```\n" + trace + "\n```")
    rules = [text(payload.get("triggered_rule"))] + [text(r) for r in payload.get("triggering_rules") or []]
    if any(rules):
        parts.append("Alert rule: " + ", ".join(r for r in rules if r))
    release = text(event.get("release")) or tags.get("release", "")
    level = text(event.get("level")) or tags.get("level", "")
    event_id = text(event.get("event_id")) or str(event.get("id") or "")
    return report(
        _SOURCE,
        repo=repo_hint or tags.get("repo") or tags.get("repository") or None,
        ref=release if _SHA.fullmatch(release) else None,
        title=string(event, "title", "event.title") or (exceptions[-1].get("type") if exceptions else "") or "Sentry event",
        body="\n\n".join(parts),
        labels=["sentry", level],
        reporter="sentry",
        url=text(event.get("web_url")) or text(event.get("url")) or text(payload.get("url")) or None,
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
        title=string(issue, "title", "data.issue.title") or "Sentry issue",
        body="\n".join(parts),
        labels=["sentry", text(issue.get("level"))],
        reporter="sentry",
        url=text(issue.get("web_url")) or text(issue.get("permalink")) or None,
        external_id=text(issue.get("shortId")) or (str(issue["id"]) if issue.get("id") is not None else None)
        or text(project.get("slug")) or None,
    )

"""GitLab deliveries: `Issue Hook` (and confidential issues) become reports; notes and the rest are ignored.

Authentication: `X-Gitlab-Token` must equal the configured secret token (GitLab sends the token itself).
Delivery id: `X-Gitlab-Event-UUID` (GitLab keeps it across retries; `Idempotency-Key` is the fallback).
"""

from __future__ import annotations

from collections.abc import Mapping

from schemas import Source

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
    same,
    string,
    text,
)
from app.webhooks._outcome import WebhookOutcome

_SOURCE = Source.gitlab
_ISSUE_EVENTS = frozenset({"Issue Hook", "Confidential Issue Hook"})
_NOTE_EVENTS = frozenset({"Note Hook", "Confidential Note Hook"})
_INVESTIGATE_ACTIONS = frozenset({"open", "reopen", "update"})


def verify(headers: Mapping[str, str], secret: str) -> str | None:
    """None when `X-Gitlab-Token` equals the secret, else why not."""
    given = lower_headers(headers).get("x-gitlab-token")
    if not given:
        return "missing X-Gitlab-Token header"
    if not same(given, secret):
        return "X-Gitlab-Token does not match the configured secret"
    return None


def parse(
    headers: Mapping[str, str], body: bytes, secret: str | None, *, query: Mapping[str, str] | None = None
) -> WebhookOutcome:
    """Verify and interpret one GitLab delivery (`query` is unused: GitLab names the project)."""
    h = lower_headers(headers)
    delivery_id = h.get("x-gitlab-event-uuid") or h.get("idempotency-key") or None
    refused = refusal(_SOURCE, secret, delivery_id, lambda s: verify(h, s))
    if refused is not None:
        return refused
    event = h.get("x-gitlab-event", "")
    try:
        data = load_json(body)
        if event in _NOTE_EVENTS or data.get("object_kind") == "note":
            return ignored(_SOURCE, event or "note", delivery_id, "comment: comments are not investigated")
        if event not in _ISSUE_EVENTS and data.get("object_kind") != "issue":
            return ignored(_SOURCE, event or None, delivery_id, f"unsupported event {event or '(none)'!r}")
        return _issue(data, event or "Issue Hook", delivery_id)
    except Invalid as exc:
        return invalid(_SOURCE, str(exc), delivery_id, event or None)


def _issue(data: dict, event: str, delivery_id: str | None) -> WebhookOutcome:
    attrs = obj(data.get("object_attributes"), "object_attributes")
    project = obj(data.get("project"), "project")
    action = text(attrs.get("action"))
    name = f"{event}/{action or 'unknown'}"
    if action == "close" or text(attrs.get("state")) == "closed":
        return ignored(_SOURCE, name, delivery_id, "closed: the issue is closed")
    if action not in _INVESTIGATE_ACTIONS:
        return ignored(_SOURCE, name, delivery_id, f"unsupported action {action!r}")
    if action == "update" and not ({"title", "description", "labels"} & set(mapping(data.get("changes")))):
        return ignored(_SOURCE, name, delivery_id, "updated without a change to the title, description or labels")
    full_name = string(project, "path_with_namespace", "project.path_with_namespace")
    if not full_name:
        raise Invalid("`project.path_with_namespace` is missing")
    labels = data.get("labels") if isinstance(data.get("labels"), list) else items(attrs.get("labels"))
    iid = attrs.get("iid")
    bug = report(
        _SOURCE,
        repo=full_name,
        title=string(attrs, "title", "object_attributes.title"),
        body=string(attrs, "description", "object_attributes.description"),
        labels=[text(lb.get("title")) for lb in labels if isinstance(lb, dict)],
        reporter=text(mapping(data.get("user")).get("username")) or None,
        url=text(attrs.get("url")) or None,
        external_id=f"{full_name}#{iid}" if iid is not None else None,
    )
    key = identity("issue", project.get("id") or full_name, attrs.get("id") or iid, action, attrs.get("updated_at"))
    return accepted(_SOURCE, name, delivery_id, bug, key=key)

"""GitHub deliveries: `issues` events become reports; `ping`, `issue_comment` and the rest are ignored.

Signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` with the webhook secret.
Delivery id: `X-GitHub-Delivery`.
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
    signs_body,
    string,
    text,
)
from app.webhooks._outcome import WebhookOutcome

_SOURCE = Source.github
_INVESTIGATE_ACTIONS = frozenset({"opened", "reopened", "edited", "labeled"})
"""`issues` actions that (re)submit the issue; `edited` only when the title or body changed."""


def verify(headers: Mapping[str, str], body: bytes, secret: str) -> str | None:
    """None when the `X-Hub-Signature-256` header matches the body, else why not."""
    given = lower_headers(headers).get("x-hub-signature-256", "").strip()
    if not given:
        return "missing X-Hub-Signature-256 header"
    if not given.startswith("sha256="):
        return "X-Hub-Signature-256 is not of the form sha256=<hex>"
    if not signs_body(given[len("sha256="):], secret, body):
        return "X-Hub-Signature-256 does not match the body (wrong secret or altered body)"
    return None


def parse(
    headers: Mapping[str, str], body: bytes, secret: str | None, *, query: Mapping[str, str] | None = None
) -> WebhookOutcome:
    """Verify and interpret one GitHub delivery (`query` is unused: GitHub names the repository)."""
    h = lower_headers(headers)
    delivery_id = h.get("x-github-delivery") or None
    refused = refusal(_SOURCE, secret, delivery_id, lambda s: verify(h, body, s))
    if refused is not None:
        return refused
    event = h.get("x-github-event", "")
    try:
        data = load_json(body, h.get("content-type", ""))
        if event == "ping":
            return ignored(_SOURCE, "ping", delivery_id, "ping: the webhook is set up")
        if event in ("issue_comment", "commit_comment", "pull_request_review_comment", "discussion_comment"):
            return ignored(_SOURCE, event, delivery_id, "comment: comments are not investigated")
        if event != "issues":
            return ignored(_SOURCE, event or None, delivery_id, f"unsupported event {event or '(none)'!r}")
        return _issues(data, delivery_id)
    except Invalid as exc:
        return invalid(_SOURCE, str(exc), delivery_id, event or None)


def _issues(data: dict, delivery_id: str | None) -> WebhookOutcome:
    action = text(data.get("action"))
    name = f"issues/{action}"
    issue = obj(data.get("issue"), "issue")
    repo = obj(data.get("repository"), "repository")
    if action == "closed" or text(issue.get("state")) == "closed":
        return ignored(_SOURCE, name, delivery_id, "closed: the issue is closed")
    if action not in _INVESTIGATE_ACTIONS:
        return ignored(_SOURCE, name, delivery_id, f"unsupported action {action!r}")
    if action == "edited" and not ({"title", "body"} & set(mapping(data.get("changes")))):
        return ignored(_SOURCE, name, delivery_id, "edited without a change to the title or body")
    full_name = string(repo, "full_name", "repository.full_name")
    if not full_name:
        raise Invalid("`repository.full_name` is missing")
    number = issue.get("number")
    bug = report(
        _SOURCE,
        repo=full_name,
        title=string(issue, "title", "issue.title"),
        body=string(issue, "body", "issue.body"),
        labels=[text(lb.get("name")) for lb in items(issue.get("labels")) if isinstance(lb, dict)],
        reporter=text(mapping(issue.get("user")).get("login")) or None,
        url=text(issue.get("html_url")) or None,
        external_id=f"{full_name}#{number}" if number is not None else None,
    )
    label = text((data.get("label") or {}).get("name")) if isinstance(data.get("label"), dict) else ""
    key = identity("issues", issue.get("id") or f"{full_name}#{number}", action, label, issue.get("updated_at"))
    return accepted(_SOURCE, name, delivery_id, bug, key=key)

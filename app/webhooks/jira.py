"""Jira deliveries: `jira:issue_created` (and relevant `jira:issue_updated`) become reports.

Authentication, any one of:
- `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw body>` — what Jira Cloud sends when the webhook
  has a secret (preferred);
- `Authorization: Bearer <secret>` or `X-Bugsleuth-Token: <secret>` — a shared secret in a header
  (Jira Automation "Send web request" can set headers);
- `?secret=<secret>` in the webhook URL — for Jira Server/Data Center webhooks, which can set neither
  (only when the caller passes the query parameters).
Delivery id: `X-Atlassian-Webhook-Identifier`, else `<webhookEvent>:<issue id>:<timestamp>`.
Jira does not know the repository: it comes from the `repo` query parameter, an `X-Bugsleuth-Repo`
header, or a `repo:owner/name` label on the issue, in that order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
    shared_secret_problem,
    signs_body,
    string,
    text,
)
from app.webhooks._outcome import WebhookOutcome

_SOURCE = Source.jira
_DONE = frozenset({"done", "closed", "resolved"})
_CONTENT_FIELDS = frozenset({"summary", "description", "labels"})


def verify(headers: Mapping[str, str], body: bytes, secret: str, query: Mapping[str, str] | None = None) -> str | None:
    """None when the delivery carries the secret (signature, header or query), else why not."""
    h = lower_headers(headers)
    signature = h.get("x-hub-signature", "").strip()
    if signature:
        algo, _, digest = signature.partition("=")
        if algo.lower() != "sha256" or not signs_body(digest, secret, body):
            return "X-Hub-Signature does not match the body (wrong secret or altered body)"
        return None
    return shared_secret_problem(h, secret, query, signature="X-Hub-Signature")


def parse(
    headers: Mapping[str, str], body: bytes, secret: str | None, *, query: Mapping[str, str] | None = None
) -> WebhookOutcome:
    """Verify and interpret one Jira delivery."""
    h = lower_headers(headers)
    delivery_id = h.get("x-atlassian-webhook-identifier") or None
    refused = refusal(_SOURCE, secret, delivery_id, lambda s: verify(h, body, s, query))
    if refused is not None:
        return refused
    try:
        data = load_json(body)
        event = text(data.get("webhookEvent")) or None
        if event is None:
            raise Invalid("`webhookEvent` is missing")
        issue = data.get("issue") if isinstance(data.get("issue"), dict) else {}
        delivery_id = delivery_id or f"{event}:{issue.get('id')}:{data.get('timestamp')}"
        if event.startswith("comment_") or data.get("issue_event_type_name") in ("issue_commented", "issue_comment_edited"):
            return ignored(_SOURCE, event, delivery_id, "comment: comments are not investigated")
        if event not in ("jira:issue_created", "jira:issue_updated"):
            return ignored(_SOURCE, event, delivery_id, f"unsupported event {event!r}")
        issue = obj(data.get("issue"), "issue")
        fields = obj(issue.get("fields"), "issue.fields")
        status = text(mapping(fields.get("status")).get("name")).lower()
        category = text(mapping(mapping(fields.get("status")).get("statusCategory")).get("key")).lower()
        if status in _DONE or category == "done" or fields.get("resolution"):
            return ignored(_SOURCE, event, delivery_id, "closed: the issue is resolved")
        if event == "jira:issue_updated":
            changed = {text(i.get("field")).lower() for i in items(mapping(data.get("changelog")).get("items")) if isinstance(i, dict)}
            if not changed & _CONTENT_FIELDS:
                return ignored(_SOURCE, event, delivery_id, "updated without a change to the summary, description or labels")
        repo_hint = (query or {}).get("repo") or h.get("x-bugsleuth-repo") or None
        key = identity(event, issue.get("id") or issue.get("key"), fields.get("updated") or data.get("timestamp"))
        return accepted(_SOURCE, event, delivery_id, _report(issue, fields, repo_hint), key=key)
    except Invalid as exc:
        return invalid(_SOURCE, str(exc), delivery_id)


_ADF_DEPTH = 64
"""Nesting an Atlassian document is read with its structure (real ones nest a few levels); deeper, its text only."""


def adf_to_text(node: Any, depth: int = 0) -> str:
    """Plain text of an Atlassian Document Format description (API v3 webhooks send ADF, v2 a string). A document
    nested deeper than `_ADF_DEPTH` gives the rest of its text in order, without its structure."""
    if depth > _ADF_DEPTH:
        return " ".join(_adf_words(node))
    if isinstance(node, str):
        return node
    if isinstance(node, list):
        return "".join(adf_to_text(n, depth + 1) for n in node)
    if not isinstance(node, dict):
        return ""
    kind = node.get("type")
    if kind == "text":
        return text(node.get("text"))
    if kind == "hardBreak":
        return "\n"
    inner = adf_to_text(node.get("content") or [], depth + 1)
    if kind == "codeBlock":
        lang = text(mapping(node.get("attrs")).get("language"))
        return f"```{lang}\n{inner}\n```\n\n"
    if kind in ("paragraph", "heading", "blockquote"):
        return inner + "\n\n"
    if kind == "listItem":
        return "- " + inner.strip() + "\n"
    if kind in ("bulletList", "orderedList"):
        return inner + "\n"
    return inner


def _adf_words(node: Any) -> list[str]:
    """The text of every `text` node and string under `node`, in document order, however deep (no recursion)."""
    words, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            words.append(item)
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.append(text(item.get("text")) if item.get("type") == "text" else item.get("content") or [])
    return [w for w in words if w]


def _description(fields: dict[str, Any]) -> Any:
    """The description: a string (API v2), an Atlassian document (v3) or nothing; anything else is malformed."""
    value = fields.get("description")
    if value is not None and not isinstance(value, str | dict):
        raise Invalid("`issue.fields.description` must be a string or an Atlassian document object")
    return value


def _report(issue: dict[str, Any], fields: dict[str, Any], repo_hint: str | None):
    labels = [text(lb) for lb in items(fields.get("labels"))]
    repo_label = next((lb.split(":", 1)[1] for lb in labels if lb.lower().startswith("repo:")), None)
    issue_type = text(mapping(fields.get("issuetype")).get("name"))
    key = text(issue.get("key"))
    api = text(issue.get("self"))
    url = f"{api.split('/rest/', 1)[0]}/browse/{key}" if api and key and "/rest/" in api else api or None
    reporter = mapping(fields.get("reporter")) or mapping(fields.get("creator"))
    return report(
        _SOURCE,
        repo=repo_hint or repo_label,
        title=string(fields, "summary", "issue.fields.summary"),
        body=adf_to_text(_description(fields)).strip(),
        labels=[*labels, issue_type],
        reporter=text(reporter.get("displayName")) or text(reporter.get("name")) or None,
        url=url,
        external_id=key or (str(issue["id"]) if issue.get("id") is not None else None),
    )

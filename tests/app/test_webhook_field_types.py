"""Every field of every webhook fixture (hand-made and real) replaced by a value of another JSON type: the
signed delivery is accepted, ignored or refused as invalid with a reason — never an exception (a 500)."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.webhooks import parse_delivery
from tests.app._realclient import REALCLIENT

SECRET = "k"
HAND_MADE = Path(__file__).resolve().parent.parent / "fixtures" / "webhooks"
EVENT = {"github": "issues", "gitlab": "Issue Hook", "sentry": "event_alert", "jira": ""}
FIXTURES = sorted((p.name.split("_")[0], p) for p in HAND_MADE.glob("*.json"))
if REALCLIENT is not None:
    FIXTURES += sorted((p.parent.name, p) for p in REALCLIENT.glob("*/*.json"))


def field_paths(node: object, prefix: tuple = (), depth: int = 0) -> Iterator[tuple]:
    """Paths of the fields down to four levels (the first element of each array stands for all)."""
    if depth >= 4:
        return
    children = node.items() if isinstance(node, dict) else enumerate(node[:1]) if isinstance(node, list) else ()
    for key, value in children:
        yield (*prefix, key)
        yield from field_paths(value, (*prefix, key), depth + 1)


def signed_headers(provider: str, body: bytes) -> dict[str, str]:
    sig = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    event = EVENT[provider]
    return {"X-GitHub-Event": event, "X-Hub-Signature-256": f"sha256={sig}", "X-Gitlab-Token": SECRET,
            "X-Gitlab-Event": event, "Sentry-Hook-Resource": event, "Sentry-Hook-Signature": sig,
            "X-Hub-Signature": f"sha256={sig}"}  # fmt: skip


@pytest.mark.parametrize("provider, path", FIXTURES, ids=[f"{p.parent.name}/{p.name}" for _, p in FIXTURES])
def test_no_field_of_another_type_makes_the_parser_raise(provider, path):
    original = path.read_text()
    outcomes = set()
    for field in list(field_paths(json.loads(original))):
        for value in (5, ["x"], None, {"a": 1}):
            data = json.loads(original)
            node = data
            for key in field[:-1]:
                node = node[key]
            node[field[-1]] = value
            body = json.dumps(data).encode()
            out = parse_delivery(provider, signed_headers(provider, body), body, SECRET, query={"repo": "acme/shop"})
            assert out.kind in ("accepted", "ignored", "invalid") and (out.kind == "accepted" or out.reason)
            outcomes.add(out.kind)
    assert outcomes  # the fixture had fields to replace


def test_an_atlassian_document_of_any_shape_or_depth_becomes_its_text():
    """Two deliveries that raised (a 500, the delivery lost): a code block whose `attrs` is not an object, and a
    document nested 450 levels deep (valid JSON; the recursive reader hit Python's recursion limit)."""
    data = json.loads((HAND_MADE / "jira_issue_created_adf.json").read_text())
    node = {"type": "text", "text": "the deepest words"}
    for _ in range(450):
        node = {"type": "paragraph", "content": [node]}
    code = {"type": "codeBlock", "attrs": "python", "content": [{"type": "text", "text": "x = 1 / 0"}]}
    data["issue"]["fields"]["description"] = {"type": "doc", "content": [code, node]}
    body = json.dumps(data).encode()
    out = parse_delivery("jira", {}, body, SECRET, query={"repo": "acme/shop", "secret": SECRET})
    assert out.kind == "accepted", out.reason
    assert out.report.body.startswith("```\nx = 1 / 0\n```") and out.report.body.endswith("the deepest words")

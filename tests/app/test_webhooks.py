"""Webhook deliveries: real provider payload shapes, signatures verified, every outcome with its reason."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

from app.webhooks import WebhookOutcome, parse_delivery
from app.webhooks._stacktraces import format_event_traces
from tests.app._service_fixtures import base_settings, fixture_repo  # noqa: F401 - fixtures
from schemas import Source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "webhooks"
SECRET = "s3cr3t-webhook-key"


def load(name: str) -> bytes:
    return (FIXTURES / f"{name}.json").read_bytes()


def sign(body: bytes, secret: str = SECRET) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def github(event: str, body: bytes, *, delivery: str = "72d3162e-cc78-11e3-81ab-4c9367dc0958", signature: str | None = None) -> WebhookOutcome:
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": signature if signature is not None else f"sha256={sign(body)}",
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/8e1b2c4",
    }
    return parse_delivery("github", headers, body, SECRET)


def gitlab(body: bytes, *, token: str = SECRET, event: str = "Issue Hook") -> WebhookOutcome:
    headers = {"X-Gitlab-Event": event, "X-Gitlab-Token": token, "X-Gitlab-Event-UUID": "5f1f1d0e-4c52-4f6e-8f6b-6a0d4b2b7d1e",
               "X-Gitlab-Instance": "https://gitlab.example.com"}  # fmt: skip
    return parse_delivery("gitlab", headers, body, SECRET)


def sentry(body: bytes, resource: str, *, signature: str | None = None, query: dict | None = None) -> WebhookOutcome:
    headers = {"Sentry-Hook-Resource": resource, "Sentry-Hook-Timestamp": "1764452646",
               "Sentry-Hook-Signature": signature if signature is not None else sign(body),
               "Request-ID": "c1b0f2d4-8a1e-4d4f-9a57-0a1d2b3c4d5e"}  # fmt: skip
    return parse_delivery(Source.sentry, headers, body, SECRET, query=query)


# ---------------------------------------------------------------- GitHub


def test_github_opened_issue_is_accepted_with_a_report():
    out = github("issues", load("github_issues_opened"))
    assert out.kind == "accepted"
    assert out.delivery_id == "72d3162e-cc78-11e3-81ab-4c9367dc0958"
    assert out.event == "issues/opened"
    r = out.report
    assert (r.source, r.repo, r.title) == (Source.github, "acme/widgets", "Parser.parse crashes on empty input")
    assert "IndexError: list index out of range" in r.body
    assert (r.reporter, r.url, r.external_id) == ("jdoe", "https://github.com/acme/widgets/issues/1347", "acme/widgets#1347")


def test_github_labeled_issue_carries_its_labels():
    out = github("issues", load("github_issues_labeled"))
    assert out.kind == "accepted"
    assert out.report.labels == ["bug"]


def test_github_body_edit_is_accepted():
    assert github("issues", load("github_issues_edited")).kind == "accepted"


def test_github_edit_without_content_change_is_ignored():
    data = json.loads(load("github_issues_edited"))
    data["changes"] = {}
    out = github("issues", json.dumps(data).encode())
    assert out.kind == "ignored" and "title or body" in out.reason


def test_github_closed_issue_is_ignored():
    out = github("issues", load("github_issues_closed"))
    assert (out.kind, out.report) == ("ignored", None)
    assert out.reason.startswith("closed")


def test_github_ping_is_ignored():
    out = github("ping", load("github_ping"))
    assert out.kind == "ignored" and out.reason.startswith("ping")


def test_github_comment_is_ignored():
    out = github("issue_comment", load("github_issue_comment"))
    assert out.kind == "ignored" and out.reason.startswith("comment")


def test_github_unsupported_event_is_ignored():
    out = github("push", b'{"ref": "refs/heads/main"}')
    assert out.kind == "ignored" and "unsupported event 'push'" in out.reason


def test_github_forged_signature_is_unauthorized():
    body = load("github_issues_opened")
    out = github("issues", body, signature=f"sha256={sign(body, 'wrong-secret')}")
    assert out.kind == "unauthorized" and "does not match" in out.reason
    assert out.report is None


def test_github_altered_body_is_unauthorized():
    body = load("github_issues_opened")
    signature = f"sha256={sign(body)}"
    out = github("issues", body.replace(b"empty input", b"evil input"), signature=signature)
    assert out.kind == "unauthorized"


def test_github_missing_signature_is_unauthorized():
    out = github("issues", load("github_issues_opened"), signature="")
    assert out.kind == "unauthorized" and "missing" in out.reason


def test_github_sha1_signature_is_not_enough():
    body = load("github_issues_opened")
    out = github("issues", body, signature="sha1=" + hmac.new(SECRET.encode(), body, hashlib.sha1).hexdigest())
    assert out.kind == "unauthorized"


def test_deliveries_are_refused_when_no_secret_is_configured():
    body = load("github_issues_opened")
    out = parse_delivery("github", {"X-GitHub-Event": "issues", "X-Hub-Signature-256": f"sha256={sign(body)}"}, body, None)
    assert out.kind == "unauthorized" and "BUGSLEUTH_GITHUB_WEBHOOK_SECRET" in out.reason


def test_malformed_json_with_a_valid_signature_is_invalid():
    body = b'{"action": "opened", "issue": '
    out = github("issues", body)
    assert out.kind == "invalid" and "not valid JSON" in out.reason


def test_json_that_is_not_an_object_is_invalid():
    assert github("issues", b"[1, 2]").kind == "invalid"


def test_issue_event_without_an_issue_is_invalid():
    out = github("issues", b'{"action": "opened", "repository": {"full_name": "a/b"}}')
    assert out.kind == "invalid" and "`issue`" in out.reason


def test_header_names_are_case_insensitive():
    body = load("github_issues_opened")
    headers = {"x-github-event": "issues", "x-hub-signature-256": f"sha256={sign(body)}", "x-github-delivery": "d1"}
    assert parse_delivery("github", headers, body, SECRET).kind == "accepted"


def test_unknown_provider_is_invalid():
    out = parse_delivery("bitbucket", {}, b"{}", SECRET)
    assert out.kind == "invalid" and "unknown webhook provider" in out.reason


def test_long_titles_and_bodies_are_clipped_to_the_report_limits():
    data = json.loads(load("github_issues_opened"))
    data["issue"]["title"] = "T" * 2000
    data["issue"]["body"] = "B" * 300_000
    out = github("issues", json.dumps(data).encode())
    assert out.kind == "accepted"
    assert len(out.report.title) <= 500
    assert len(out.report.body) <= 200_000 and "truncated by bugsleuth" in out.report.body


# ---------------------------------------------------------------- GitLab


def test_gitlab_open_issue_is_accepted():
    out = gitlab(load("gitlab_issue_open"))
    assert out.kind == "accepted"
    assert out.delivery_id == "5f1f1d0e-4c52-4f6e-8f6b-6a0d4b2b7d1e"
    r = out.report
    assert (r.source, r.repo, r.external_id, r.reporter) == (Source.gitlab, "shop/payments-api", "shop/payments-api#23", "jdoe")
    assert r.labels == ["performance"]
    assert r.url == "https://gitlab.example.com/shop/payments-api/-/issues/23"


def test_gitlab_description_update_is_accepted():
    assert gitlab(load("gitlab_issue_update")).kind == "accepted"


def test_gitlab_closed_issue_is_ignored():
    out = gitlab(load("gitlab_issue_close"))
    assert out.kind == "ignored" and out.reason.startswith("closed")


def test_gitlab_note_is_ignored():
    out = gitlab(b'{"object_kind": "note", "object_attributes": {"note": "+1"}}', event="Note Hook")
    assert out.kind == "ignored" and out.reason.startswith("comment")


def test_gitlab_wrong_token_is_unauthorized():
    assert gitlab(load("gitlab_issue_open"), token="guess").kind == "unauthorized"


# ---------------------------------------------------------------- Sentry


def test_sentry_event_alert_becomes_a_report_with_a_python_traceback():
    out = sentry(load("sentry_event_alert"), "event_alert")
    assert out.kind == "accepted"
    assert out.delivery_id == "c1b0f2d4-8a1e-4d4f-9a57-0a1d2b3c4d5e"
    r = out.report
    assert r.repo == "acme/shop"  # from the event's `repo` tag
    assert r.title.startswith("TypeError: unsupported operand")
    assert 'File "shop/cart.py", line 41, in total_with_discount' in r.body
    assert "    return self.total() * (1 - rate / 100)" in r.body
    assert r.body.index('File "shop/views.py"') < r.body.index('File "shop/cart.py"')  # most recent call last
    assert "TypeError: unsupported operand type(s) for /: 'NoneType' and 'int'\n```" in r.body
    assert r.external_id == "5863200411"
    assert "sentry" in r.labels and "error" in r.labels


def test_sentry_traceback_is_understood_by_the_repo_map_focus():
    from repomap.frames import parse_frames

    body = sentry(load("sentry_event_alert"), "event_alert").report.body
    frames = [(f.path, f.line, f.function) for f in parse_frames(body)]
    assert ("shop/cart.py", 41, "total_with_discount") in frames


def test_sentry_javascript_event_gets_js_stack_lines():
    out = sentry(load("sentry_event_alert_js"), "event_alert", query={"repo": "acme/storefront"})
    assert out.kind == "accepted"
    assert out.report.repo == "acme/storefront"
    body = out.report.body
    assert "    at CartTotal (app/components/Cart.tsx:31:22)" in body
    assert body.index("CartTotal") < body.index("onClick")  # innermost first, as JS prints


def test_sentry_repo_query_parameter_wins_over_the_tag():
    out = sentry(load("sentry_event_alert"), "event_alert", query={"repo": "acme/other"})
    assert out.report.repo == "acme/other"


def test_sentry_issue_created_is_accepted():
    out = sentry(load("sentry_issue_created"), "issue", query={"repo": "acme/shop"})
    assert out.kind == "accepted"
    r = out.report
    assert (r.external_id, r.url) == ("SHOP-2K", "https://sentry.io/organizations/acme/issues/5863200411/")
    assert "TypeError: unsupported operand" in r.body and "shop/cart.py" in r.body


def test_sentry_resolved_issue_is_ignored():
    out = sentry(load("sentry_issue_resolved"), "issue")
    assert out.kind == "ignored" and out.reason.startswith("closed")


def test_sentry_forged_signature_is_unauthorized():
    out = sentry(load("sentry_event_alert"), "event_alert", signature="0" * 64)
    assert out.kind == "unauthorized"


def test_sentry_chained_exceptions_are_all_printed():
    values = [
        {"type": "KeyError", "value": "'code'", "stacktrace": {"frames": [{"filename": "a.py", "lineno": 1, "function": "f"}]}},
        {"type": "ValueError", "value": "bad code", "stacktrace": {"frames": [{"filename": "b.py", "lineno": 2, "function": "g"}]}},
    ]
    text = format_event_traces({"platform": "python", "exception": {"values": values}})
    assert text.index("KeyError") < text.index("During handling") < text.index("ValueError: bad code")


# ---------------------------------------------------------------- Jira


def jira(body: bytes, **kw) -> WebhookOutcome:
    headers = {"X-Atlassian-Webhook-Identifier": "5cfa5c5f-8d68-4a2c-9b3e-2f1f0a6c1d11", **kw.pop("headers", {})}
    return parse_delivery("jira", headers, body, SECRET, **kw)


def test_jira_issue_created_with_a_signature_is_accepted():
    body = load("jira_issue_created")
    out = jira(body, headers={"X-Hub-Signature": f"sha256={sign(body)}"})
    assert out.kind == "accepted"
    r = out.report
    assert (r.title, r.repo, r.external_id) == ("CSV export duplicates an hour across the DST change", "acme/widgets", "WID-311")
    assert r.url == "https://acme.atlassian.net/browse/WID-311"
    assert "Bug" in r.labels and r.reporter == "Priya Raman"
    assert out.delivery_id == "5cfa5c5f-8d68-4a2c-9b3e-2f1f0a6c1d11"


def test_jira_secret_in_the_query_is_accepted():
    assert jira(load("jira_issue_created"), query={"secret": SECRET}).kind == "accepted"


def test_jira_bearer_token_is_accepted():
    assert jira(load("jira_issue_created"), headers={"Authorization": f"Bearer {SECRET}"}).kind == "accepted"


def test_jira_without_any_secret_is_unauthorized():
    out = jira(load("jira_issue_created"))
    assert out.kind == "unauthorized" and "missing" in out.reason


def test_jira_wrong_query_secret_is_unauthorized():
    assert jira(load("jira_issue_created"), query={"secret": "nope"}).kind == "unauthorized"


def test_jira_atlassian_document_description_becomes_text():
    out = jira(load("jira_issue_created_adf"), query={"secret": SECRET})
    assert out.kind == "accepted"
    assert "```python\nexport(start='2026-10-24'" in out.report.body
    assert "Expected 72 rows, got 73." in out.report.body


def test_jira_resolved_issue_is_ignored():
    data = json.loads(load("jira_issue_created"))
    data["webhookEvent"] = "jira:issue_updated"
    data["issue"]["fields"]["status"] = {"name": "Done", "statusCategory": {"key": "done"}}
    out = jira(json.dumps(data).encode(), query={"secret": SECRET})
    assert out.kind == "ignored" and out.reason.startswith("closed")


def test_jira_comment_is_ignored():
    body = b'{"webhookEvent": "comment_created", "timestamp": 1, "comment": {"body": "+1"}, "issue": {"id": "1"}}'
    out = jira(body, query={"secret": SECRET})
    assert out.kind == "ignored" and out.reason.startswith("comment")


# ---------------------------------------------------------------- through the HTTP route


async def test_jira_delivery_through_the_route_uses_the_query_parameters(base_settings, fixture_repo):  # noqa: F811
    from pydantic import SecretStr

    from tests.app._service_fixtures import register, running_service

    path, _ = fixture_repo
    data = json.loads(load("jira_issue_created"))
    data["issue"]["fields"]["labels"] = ["backend"]
    body = json.dumps(data).encode()
    async with running_service(base_settings(jira_webhook_secret=SecretStr(SECRET))) as svc:
        await register(svc, "acme/tiny", path)
        forged = await svc.client.post("/webhooks/jira?repo=acme/tiny&secret=nope", content=body)
        assert forged.status_code == 401
        r = await svc.client.post(f"/webhooks/jira?repo=acme/tiny&secret={SECRET}", content=body)
        assert r.status_code == 202, r.text
        assert r.json()["outcome"] == "accepted"
        assert r.json()["classification"] == "bug"
        again = await svc.client.post(f"/webhooks/jira?repo=acme/tiny&secret={SECRET}", content=body)
        assert (again.status_code, again.json()["outcome"]) == (200, "duplicate")


# ---------------------------------------------------------------- wrong types and body identity


def _with(name: str, path: tuple[str, ...], value) -> bytes:
    data = json.loads(load(name))
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(data).encode()


@pytest.mark.parametrize("provider, fixture, path, field", [
    ("github", "github_issues_opened", ("issue", "title"), "issue.title"),
    ("github", "github_issues_opened", ("issue", "body"), "issue.body"),
    ("gitlab", "gitlab_issue_open", ("object_attributes", "title"), "object_attributes.title"),
    ("gitlab", "gitlab_issue_open", ("object_attributes", "description"), "object_attributes.description"),
    ("sentry", "sentry_event_alert", ("data", "event", "title"), "event.title"),
    ("jira", "jira_issue_created", ("issue", "fields", "summary"), "issue.fields.summary"),
])  # fmt: skip
@pytest.mark.parametrize("value, kind", [(5, "a number"), (["x"], "an array"), (True, "a boolean")])
def test_a_text_field_of_the_wrong_type_is_invalid_and_named(provider, fixture, path, field, value, kind):
    body = _with(fixture, path, value)
    if provider == "github":
        out = github("issues", body)
    elif provider == "gitlab":
        out = gitlab(body)
    elif provider == "sentry":
        out = sentry(body, "event_alert")
    else:
        out = jira(body, query={"secret": SECRET})
    assert (out.kind, out.reason) == ("invalid", f"`{field}` must be a string, got {kind}")


def test_the_body_identity_ignores_the_delivery_id_and_follows_the_update_time():
    body = load("github_issues_opened")
    a, b = github("issues", body, delivery="one"), github("issues", body, delivery="two")
    assert a.identity and a.identity == b.identity
    later = _with("github_issues_opened", ("issue", "updated_at"), "2030-01-01T00:00:00Z")
    assert github("issues", later).identity != a.identity
    assert gitlab(load("gitlab_issue_open")).identity == gitlab(load("gitlab_issue_open")).identity
    assert sentry(load("sentry_event_alert"), "event_alert").identity.startswith("event:")

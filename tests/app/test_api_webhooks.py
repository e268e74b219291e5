"""Webhook intake through the API: signatures, redelivery, ignored events, unregistered repositories."""

from __future__ import annotations

import hashlib
import hmac
import json
from contextlib import asynccontextmanager
from urllib.parse import urlencode

from pydantic import SecretStr

from app import store
from app.webhooks import PROVIDERS
from schemas import Source
from tests.app._service_fixtures import base_settings, fixture_repo, register, running_service  # noqa: F401

SECRET = "whsec"


def github_issue(action: str = "opened", repo: str = "acme/tiny", title: str = "crash: ZeroDivisionError in average") -> bytes:
    return json.dumps({
        "action": action,
        "issue": {
            "number": 7, "title": title, "body": "Traceback ... ZeroDivisionError", "state": "open",
            "labels": [{"name": "bug"}], "user": {"login": "octo"},
            "html_url": f"https://github.com/{repo}/issues/7",
        },
        "repository": {"full_name": repo},
    }).encode()


@asynccontextmanager
async def github_service(base_settings, fixture_repo):
    """The app with a GitHub webhook secret and the tiny repository registered as acme/tiny."""
    path, _ = fixture_repo
    async with running_service(base_settings(github_webhook_secret=SecretStr(SECRET))) as svc:
        await register(svc, "acme/tiny", path)
        yield svc


def signed(body: bytes, delivery: str, event: str = "issues", secret: str = SECRET) -> dict[str, str]:
    sig = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sig,
            "Content-Type": "application/json"}


async def test_a_signed_issue_is_accepted_once_and_its_redelivery_is_idempotent(base_settings, fixture_repo):
    async with github_service(base_settings, fixture_repo) as svc:
        body = github_issue()
        r = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-1"))
        assert r.status_code == 202 and r.json()["outcome"] == "accepted"
        inv = r.json()["id"]
        again = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-1"))
        assert again.status_code == 200 and again.json()["outcome"] == "duplicate"
        page = (await svc.client.get("/api/investigations")).json()
        assert page["total"] == 1
        detail = await svc.wait_status(inv, ("done",))
        assert detail["source"] == "github" and detail["report"]["url"].endswith("/issues/7")


async def test_forged_and_unsigned_deliveries_are_401_recorded_and_never_queued(base_settings, fixture_repo):
    async with github_service(base_settings, fixture_repo) as svc:
        body = github_issue()
        forged = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-2", secret="wrong"))
        assert forged.status_code == 401
        unsigned = await svc.client.post(
            "/webhooks/github", content=body, headers={"X-GitHub-Event": "issues", "X-GitHub-Delivery": "d-3"}
        )
        assert unsigned.status_code == 401
        assert (await svc.client.get("/api/investigations")).json()["total"] == 0
        async with svc.runtime.db.session() as s:
            outcomes = [d.outcome for d in await store.list_deliveries(s)]
        assert outcomes == ["unauthorized", "unauthorized"]
        # the forged id does not block the genuine delivery that carries it
        genuine = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-2"))
        assert genuine.json()["outcome"] == "accepted"


async def test_non_report_events_and_unregistered_repositories_are_ignored_with_a_reason(base_settings, fixture_repo):
    async with github_service(base_settings, fixture_repo) as svc:
        closed = github_issue(action="closed")
        r = await svc.client.post("/webhooks/github", content=closed, headers=signed(closed, "d-4"))
        assert r.status_code == 202 and r.json()["outcome"] == "ignored"
        other = github_issue(repo="someone/else")
        r = await svc.client.post("/webhooks/github", content=other, headers=signed(other, "d-5"))
        assert r.status_code == 202 and r.json()["outcome"] == "ignored"
        assert "not registered" in r.json()["reason"]
        assert (await svc.client.get("/api/investigations")).json()["total"] == 0
        async with svc.runtime.db.session() as s:
            found = {d.delivery_id: d for d in await store.list_deliveries(s)}
        assert found["d-5"].outcome == "ignored" and found["d-5"].provider == Source.github


async def test_a_provider_without_a_configured_secret_refuses_everything(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/tiny", path)
        body = github_issue()
        r = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-6"))
        assert r.status_code == 401
        r = await svc.client.post("/webhooks/bitbucket", content=body)
        assert r.status_code == 422


async def test_a_signed_body_resent_under_a_new_delivery_id_is_not_investigated_again(base_settings, fixture_repo):
    async with github_service(base_settings, fixture_repo) as svc:
        body = github_issue()
        first = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-10"))
        assert first.json()["outcome"] == "accepted"
        resent = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-11-replayed"))
        assert (resent.status_code, resent.json()["outcome"]) == (200, "duplicate")
        assert "'d-10'" in resent.json()["reason"] and resent.json()["id"] == first.json()["id"]
        assert (await svc.client.get("/api/investigations")).json()["total"] == 1
        # the same issue edited later is a new event: its body's update time differs
        data = json.loads(body)
        data["action"], data["changes"] = "edited", {"body": {"from": "old"}}
        data["issue"]["updated_at"] = "2026-12-01T10:00:00Z"
        edited = json.dumps(data).encode()
        r = await svc.client.post("/webhooks/github", content=edited, headers=signed(edited, "d-12"))
        assert r.json()["outcome"] == "accepted"


async def test_a_signed_delivery_with_a_title_of_the_wrong_type_is_400_with_the_field_named(base_settings, fixture_repo):
    async with github_service(base_settings, fixture_repo) as svc:
        data = json.loads(github_issue())
        data["issue"]["title"] = 5
        body = json.dumps(data).encode()
        r = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-13"))
        assert r.status_code == 400
        assert r.json() == {"outcome": "invalid", "detail": "`issue.title` must be a string, got a number"}
        assert (await svc.client.get("/api/investigations")).json()["total"] == 0


async def test_a_form_encoded_delivery_githubs_default_content_type_is_read_from_its_payload_field(base_settings,
                                                                                                 fixture_repo):
    async with github_service(base_settings, fixture_repo) as svc:
        body = urlencode({"payload": github_issue().decode()}).encode()
        headers = {**signed(body, "d-form"), "Content-Type": "application/x-www-form-urlencoded"}
        r = await svc.client.post("/webhooks/github", content=body, headers=headers)
        assert r.status_code == 202 and r.json()["outcome"] == "accepted"
        empty = urlencode({"other": "x"}).encode()
        refused = await svc.client.post("/webhooks/github", content=empty,
                                        headers={**signed(empty, "d-form-2"), "Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
        assert refused.status_code == 400 and "no `payload` field" in refused.json()["detail"]


async def test_a_signed_delivery_nested_too_deep_is_a_400_recorded_not_a_500(base_settings, fixture_repo):
    async with github_service(base_settings, fixture_repo) as svc:
        body = b'{"action": "opened", "issue": ' + b"[" * 100_000 + b"}"
        r = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-deep"))
        assert r.status_code == 400 and "nested deeper" in r.json()["detail"]
        async with svc.runtime.db.session() as s:
            assert [(d.outcome, d.delivery_id) for d in await store.list_deliveries(s)] == [("invalid", "d-deep")]


async def test_a_delivery_the_parser_itself_fails_on_is_a_500_still_recorded_with_the_failure(base_settings, fixture_repo,
                                                                                              monkeypatch):
    def broken(headers, body, secret, *, query=None):
        raise AttributeError("'str' object has no attribute 'get'")

    monkeypatch.setitem(PROVIDERS, Source.github, broken)
    async with github_service(base_settings, fixture_repo) as svc:
        body = github_issue()
        r = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-odd"))
        assert r.status_code == 500 and r.json()["outcome"] == "invalid"
        assert "bugsleuth could not read this delivery (AttributeError: 'str' object" in r.json()["detail"]
        async with svc.runtime.db.session() as s:
            recorded = await store.list_deliveries(s)
        assert [(d.outcome, d.reason.split(" (")[0]) for d in recorded] == [("invalid", "bugsleuth could not read this delivery")]

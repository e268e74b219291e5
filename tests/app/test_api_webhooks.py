"""Webhook intake through the API: signatures, redelivery, ignored events, unregistered repositories."""

from __future__ import annotations

import hashlib
import hmac
import json

from pydantic import SecretStr

from app import store
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


def signed(body: bytes, delivery: str, event: str = "issues", secret: str = SECRET) -> dict[str, str]:
    sig = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sig,
            "Content-Type": "application/json"}


async def test_a_signed_issue_is_accepted_once_and_its_redelivery_is_idempotent(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings(github_webhook_secret=SecretStr(SECRET))) as svc:
        await register(svc, "acme/tiny", path)
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
    path, _ = fixture_repo
    async with running_service(base_settings(github_webhook_secret=SecretStr(SECRET))) as svc:
        await register(svc, "acme/tiny", path)
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
    path, _ = fixture_repo
    async with running_service(base_settings(github_webhook_secret=SecretStr(SECRET))) as svc:
        await register(svc, "acme/tiny", path)
        closed = github_issue(action="closed")
        r = await svc.client.post("/webhooks/github", content=closed, headers=signed(closed, "d-4"))
        assert r.status_code == 202 and r.json()["outcome"] == "ignored"
        other = github_issue(repo="someone/else")
        r = await svc.client.post("/webhooks/github", content=other, headers=signed(other, "d-5"))
        assert r.status_code == 202 and r.json()["outcome"] == "ignored"
        assert "not registered" in r.json()["reason"]
        assert (await svc.client.get("/api/investigations")).json()["total"] == 0
        async with svc.runtime.db.session() as s:
            found = await store.find_delivery(s, Source.github, "d-5")
        assert found is not None and found.outcome == "ignored"


async def test_a_provider_without_a_configured_secret_refuses_everything(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/tiny", path)
        body = github_issue()
        r = await svc.client.post("/webhooks/github", content=body, headers=signed(body, "d-6"))
        assert r.status_code == 401
        r = await svc.client.post("/webhooks/bitbucket", content=body)
        assert r.status_code == 422

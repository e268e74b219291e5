"""The HTTP API on the embedded default (SQLite + in-process pool), with a stub investigator."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from app import store
from app.config import ConfigurationError
from app.main import create_app
from tests.app._service_fixtures import (  # noqa: F401 - fixtures
    StubInvestigator,
    base_settings,
    fixture_repo,
    register,
    running_service,
)

REPORT = {"repo": "acme/tiny", "title": "average crashes on empty list", "body": "ZeroDivisionError in average()"}


async def test_report_is_committed_before_202_and_investigated(base_settings, fixture_repo):
    path, commits = fixture_repo
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/tiny", path)
        r = await svc.client.post("/api/reports", json=REPORT)
        assert r.status_code == 202
        body = r.json()
        assert body["urls"]["events"] == f"/api/investigations/{body['id']}/events"
        async with svc.runtime.db.session() as s:
            assert await store.get_status(s, body["id"]) is not None
        detail = await svc.wait_status(body["id"], ("done",))
        assert detail["diagnosis"]["summary"].startswith("average divides")
        assert detail["commit"] == commits["head"]
        assert detail["stats"]["trace_events"] >= 3
        call = svc.stub.calls[0]
        assert not (call["root"] / "app.py").stat().st_mode & 0o222, "the investigated tree must be read-only"
        # the archive has no history of its own: the run is told where it lives, and up to which commit
        assert call["commit"] == commits["head"]
        assert call["git_dir"] is not None and (Path(call["git_dir"]) / "HEAD").is_file()


async def test_unknown_repository_is_404_naming_the_list_endpoint(base_settings):
    async with running_service(base_settings()) as svc:
        r = await svc.client.post("/api/reports", json={**REPORT, "repo": "nobody/nothing"})
        assert r.status_code == 404
        assert "/api/repos" in r.json()["detail"]
        page = (await svc.client.get("/api/investigations")).json()
        assert page["total"] == 0


async def test_malformed_json_and_missing_field_are_422_naming_the_field(base_settings):
    async with running_service(base_settings()) as svc:
        r = await svc.client.post("/api/reports", content=b'{"repo": "a/b", "title": ', headers={"content-type": "application/json"})
        assert r.status_code == 422
        r = await svc.client.post("/api/reports", json={"repo": "a/b"})
        assert r.status_code == 422
        assert any(err["loc"][-1] == "title" for err in r.json()["detail"])


async def test_a_blank_title_is_refused_naming_the_field_and_nothing_is_stored(base_settings):
    async with running_service(base_settings()) as svc:
        r = await svc.client.post("/api/reports", json={**REPORT, "title": "   "})
        assert r.status_code == 422
        [err] = r.json()["detail"]
        assert err["loc"][-1] == "title" and err["msg"] == "Value error, must not be blank"
        assert (await svc.client.get("/api/investigations")).json()["total"] == 0


async def test_a_blank_repository_name_is_refused_in_the_words_a_blank_title_is(base_settings):
    async with running_service(base_settings()) as svc:
        for url, body in (("/api/reports", {**REPORT, "repo": "  "}), ("/api/repos", {"name": " ", "location": "/x"})):
            [err] = (await svc.client.post(url, json=body)).json()["detail"]
            assert err["loc"][-1] in ("repo", "name") and err["msg"] == "Value error, must not be blank"


async def test_oversized_body_is_413_by_header_and_by_stream(base_settings):
    async with running_service(base_settings(max_body_bytes=2048)) as svc:
        big = {**REPORT, "body": "x" * 5000}
        r = await svc.client.post("/api/reports", json=big)
        assert r.status_code == 413

        async def chunks():
            for _ in range(10):
                yield b"x" * 1000

        r = await svc.client.post("/api/reports", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413


async def test_write_endpoints_need_the_bearer_token_when_one_is_set(base_settings, fixture_repo):
    path, _ = fixture_repo
    settings = base_settings(api_token=SecretStr("s3cret"))
    async with running_service(settings) as svc:
        r = await svc.client.post("/api/repos", json={"name": "acme/tiny", "location": str(path)})
        assert r.status_code == 401
        r = await svc.client.post(
            "/api/repos", json={"name": "acme/tiny", "location": str(path)}, headers={"Authorization": "Bearer s3cret"}
        )
        assert r.status_code == 201
        assert (await svc.client.get("/api/repos")).status_code == 200


def test_public_bind_without_token_refuses_to_start(base_settings):
    with pytest.raises(ConfigurationError, match="BUGSLEUTH_API_TOKEN"):
        create_app(base_settings(host="0.0.0.0"))


async def test_list_filters_by_status_and_paginates(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings(investigate_classes=[])) as svc:
        await register(svc, "acme/tiny", path)
        ids = [(await svc.client.post("/api/reports", json={**REPORT, "title": f"t{i}"})).json()["id"] for i in range(5)]
        page = (await svc.client.get("/api/investigations", params={"limit": 2, "offset": 1, "status": "skipped"})).json()
        assert page["total"] == 5
        assert [i["id"] for i in page["items"]] == [ids[3], ids[2]]
        none = (await svc.client.get("/api/investigations", params={"status": "done"})).json()
        assert none["total"] == 0


async def test_unlisted_classification_is_stored_as_skipped_and_never_run(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings(investigate_classes=[])) as svc:
        await register(svc, "acme/tiny", path)
        r = await svc.client.post("/api/reports", json=REPORT)
        assert r.json()["status"] == "skipped"
        await asyncio.sleep(0.3)
        detail = (await svc.client.get(f"/api/investigations/{r.json()['id']}")).json()
        assert detail["status"] == "skipped"
        assert detail["report"]["title"] == REPORT["title"]
        assert svc.stub.calls == []


async def test_feedback_is_memory_for_later_runs_and_rerun_carries_extra_context(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/tiny", path)
        first = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        await svc.wait_status(first, ("done",))
        r = await svc.client.post(f"/api/investigations/{first}/feedback", json={"verdict": "wrong", "note": "look at report()"})
        assert r.status_code == 201
        r = await svc.client.post(f"/api/investigations/{first}/rerun", json={"extra_context": "happens with []"})
        assert r.status_code == 202
        second = r.json()["id"]
        detail = await svc.wait_status(second, ("done",))
        assert detail["rerun_of"] == first
        call = svc.stub.calls[-1]
        assert call["extra_context"] == "happens with []"
        assert "look at report()" in call["memory"] and "wrong" in call["memory"]


async def test_cancel_stops_a_running_investigation_within_a_second(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings(), StubInvestigator(block=True)) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        await svc.wait_status(inv, ("running",))
        started = time.monotonic()
        r = await svc.client.post(f"/api/investigations/{inv}/cancel")
        assert r.status_code == 202
        detail = await svc.wait_status(inv, ("cancelled",), timeout=3)
        assert time.monotonic() - started < 1.0
        assert detail["termination"] == "cancelled"


async def test_cancel_of_a_queued_investigation_is_immediate(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings(workers=1), StubInvestigator(block=True)) as svc:
        await register(svc, "acme/tiny", path)
        first = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        second = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        await svc.wait_status(first, ("running",))
        # "running" is stored just before the investigator is entered; wait for the call itself.
        for _ in range(300):
            if svc.stub.calls:
                break
            await asyncio.sleep(0.01)
        r = await svc.client.post(f"/api/investigations/{second}/cancel")
        assert r.json()["status"] == "cancelled"
        await svc.client.post(f"/api/investigations/{first}/cancel")
        await svc.wait_status(first, ("cancelled",))
        assert len(svc.stub.calls) == 1


async def test_event_stream_carries_phase_changes_and_tool_calls(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings(), StubInvestigator(delay_s=0.3)) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        r = await svc.client.get(f"/api/investigations/{inv}/events", timeout=10)
        assert r.headers["content-type"].startswith("text/event-stream")
        text = r.text
        for kind in ("event: status", "event: tool_call", "event: phase_change", "event: stop", "event: end"):
            assert kind in text
        trace = (await svc.client.get(f"/api/investigations/{inv}/trace")).json()
        assert [e["kind"] for e in trace] == ["start", "tool_call", "phase_change", "stop"]
        after = int(text.split("id: ")[2].split("\n")[0])
        r = await svc.client.get(f"/api/investigations/{inv}/events", headers={"Last-Event-ID": str(after)})
        assert "event: status\ndata: {\"run\":1,\"kind\":\"status\",\"status\":\"running\"" not in r.text


async def test_model_endpoint_down_fails_the_investigation_not_the_service(base_settings, fixture_repo):
    path, _ = fixture_repo
    stub = StubInvestigator(fail=httpx.ConnectError("connection refused"))
    async with running_service(base_settings(), stub) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        detail = await svc.wait_status(inv, ("failed",))
        assert detail["termination"] == "error"
        assert "connection refused" in detail["error"]
        assert (await svc.client.get("/health")).json() == {"status": "ok"}
        assert (await svc.client.get("/ready")).status_code == 200


async def test_repos_endpoint_refuses_missing_paths_and_duplicates(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings()) as svc:
        r = await svc.client.post("/api/repos", json={"name": "acme/none", "location": "/does/not/exist"})
        assert r.status_code == 422
        await register(svc, "acme/tiny", path)
        r = await svc.client.post("/api/repos", json={"name": "acme/tiny", "location": str(path)})
        assert r.status_code == 409
        assert [x["name"] for x in (await svc.client.get("/api/repos")).json()] == ["acme/tiny"]


async def test_metrics_count_investigations_by_status_and_classification(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        await svc.wait_status(inv, ("done",))
        text = (await svc.client.get("/metrics")).text
        assert 'bugsleuth_investigations{classification=' in text and 'status="done"} 1.0' in text
        assert "bugsleuth_tool_calls_total 1.0" in text
        assert 'bugsleuth_tokens_total{direction="input"} 100.0' in text
        assert "bugsleuth_investigation_duration_seconds_count 1.0" in text


async def test_unknown_investigation_is_404(base_settings):
    async with running_service(base_settings()) as svc:
        for path in ("/api/investigations/999", "/api/investigations/999/trace", "/api/investigations/999/events"):
            assert (await svc.client.get(path)).status_code == 404
        assert (await svc.client.post("/api/investigations/999/cancel")).status_code == 404
        assert (await svc.client.post("/api/investigations/999/rerun")).status_code == 404


async def test_overriding_get_settings_changes_the_write_guard(base_settings):
    from app.config import get_settings

    async with running_service(base_settings()) as svc:
        assert (await svc.client.post("/api/repos", json={"name": "a/b", "location": "/nope"})).status_code == 422
        svc.app.dependency_overrides[get_settings] = lambda: base_settings(api_token=SecretStr("t"))
        assert (await svc.client.post("/api/repos", json={"name": "a/b", "location": "/nope"})).status_code == 401


async def test_docs_page_loads_only_same_origin_files_under_the_strict_policy(base_settings):
    import re

    from app.security import CONTENT_SECURITY_POLICY

    async with running_service(base_settings()) as svc:
        r = await svc.client.get("/docs")
        assert r.status_code == 200
        assert r.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        html = r.text
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "inline script"
        assert not re.search(r"\s(style|on[a-z]+)=", html), "inline style or handler"
        urls = re.findall(r'(?:src|href|data-openapi-url)="([^"]+)"', html)
        assert len(urls) >= 4 and all(u.startswith("/") and not u.startswith("//") for u in urls), urls
        for url in urls:
            asset = await svc.client.get(url.replace("&amp;", "&"))
            assert asset.status_code == 200, url
        assert (await svc.client.get("/static/swagger/index.html")).status_code == 404
        assert (await svc.client.get("/redoc")).status_code == 404
        assert (await svc.client.get("/openapi.json")).json()["info"]["title"] == "bugsleuth"

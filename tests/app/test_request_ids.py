"""Request-id correlation in the JSON logs and the access log (on by default, off with a setting)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

from app.observability import JsonFormatter
from tests.app._service_fixtures import (  # noqa: F401 - fixtures
    base_settings,
    fixture_repo,
    register,
    running_service,
)

REPORT = {"repo": "acme/tiny", "title": "average crashes on empty list", "body": "ZeroDivisionError in average()"}
GENERATED = re.compile(r"[0-9a-f]{32}")


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter())
        self.lines: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))


@contextmanager
def json_log_lines() -> Iterator[list[dict]]:
    """Every line the service's loggers write meanwhile, as the JSON objects they are."""
    handler = _Lines()
    logger = logging.getLogger("bugsleuth")
    logger.addHandler(handler)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)


async def test_a_sane_request_id_is_echoed_and_carried_by_the_access_line(base_settings):
    async with running_service(base_settings()) as svc:
        with json_log_lines() as lines:
            r = await svc.client.get("/api/repos", headers={"X-Request-ID": "req-2026.12/abc:1"})
        metrics = (await svc.client.get("/metrics")).text
    assert 'bugsleuth_http_request_duration_seconds_count{method="GET",route="/api/repos",status="200"} 1.0' in metrics
    assert r.headers["x-request-id"] == "req-2026.12/abc:1"
    (access,) = [line for line in lines if line["logger"] == "bugsleuth.access"]
    assert access["request_id"] == "req-2026.12/abc:1"
    assert access["method"] == "GET" and access["path"] == "/api/repos" and access["status"] == 200
    assert access["msg"] == "GET /api/repos 200" and access["duration_ms"] >= 0 and "client" in access


async def test_a_missing_or_insane_request_id_is_replaced_by_a_generated_one(base_settings):
    async with running_service(base_settings()) as svc:
        plain = await svc.client.get("/health")
        again = await svc.client.get("/health")
        spaced = await svc.client.get("/health", headers={"X-Request-ID": "two words"})
        huge = await svc.client.get("/health", headers={"X-Request-ID": "a" * 200})
        injected = await svc.client.get("/health", headers={"X-Request-ID": '{"level":"error"}'})
    ids = [r.headers["x-request-id"] for r in (plain, again, spaced, huge, injected)]
    assert all(GENERATED.fullmatch(i) for i in ids), ids
    assert len(set(ids)) == len(ids)


async def test_the_investigation_a_request_created_logs_with_that_request_id(base_settings, fixture_repo):
    path, _ = fixture_repo
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/tiny", path)
        with json_log_lines() as lines:
            r = await svc.client.post("/api/reports", json=REPORT, headers={"X-Request-ID": "intake-7"})
            inv = r.json()["id"]
            await svc.wait_status(inv, ("done",))
            rerun = await svc.client.post(f"/api/investigations/{inv}/rerun", json={}, headers={"X-Request-ID": "again-8"})
            await svc.wait_status(rerun.json()["id"], ("done",))
    job_lines = [line for line in lines if line["logger"] == "bugsleuth.jobs" and line.get("investigation_id") == inv]
    assert {line["msg"] for line in job_lines} >= {"investigation started", "investigation finished"}
    assert all(line["request_id"] == "intake-7" for line in job_lines)
    rerun_lines = [line for line in lines if line.get("investigation_id") == rerun.json()["id"]]
    assert rerun_lines and all(line["request_id"] == "again-8" for line in rerun_lines)
    posted = [line for line in lines if line["logger"] == "bugsleuth.access" and line["path"] == "/api/reports"]
    assert posted[0]["request_id"] == "intake-7" and posted[0]["status"] == 202


async def test_the_access_log_is_off_with_the_setting_but_the_id_is_still_echoed(base_settings):
    async with running_service(base_settings(access_log=False)) as svc:
        with json_log_lines() as lines:
            r = await svc.client.get("/api/repos", headers={"X-Request-ID": "quiet-1"})
    assert r.headers["x-request-id"] == "quiet-1"
    assert not [line for line in lines if line["logger"] == "bugsleuth.access"]

"""The scale-out path against the real PostgreSQL on 127.0.0.1:5432: storage through psycopg, jobs on
procrastinate. Each test session works in its own schema, dropped at the end."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import text

from app import store
from app.db import Database, run_migrations
from app.jobs.procrastinate_app import ProcrastinateJobs, lock_for
from app.models import Investigation
from app.runtime import Runtime
from schemas import BugReport, Classification, ClassificationResult, Status
from tests.app._service_fixtures import (  # noqa: F401 - fixtures
    StubInvestigator,
    base_settings,
    fixture_repo,
    register,
    running_service,
)
from tests.app.test_store import check_an_outcome_is_stored_whatever_it_counted

pytestmark = pytest.mark.postgres

PG = f"postgres@127.0.0.1:5432/{os.environ.get('BUGSLEUTH_TEST_PG_DATABASE', 'test')}"
"""The shared PostgreSQL; `BUGSLEUTH_TEST_PG_DATABASE` picks another database (the default stays `test`)."""
REPORT = {"repo": "acme/tiny", "title": "average crashes on empty list", "body": "ZeroDivisionError in average()"}
TABLES = (
    "trace_events, feedback, webhook_deliveries, investigations, reports, repositories, "
    "procrastinate_events, procrastinate_periodic_defers, procrastinate_jobs, procrastinate_workers"
)


@pytest.fixture(scope="module")
def pg_schema() -> Iterator[str]:
    """A private schema with the migrated tables; skipped when PostgreSQL is unreachable."""
    try:
        conn = psycopg.connect(f"postgresql://{PG}", connect_timeout=3, autocommit=True)
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is unreachable on 127.0.0.1:5432 (database test, user postgres): {exc}")
    schema = f"bugsleuth_test_{os.getpid()}"
    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    conn.execute(f"CREATE SCHEMA {schema}")
    run_migrations(url_for(schema))
    try:
        yield schema
    finally:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.close()


def url_for(schema: str) -> str:
    """SQLAlchemy URL whose connections live in `schema`."""
    return f"postgresql+psycopg://{PG}?options=-csearch_path%3D{schema}"


@pytest.fixture
def pg_url(pg_schema: str) -> str:
    """The schema's URL, with every table emptied."""
    with psycopg.connect(f"postgresql://{PG}", autocommit=True) as conn:
        conn.execute(f"SET search_path TO {pg_schema}")
        conn.execute(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE")
    return url_for(pg_schema)


async def _jobs(db: Database) -> list[dict]:
    async with db.engine.connect() as conn:
        rows = await conn.execute(text("SELECT id, status::text AS status, args, lock, queueing_lock FROM procrastinate_jobs ORDER BY id"))
        return [dict(r._mapping) for r in rows]


async def test_report_and_its_job_are_committed_together(base_settings, fixture_repo, pg_url):
    path, _ = fixture_repo
    async with running_service(base_settings(database_url=pg_url)) as svc:
        assert svc.settings.resolved_job_backend == "procrastinate"
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        jobs = await _jobs(svc.runtime.db)
        assert [j["args"] for j in jobs] == [{"investigation_id": inv}]
        assert jobs[0]["queueing_lock"] == f"investigation:{inv}"
        async with svc.runtime.db.session() as s:
            assert (await s.get(Investigation, inv)).job_id == jobs[0]["id"]


async def test_an_outcome_is_stored_whatever_it_counted_beyond_postgresqls_integers_and_json(pg_url):
    db = Database(pg_url)
    try:
        await check_an_outcome_is_stored_whatever_it_counted(db)
    finally:
        await db.dispose()


async def test_text_with_nul_or_lone_surrogates_is_stored_with_replacement_characters(base_settings, pg_url):
    """PostgreSQL refuses NUL in text: any string that reaches storage (a dashboard form's feedback note or rerun
    context, a webhook's reason) is stored with U+FFFD instead of failing the request."""
    from schemas import Feedback, Source

    runtime = Runtime(settings=base_settings(database_url=pg_url), db=Database(pg_url))
    try:
        async with runtime.db.session() as s:
            await store.add_repository(s, "acme/tiny", "/tmp")
            inv, _ = await store.create_investigation(
                s, BugReport(title="t", repo="acme/tiny"), ClassificationResult(label=Classification.bug, confidence=1,
                reason="r"), investigate=True, explorer="offline")
            await store.add_feedback(s, inv, Feedback.wrong, "note \x00 \ud800 end")
            rerun = await store.create_rerun(s, inv, extra_context="ctx \x00", explorer="offline")
            await store.record_delivery(s, Source.github, delivery_id="d\x00", outcome="invalid", reason="bad \x00",
                                        authenticated=False)
        async with runtime.db.read_session() as s:
            detail = await store.get_investigation(s, inv)
            assert [f.note for f in detail.feedback] == ["note \ufffd \ufffd end"]
            assert (await s.get(Investigation, rerun)).extra_context == "ctx \ufffd"
            assert [(d.delivery_id, d.reason) for d in await store.list_deliveries(s, limit=5, offset=0)] == [
                ("d\ufffd", "bad \ufffd")]
    finally:
        await runtime.db.dispose()


async def test_a_rolled_back_intake_leaves_neither_report_nor_job(base_settings, pg_url):
    settings = base_settings(database_url=pg_url)
    runtime = Runtime(settings=settings, db=Database(pg_url))
    jobs = ProcrastinateJobs(runtime)
    await jobs.start()
    try:
        with pytest.raises(RuntimeError):
            async with runtime.db.session() as s:
                inv, _ = await store.create_investigation(
                    s, BugReport(title="t", repo="acme/tiny"),
                    ClassificationResult(label=Classification.bug, confidence=1, reason="r"),
                    investigate=True, explorer="offline",
                )
                await jobs.enqueue(s, inv, "acme/tiny")
                raise RuntimeError("crash between defer and commit")
        assert await _jobs(runtime.db) == []
        async with runtime.db.session() as s:
            assert (await store.list_investigations(s)).total == 0
    finally:
        await jobs.stop()
        await runtime.db.dispose()


async def _worker_runtime(settings, stub) -> tuple[Runtime, ProcrastinateJobs]:
    runtime = Runtime(settings=settings, db=Database(settings.resolved_database_url), investigate_fn=stub)
    jobs = ProcrastinateJobs(runtime)
    runtime.jobs = jobs
    await jobs.start()
    return runtime, jobs


async def test_a_worker_runs_the_job_and_stores_the_diagnosis(base_settings, fixture_repo, pg_url):
    path, commits = fixture_repo
    settings = base_settings(database_url=pg_url)
    async with running_service(settings) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        stub = StubInvestigator()
        runtime, jobs = await _worker_runtime(settings, stub)
        try:
            await jobs.run_worker(wait=False, install_signal_handlers=False)
        finally:
            await jobs.stop()
            await runtime.db.dispose()
        detail = (await svc.client.get(f"/api/investigations/{inv}")).json()
        assert detail["status"] == "done"
        assert detail["commit"] == commits["head"]
        events = (await svc.client.get(f"/api/investigations/{inv}/events")).text
        assert "event: tool_call" in events and "event: end" in events


async def test_the_stalled_job_of_a_killed_worker_runs_again(base_settings, fixture_repo, pg_url):
    path, _ = fixture_repo
    settings = base_settings(database_url=pg_url, stalled_after_s=5)
    async with running_service(settings) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        # what a SIGKILLed worker leaves behind: the job `doing`, its worker's heartbeat old, the row running
        async with svc.runtime.db.session() as s:
            await s.execute(text(
                "INSERT INTO procrastinate_workers (last_heartbeat) VALUES (now() - interval '1 hour')"
            ))
            await s.execute(text(
                "UPDATE procrastinate_jobs SET status = 'doing', worker_id = (SELECT max(id) FROM procrastinate_workers)"
            ))
            row = await s.get(Investigation, inv)
            row.status, row.runs, row.worker = Status.running, 1, "procrastinate:dead:1"
        stub = StubInvestigator()
        runtime, jobs = await _worker_runtime(settings, stub)
        try:
            repaired = await jobs.sweep()
            assert repaired["retried"] == 1
            await jobs.run_worker(wait=False, install_signal_handlers=False)
        finally:
            await jobs.stop()
            await runtime.db.dispose()
        detail = (await svc.client.get(f"/api/investigations/{inv}")).json()
        assert detail["status"] == "done" and detail["runs"] == 2


async def test_the_sweeper_defers_a_queued_investigation_without_a_job(base_settings, pg_url):
    settings = base_settings(database_url=pg_url, sweep_interval_s=0.01)
    runtime, jobs = await _worker_runtime(settings, StubInvestigator())
    try:
        async with runtime.db.session() as s:
            inv, _ = await store.create_investigation(
                s, BugReport(title="t", repo="acme/tiny"),
                ClassificationResult(label=Classification.bug, confidence=1, reason="r"),
                investigate=True, explorer="offline",
            )
        await asyncio.sleep(0.05)
        assert (await jobs.sweep())["deferred"] == 1
        assert [j["args"] for j in await _jobs(runtime.db)] == [{"investigation_id": inv}]
        assert (await jobs.sweep())["deferred"] == 0
    finally:
        await jobs.stop()
        await runtime.db.dispose()


async def test_cancel_aborts_a_running_job_within_a_second(base_settings, fixture_repo, pg_url):
    path, _ = fixture_repo
    settings = base_settings(database_url=pg_url)
    async with running_service(settings) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        runtime, jobs = await _worker_runtime(settings, StubInvestigator(block=True))
        worker = asyncio.create_task(jobs.run_worker(install_signal_handlers=False))
        try:
            await svc.wait_status(inv, ("running",), timeout=15)
            started = time.monotonic()
            assert (await svc.client.post(f"/api/investigations/{inv}/cancel")).status_code == 202
            detail = await svc.wait_status(inv, ("cancelled",), timeout=5)
            assert time.monotonic() - started < 1.0
            assert detail["termination"] == "cancelled"
        finally:
            worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)
            await jobs.stop()
            await runtime.db.dispose()


def test_jobs_of_one_repository_share_its_lock_slots():
    assert lock_for("acme/tiny", 4, 1) == lock_for("acme/tiny", 5, 1)
    assert {lock_for("acme/tiny", i, 2) for i in range(10)} == {"repo:acme/tiny:0", "repo:acme/tiny:1"}
    assert lock_for("acme/a", 1, 1) != lock_for("acme/b", 1, 1)


async def test_an_investigation_whose_job_gave_up_is_closed_as_failed(base_settings, fixture_repo, pg_url):
    path, _ = fixture_repo
    settings = base_settings(database_url=pg_url)
    async with running_service(settings) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        async with svc.runtime.db.session() as s:
            await s.execute(text("UPDATE procrastinate_jobs SET status = 'failed'"))
            row = await s.get(Investigation, inv)
            row.status = Status.running
        repaired = await svc.runtime.jobs.sweep()
        assert repaired["closed"] == 1
        detail = (await svc.client.get(f"/api/investigations/{inv}")).json()
        assert detail["status"] == "failed" and "retries" in detail["error"]

"""`app.db` on a real SQLite database: cancellation never leaves the write lock behind; reads never take it."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from types import SimpleNamespace

import anyio
import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from app import store
from app.db import Database, run_to_completion
from app.streams import investigation_events
from schemas import BugReport, Classification, ClassificationResult
from tests.app.test_store import db  # noqa: F401 (the migrated SQLite database fixture)


def _write_lock_is_free(db: Database) -> bool:
    """Whether another process-like connection gets the write lock at once."""
    conn = sqlite3.connect(db.engine.url.database, timeout=0.2, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


async def test_event_streams_whose_client_leaves_mid_query_leave_no_lock_and_no_connection(db):
    async with db.session() as s:
        investigation_id, _ = await store.create_investigation(
            s, BugReport(title="t", repo="acme/tiny"),
            ClassificationResult(label=Classification.bug, confidence=0.9, reason="r"),
            investigate=True, explorer="offline",
        )
    runtime = SimpleNamespace(db=db)
    for attempt in range(24):
        async def follow() -> None:
            async for _ in investigation_events(runtime, investigation_id, poll_s=0):
                pass

        # starlette cancels a streaming response's task group when the client disconnects: the cancellation
        # lands wherever the generator is, often inside a statement
        async with anyio.create_task_group() as tg:
            tg.start_soon(follow)
            await anyio.sleep(0.001 * (attempt % 6 + 1))
            tg.cancel_scope.cancel()
        assert _write_lock_is_free(db), f"write lock still held after cancellation #{attempt}"
    assert db.engine.pool.checkedout() == 0
    assert db.read_engine.pool.checkedout() == 0


async def test_run_to_completion_finishes_the_work_then_passes_the_cancellation_on():
    finished = asyncio.Event()

    async def work() -> str:
        await asyncio.sleep(0.1)
        finished.set()
        return "done"

    task = asyncio.create_task(run_to_completion(work()))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished.is_set()
    assert await run_to_completion(work()) == "done"


async def test_a_read_session_refuses_writes(db):
    with pytest.raises(OperationalError, match="readonly"):
        async with db.read_session() as s:
            await s.execute(text("DELETE FROM investigations"))


async def test_an_open_read_session_neither_blocks_nor_waits_for_a_writer(db):
    async with db.read_session() as reader:
        before = (await reader.execute(text("SELECT count(*) FROM repositories"))).scalar()
        started = time.monotonic()
        async with db.session() as writer:
            await store.add_repository(writer, "acme/tiny", "/tmp/nowhere")
        assert time.monotonic() - started < 1.0
        # the reader keeps its snapshot
        assert (await reader.execute(text("SELECT count(*) FROM repositories"))).scalar() == before
    async with db.read_session() as s:
        assert (await s.execute(text("SELECT count(*) FROM repositories"))).scalar() == before + 1

"""`app.store` on a real SQLite database (WAL): dedup, claims, memory, requeue."""

from __future__ import annotations

import asyncio

import pytest

from app import store
from app.db import Database
from app.models import Investigation
from schemas import BugReport, Classification, ClassificationResult, Feedback, Source, Status

BUG = ClassificationResult(label=Classification.bug, confidence=0.9, reason="traceback")


@pytest.fixture
async def db(tmp_path):
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    await database.migrate()
    yield database
    await database.dispose()


async def _new(db: Database, repo: str = "acme/tiny", title: str = "t") -> int:
    async with db.session() as s:
        inv, _ = await store.create_investigation(
            s, BugReport(title=title, repo=repo), BUG, investigate=True, explorer="offline"
        )
    return inv


async def test_sqlite_runs_in_wal_mode(db):
    async with db.engine.connect() as conn:
        mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
    assert mode == "wal"


async def test_a_redelivered_webhook_id_is_a_duplicate_but_a_forged_one_blocks_nothing(db):
    async with db.session() as s:
        await store.record_delivery(s, Source.github, delivery_id="d-1", outcome="unauthorized", authenticated=False)
    async with db.session() as s:
        await store.record_delivery(s, Source.github, delivery_id="d-1", outcome="accepted", authenticated=True)
    with pytest.raises(store.DuplicateError):
        async with db.session() as s:
            await store.record_delivery(s, Source.github, delivery_id="d-1", outcome="accepted", authenticated=True)
    async with db.session() as s:
        await store.record_delivery(s, Source.gitlab, delivery_id="d-1", outcome="accepted", authenticated=True)
        assert (await store.find_delivery(s, Source.github, "d-1")).outcome == "accepted"
        assert len(await store.list_deliveries(s)) == 3


async def test_claim_next_respects_the_per_repository_limit(db):
    a1, a2, b1 = await _new(db, "acme/a"), await _new(db, "acme/a"), await _new(db, "acme/b")
    async with db.session() as s:
        assert await store.claim_next(s, worker="w", busy_repos={}, per_repo=1) == (a1, "acme/a")
    async with db.session() as s:
        assert await store.claim_next(s, worker="w", busy_repos={"acme/a": 1}, per_repo=1) == (b1, "acme/b")
    async with db.session() as s:
        assert await store.claim_next(s, worker="w", busy_repos={"acme/a": 1, "acme/b": 1}, per_repo=1) is None
        assert await store.claim_next(s, worker="w", busy_repos={"acme/a": 1, "acme/b": 1}, per_repo=2) == (a2, "acme/a")


async def test_a_claim_of_only_queued_work_refuses_an_investigation_another_worker_runs(db):
    taken, free = await _new(db), await _new(db)
    async with db.session() as s:
        assert await store.claim(s, taken, worker="pool")
    async with db.session() as s:
        assert not await store.claim(s, taken, worker="mcp", only_queued=True)
        assert await store.claim(s, taken, worker="recovering")  # a dead worker's run can still be taken over
        assert await store.claim(s, free, worker="mcp", only_queued=True)


async def test_concurrent_claims_never_hand_out_the_same_investigation(db):
    ids = [await _new(db) for _ in range(10)]

    async def claimer(name: str) -> list[int]:
        got = []
        while True:
            async with db.session() as s:
                claimed = await store.claim_next(s, worker=name, busy_repos={}, per_repo=100)
            if claimed is None:
                return got
            got.append(claimed[0])

    results = await asyncio.gather(*(claimer(f"w{i}") for i in range(4)))
    flat = [i for r in results for i in r]
    assert sorted(flat) == ids


async def test_feedback_becomes_repository_memory(db):
    inv = await _new(db, title="crash on empty list")
    async with db.session() as s:
        await store.finish(
            s, inv, status=Status.done,
            diagnosis={"affected_files": [{"path": "app.py", "line_start": 4}], "stats": {}, "termination": {"reason": "done"}},
        )
        await store.add_feedback(s, inv, Feedback.partly, "right file, wrong line")
        memory = await store.repo_memory(s, "acme/tiny")
        assert await store.repo_memory(s, "acme/other") is None
    assert "app.py:4" in memory and "partly" in memory and "wrong line" in memory


WILD_STATS = {"tool_calls": 3, "input_tokens": 2**64 - 1, "output_tokens": -1, "cost_usd": float("nan"),
              "per_phase": {"explore": {"input_tokens": 10**30}}}
"""What a run may report about itself when a server or CLI agent misreports: counts beyond any integer column, a
price that is not a number."""


async def check_an_outcome_is_stored_whatever_it_counted(db: Database) -> None:
    """Finishing an investigation whose stats are `WILD_STATS` and whose summary quotes a NUL stores its diagnosis
    (before: the transaction failed and the run's outcome was lost): counters saturate, non-finite numbers are null,
    NUL is U+FFFD, big integers stay in the JSON."""
    inv = await _new(db)
    diagnosis = {"summary": "s\x00", "stats": WILD_STATS, "termination": {"reason": "done"}}
    async with db.session() as s:
        await store.finish(s, inv, status=Status.done, diagnosis=diagnosis, report_markdown="# r")
    async with db.read_session() as s:
        detail = await store.get_investigation(s, inv)
    assert detail.status == Status.done and detail.diagnosis.summary == "s\ufffd"
    assert (detail.stats.tool_calls, detail.stats.input_tokens, detail.stats.output_tokens) == (3, 2**31 - 1, 0)
    stored = detail.diagnosis.stats
    assert stored.cost_usd is None and stored.input_tokens == 2**64 - 1
    assert stored.per_phase["explore"].input_tokens == 10**30
    async with db.read_session() as s:  # an id past the 64-bit range (typed into an address) names no row
        assert await store.get_investigation(s, 10**20) is None and await store.get_status(s, -(10**20)) is None


async def test_an_outcome_is_stored_whatever_it_counted(db):
    await check_an_outcome_is_stored_whatever_it_counted(db)


async def test_requeue_interrupted_only_touches_running_rows_of_the_given_pool(db):
    a, b, c = await _new(db), await _new(db), await _new(db)
    async with db.session() as s:
        for inv, worker in ((a, "local:h:1"), (b, "procrastinate:h:2")):
            row = await s.get(Investigation, inv)
            row.status, row.worker = Status.running, worker
    async with db.session() as s:
        assert await store.requeue_interrupted(s, worker_prefix="local:") == [a]
        assert await store.get_status(s, b) == Status.running
        assert await store.get_status(s, c) == Status.queued


async def test_cancel_of_a_queued_row_is_final_and_of_a_finished_row_a_no_op(db):
    a, b = await _new(db), await _new(db)
    async with db.session() as s:
        await store.finish(s, b, status=Status.done)
        assert await store.request_cancel(s, a) == (Status.cancelled, None)
        assert await store.request_cancel(s, b) == (Status.done, None)
        assert await store.request_cancel(s, 12345) is None
        assert not await store.claim(s, a, worker="w")


async def test_counts_cover_every_status_and_classification(db):
    await _new(db)
    async with db.session() as s:
        counts = await store.count_investigations(s)
    assert counts.by_status["queued"] == 1 and counts.by_status["done"] == 0
    assert set(counts.by_classification) == {c.value for c in Classification}

"""Group commit for the intake: reports arriving together are stored (and their jobs deferred) in one
transaction, and each caller is answered only after that transaction committed.

On SQLite every statement is a hop to the driver thread and writers are serialized, so one transaction per
request caps ingest at a few hundred per second on a busy machine; batching what queued up while the
previous commit was in flight keeps latency flat under load without weakening "stored before 202".
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from app import store
from app.observability import request_id_var
from app.runtime import Runtime
from schemas import BugReport, ClassificationResult

log = logging.getLogger("bugsleuth.intake")

MAX_BATCH = 256
"""Most reports written in one transaction."""


@dataclass
class _Item:
    report: BugReport
    classification: ClassificationResult
    investigate: bool
    request_id: str | None = field(default_factory=request_id_var.get)
    """Captured in the request's task: the writer task serves many requests."""
    done: asyncio.Future[tuple[int, int]] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class IntakeBatcher:
    """One writer task per process; `submit` returns (investigation id, report id) once committed."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the writer task."""
        self._task = asyncio.create_task(self._writer(), name="bugsleuth-intake")

    async def stop(self) -> None:
        """Write what is queued, then stop."""
        if self._task is None:
            return
        while not self._queue.empty() and not self._task.done():
            await asyncio.sleep(0.01)
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self._task = None

    async def submit(self, report: BugReport, classification: ClassificationResult, investigate: bool) -> tuple[int, int]:
        """Store one report with its investigation (and job); returns once committed."""
        if self._task is None or self._task.done():
            return (await self._write([_Item(report, classification, investigate)]))[0]
        item = _Item(report, classification, investigate)
        await self._queue.put(item)
        return await item.done

    async def _writer(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < MAX_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                _resolve(batch, await self._write(batch))
                continue
            except Exception as exc:
                if len(batch) == 1:
                    _fail(batch[0], exc)
                    continue
                log.warning("batched intake failed; writing one by one", exc_info=True)
            for item in batch:  # isolate the bad report: the others still get stored
                try:
                    _resolve([item], await self._write([item]))
                except Exception as exc:
                    _fail(item, exc)

    async def _write(self, batch: list[_Item]) -> list[tuple[int, int]]:
        jobs = self.runtime.jobs
        explorer = self.runtime.settings.explorer
        self.runtime.metrics.intake_batch.observe(len(batch))
        rows = [(i.report, i.classification, i.investigate) for i in batch]
        request_ids = [i.request_id for i in batch]
        db = self.runtime.db
        if db.is_sqlite:
            # On SQLite no job needs deferring in the transaction (the queued row is the job): one hop.
            ids = await db.run_sqlite_write(lambda conn: store.create_investigations_sync(
                conn, rows, explorer=explorer, request_ids=request_ids
            ))
            if jobs is not None and any(i.investigate for i in batch):
                jobs.committed()
            return ids
        async with self.runtime.db.session() as s:
            ids = await store.create_investigations(s, rows, explorer=explorer, request_ids=request_ids)
            if jobs is not None:
                for item, (inv_id, _) in zip(batch, ids):
                    if item.investigate:
                        await jobs.enqueue(s, inv_id, item.report.repo)
        if jobs is not None and any(i.investigate for i in batch):
            jobs.committed()
        return ids


def _resolve(batch: list[_Item], ids: list[tuple[int, int]]) -> None:
    for item, pair in zip(batch, ids):
        if not item.done.done():
            item.done.set_result(pair)


def _fail(item: _Item, exc: BaseException) -> None:
    if not item.done.done():
        item.done.set_exception(exc)

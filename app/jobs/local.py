"""The embedded job backend: an in-process pool of asyncio workers whose queue is the investigations table.

Nothing lives only in memory: a queued investigation is a row, so a restart re-queues whatever was running
and picks everything up again; rows added by other processes (CLI) are found by polling.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections import Counter

from sqlalchemy.ext.asyncio import AsyncSession

from app import store
from app.jobs.runner import run_investigation
from app.runtime import Runtime
from funnel.cancel import CancelToken
from schemas import Status

log = logging.getLogger("bugsleuth.jobs")

POLL_S = 1.0
"""Idle workers look for new rows at least this often."""


class LocalPool:
    """`workers` asyncio tasks claiming queued investigations, at most `per_repo_concurrency` per repository."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.name = f"local:{socket.gethostname()}:{os.getpid()}"
        runtime.worker_name = self.name
        self._wake = asyncio.Event()
        self._claim_lock = asyncio.Lock()
        self._busy: Counter[str | None] = Counter()
        self._tokens: dict[int, CancelToken] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False

    async def start(self) -> None:
        """Re-queue runs interrupted by the last shutdown or crash, then start the workers."""
        async with self.runtime.db.session() as s:
            requeued = await store.requeue_interrupted(s, worker_prefix="local:")
        if requeued:
            log.info("re-queued interrupted investigations", extra={"ids": ",".join(map(str, requeued))})
        self._stopping = False
        self._tasks = [
            asyncio.create_task(self._worker(i), name=f"bugsleuth-worker-{i}") for i in range(self.runtime.settings.workers)
        ]

    async def stop(self) -> None:
        """Stop the workers. Runs in flight stay `running` in the database (their threads are told to stop
        through the token) and are re-queued by the next start."""
        self._stopping = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def enqueue(self, session: AsyncSession, investigation_id: int, repo: str | None) -> None:
        """The queued row is the job: nothing else to write."""

    def committed(self) -> None:
        """Wake idle workers."""
        self._wake.set()

    async def cancel(self, investigation_id: int, job_id: int | None) -> None:
        """Trip the token of a run in this process (others see the DB flag within a poll)."""
        token = self._tokens.get(investigation_id)
        if token is not None:
            token.cancel("cancelled by request")

    @property
    def running(self) -> list[int]:
        """Investigations running in this process."""
        return list(self._tokens)

    async def _claim(self) -> tuple[int, str | None] | None:
        async with self._claim_lock:
            async with self.runtime.db.session() as s:
                claimed = await store.claim_next(
                    s,
                    worker=self.name,
                    busy_repos=dict(self._busy),
                    per_repo=self.runtime.settings.per_repo_concurrency,
                )
            if claimed is not None:
                self._busy[claimed[1]] += 1
            return claimed

    async def _worker(self, index: int) -> None:
        while not self._stopping:
            try:
                claimed = await self._claim()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("claiming a job failed", exc_info=True)
                claimed = None
            if claimed is None:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=POLL_S)
                except TimeoutError:
                    pass
                continue
            investigation_id, repo = claimed
            token = CancelToken()
            self._tokens[investigation_id] = token
            try:
                await run_investigation(self.runtime, investigation_id, cancel=token, claimed=True)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.exception("job crashed", extra={"investigation_id": investigation_id})
                await self._mark_failed(investigation_id, f"{type(exc).__name__}: {exc}")
            finally:
                self._tokens.pop(investigation_id, None)
                self._busy[repo] -= 1
                self._wake.set()

    async def _mark_failed(self, investigation_id: int, error: str) -> None:
        try:
            async with self.runtime.db.session() as s:
                await store.finish(s, investigation_id, status=Status.failed, error=error)
        except Exception:  # the database itself is down: the row stays running and is re-queued on restart
            log.warning("could not record the failure", exc_info=True)

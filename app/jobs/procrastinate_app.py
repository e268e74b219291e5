"""The scale-out job backend: procrastinate on PostgreSQL.

* The job is deferred on the very connection and transaction that stores the report (psycopg under
  SQLAlchemy), so an accepted report can never lack its job; the sweeper still repairs any queued
  investigation without a job (e.g. rows written by an older version or another tool).
* Per-repository concurrency comes from procrastinate locks (`lock="repo:<name>:<slot>"`), duplicates from
  `queueing_lock="investigation:<id>"`, retries from a RetryStrategy, cancellation from job abort.
* A worker killed mid-run stops heart-beating; the sweeper in every live worker retries its stalled jobs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from typing import Any

from procrastinate import App, JobContext, PsycopgConnector, RetryStrategy
from procrastinate import exceptions as pexc
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app import store
from app.db import driver_connection
from app.jobs.runner import run_investigation
from app.runtime import Runtime
from funnel.cancel import CancelToken
from schemas import Status

log = logging.getLogger("bugsleuth.jobs")

TASK_NAME = "bugsleuth.investigate"
"""Name of the investigation task in procrastinate's tables."""
QUEUE = "investigations"
"""Queue the investigation jobs go to."""


def conninfo(database_url: str) -> str:
    """A libpq connection string from a SQLAlchemy URL (`postgresql+psycopg://` → `postgresql://`)."""
    return database_url.replace("postgresql+psycopg://", "postgresql://", 1)


def build_app(runtime: Runtime) -> App:
    """A procrastinate App bound to the runtime's PostgreSQL, with the investigation task registered."""
    settings = runtime.settings
    app = App(connector=PsycopgConnector(conninfo=conninfo(settings.resolved_database_url), min_size=1, max_size=4))

    @app.task(
        name=TASK_NAME,
        queue=QUEUE,
        pass_context=True,
        retry=RetryStrategy(max_attempts=settings.job_max_attempts, wait=2),
    )
    async def investigate_job(context: JobContext, investigation_id: int) -> str:
        status = await run_investigation(
            runtime, investigation_id, cancel=CancelToken(), should_abort=context.should_abort
        )
        if status == Status.cancelled and context.should_abort():
            raise pexc.JobAborted()
        return status.value

    return app


def lock_for(repo: str | None, investigation_id: int, per_repo: int) -> str:
    """The procrastinate lock of a job: one of `per_repo` slots of its repository."""
    return f"repo:{repo or '-'}:{investigation_id % per_repo}"


async def defer(app: App, runtime: Runtime, investigation_id: int, repo: str | None, connection: Any | None) -> int | None:
    """Defer the job of one investigation (on `connection` when given); None when one is already queued."""
    task = app.tasks[TASK_NAME]
    try:
        return await task.configure(
            lock=lock_for(repo, investigation_id, runtime.settings.per_repo_concurrency),
            queueing_lock=f"investigation:{investigation_id}",
            connection=connection,
        ).defer_async(investigation_id=investigation_id)
    except pexc.AlreadyEnqueued:
        return None


class ProcrastinateJobs:
    """Job backend on procrastinate. In the API process it only defers and cancels; `bugsleuth worker`
    runs `run_worker` (with the sweeper)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.app = build_app(runtime)
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Open the connection pool."""
        await self.app.open_async()

    async def stop(self) -> None:
        """Stop the sweeper and close the pool."""
        if self._sweeper:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.app.close_async()

    async def enqueue(self, session: AsyncSession, investigation_id: int, repo: str | None) -> None:
        """Defer the job inside the caller's transaction and remember its id."""
        conn = await driver_connection(await session.connection())
        job_id = await defer(self.app, self.runtime, investigation_id, repo, conn)
        if job_id is not None:
            await store.set_job_id(session, investigation_id, job_id)

    def committed(self) -> None:
        """Workers are woken by procrastinate's LISTEN/NOTIFY."""

    async def cancel(self, investigation_id: int, job_id: int | None) -> None:
        """Cancel a waiting job, or ask the worker running it to abort."""
        if job_id is not None:
            await self.app.job_manager.cancel_job_by_id_async(job_id, abort=True)

    def start_sweeper(self) -> None:
        """Run `sweep` every `sweep_interval_s` in this process."""
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="bugsleuth-sweeper")

    async def _sweep_forever(self) -> None:
        while True:
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("sweep failed", exc_info=True)
            await asyncio.sleep(self.runtime.settings.sweep_interval_s)

    async def sweep(self) -> dict[str, int]:
        """Repair after crashes: defer jobs for queued investigations that lack one, and retry the jobs of
        workers that stopped heart-beating. Returns what was repaired."""
        settings = self.runtime.settings
        async with self.runtime.db.session() as s:
            orphans = await store.queued_without_job(s, older_than_s=settings.sweep_interval_s)
        for investigation_id in orphans:
            async with self.runtime.db.session() as s:
                await self.enqueue(s, investigation_id, await _repo_of(s, investigation_id))
        stalled = await self.app.job_manager.get_stalled_jobs(
            task_name=TASK_NAME, seconds_since_heartbeat=settings.stalled_after_s
        )
        retried = 0
        for job in stalled:
            log.info("retrying stalled job", extra={"job_id": job.id})
            await self.app.job_manager.retry_job(job)
            retried += 1
        async with self.runtime.db.session() as s:
            closed = await _close_dead_jobs(s)
        return {"deferred": len(orphans), "retried": retried, "closed": closed}

    async def run_worker(
        self, *, concurrency: int | None = None, wait: bool = True, install_signal_handlers: bool = True
    ) -> None:
        """Run a procrastinate worker (and the sweeper) until SIGINT/SIGTERM (or, with `wait=False`, until
        the queue is empty)."""
        settings = self.runtime.settings
        self.runtime.worker_name = f"procrastinate:{socket.gethostname()}:{os.getpid()}"
        if wait:
            self.start_sweeper()
        await self.app.run_worker_async(
            queues=[QUEUE],
            name=self.runtime.worker_name,
            wait=wait,
            install_signal_handlers=install_signal_handlers,
            concurrency=concurrency or settings.workers,
            fetch_job_polling_interval=1.0,
            abort_job_polling_interval=0.5,
            update_heartbeat_interval=settings.heartbeat_s,
            stalled_worker_timeout=settings.stalled_after_s,
            shutdown_graceful_timeout=10.0,
            delete_jobs="successful",
        )


_DEAD_JOBS = text(
    "SELECT i.id, j.status::text AS job_status, i.cancel_requested FROM investigations i JOIN procrastinate_jobs j ON j.id = i.job_id "
    "WHERE i.status IN ('queued', 'running') AND j.status IN ('failed', 'cancelled', 'aborted')"
)


async def _close_dead_jobs(session: AsyncSession) -> int:
    """Investigations whose job procrastinate gave up on (retries exhausted, cancelled, aborted) are finished
    as failed or cancelled instead of staying queued or running forever."""
    rows = (await session.execute(_DEAD_JOBS)).all()
    for investigation_id, job_status, cancel_requested in rows:
        if job_status == "failed" and not cancel_requested:
            await store.finish(session, investigation_id, status=Status.failed, error="the job failed after its retries")
        else:
            await store.finish(session, investigation_id, status=Status.cancelled)
    return len(rows)


async def _repo_of(session: AsyncSession, investigation_id: int) -> str | None:
    from app.models import Investigation  # lazy: the ORM models load only when a job needs its repository

    inv = await session.get(Investigation, investigation_id)
    return inv.repo if inv else None

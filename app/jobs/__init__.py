"""Job backends: an in-process pool on any database (default) or procrastinate workers on PostgreSQL.

Both run the same job body (`app.jobs.runner.run_investigation`); the investigation row is the source of truth.
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession


class JobBackend(Protocol):
    """What the service needs from a job backend."""

    async def start(self) -> None:
        """Begin processing (re-queue interrupted work, start pools or sweepers)."""

    async def stop(self) -> None:
        """Stop processing; interrupted investigations are picked up again on the next start."""

    async def enqueue(self, session: AsyncSession, investigation_id: int, repo: str | None) -> None:
        """Make sure a queued investigation will run, inside the caller's transaction when the backend can."""

    def committed(self) -> None:
        """Called after the enqueuing transaction committed (wakes idle local workers)."""

    async def cancel(self, investigation_id: int, job_id: int | None) -> None:
        """Stop a running or queued investigation (the DB flag is already set)."""


class NoJobs:
    """`job_backend = "none"`: reports are stored and stay queued (ingest benchmarks, read-only replicas)."""

    async def start(self) -> None:
        """Nothing to start."""

    async def stop(self) -> None:
        """Nothing to stop."""

    async def enqueue(self, session: AsyncSession, investigation_id: int, repo: str | None) -> None:
        """Nothing runs the job."""

    def committed(self) -> None:
        """Nothing to wake."""

    async def cancel(self, investigation_id: int, job_id: int | None) -> None:
        """Nothing is running."""

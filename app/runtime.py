"""What one process of the service holds: settings, database, metrics, job backend, and the investigate call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.config import Settings
from app.db import Database
from app.observability import Metrics

if TYPE_CHECKING:
    from app.batch import IntakeBatcher
    from app.jobs import JobBackend

InvestigateFn = Callable[..., Awaitable[Any]]
"""Same signature as `funnel.run.loop.investigate`; replaced in tests by a stub."""


@dataclass
class Runtime:
    """The live objects of one process (API server or worker)."""

    settings: Settings
    """Settings in force."""
    db: Database
    """Database."""
    metrics: Metrics = field(default_factory=Metrics)
    """Prometheus metrics."""
    jobs: JobBackend | None = None
    """Job backend (None until started)."""
    investigate_fn: InvestigateFn | None = None
    """The investigation entry point; None means `funnel.run.loop.investigate`."""
    worker_name: str = "api"
    """Name of this process in `investigations.worker`."""
    intake: IntakeBatcher | None = None
    """Group-commit writer for reports (None: one transaction per report)."""
    known_repos: set[str] = field(default_factory=set)
    """Repository names known to be registered (a cache for the intake's check)."""

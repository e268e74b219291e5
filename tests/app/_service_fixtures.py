"""Shared fixtures of the service tests: a tiny git repository, a scriptable investigate stub, and a running app
(lifespan entered, httpx client on ASGI). Imported by test modules (`from tests.app._service_fixtures import *`)."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.config import Settings
from app.main import create_app
from schemas import Diagnosis, Phase, PhaseChangeEvent, StartEvent, StopEvent, StopReason, Termination, ToolCallEvent
from schemas.diagnosis import AffectedFile, RootCause, RunStats

APP_PY = '''"""Tiny app with a bug."""


def average(values):
    """Mean of a list."""
    return sum(values) / len(values)


def report(values):
    return f"mean={average(values)}"
'''


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` with a fixed identity."""
    env = {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin", "HOME": str(cwd),
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def make_repo(path: Path) -> dict[str, str]:
    """A git repository with two commits; the first tagged `v1.0`. Returns {'v1': sha, 'head': sha}."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "app.py").write_text(APP_PY)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    git(path, "tag", "v1.0")
    v1 = git(path, "rev-parse", "HEAD")
    (path / "README.md").write_text("# tiny\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "second")
    return {"v1": v1, "head": git(path, "rev-parse", "HEAD")}


@dataclass
class Result:
    """Stands in for funnel's InvestigationResult."""

    diagnosis: Diagnosis
    report_markdown: str
    events: list[Any] = field(default_factory=list)


@dataclass
class StubInvestigator:
    """A scriptable `investigate`: records its calls, emits a few trace events, optionally blocks until
    cancelled or raises."""

    block: bool = False
    """Run until the CancelToken trips."""
    delay_s: float = 0.0
    """Sleep this long before answering."""
    fail: Exception | None = None
    """Raise this instead of answering."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    running: int = 0
    max_running: dict[str | None, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    async def __call__(self, report: Any, root: Path, **kwargs: Any) -> Result:
        on_event: Callable[[Any], None] = kwargs["on_event"]
        cancel = kwargs["cancel"]
        with self._lock:
            self.calls.append({"report": report, "root": root, **kwargs})
            self.running += 1
            key = report.repo
            self._current = getattr(self, "_current", {})
            self._current[key] = self._current.get(key, 0) + 1
            self.max_running[key] = max(self.max_running.get(key, 0), self._current[key])
        try:
            on_event(StartEvent(explorer="stub", report_title=report.title, root=str(root)))
            on_event(ToolCallEvent(tool="search", args={"pattern": "average"}, result_chars=10))
            on_event(PhaseChangeEvent(from_phase=Phase.explore, to_phase=Phase.deep_dive, reason="suspects named"))
            if self.fail is not None:
                raise self.fail
            waited = 0.0
            while (self.block or waited < self.delay_s) and not cancel.cancelled:
                await asyncio.sleep(0.01)
                waited += 0.01
            if cancel.cancelled:
                on_event(StopEvent(reason=StopReason.cancelled, detail=cancel.reason))
                return Result(
                    Diagnosis(termination=Termination(reason=StopReason.cancelled, detail=cancel.reason)), ""
                )
            on_event(StopEvent(reason=StopReason.done))
            diagnosis = Diagnosis(
                summary="average divides by zero on an empty list",
                root_cause=RootCause(explanation="len(values) is 0", evidence=["app.py:6"]),
                affected_files=[AffectedFile(path="app.py", line_start=4, line_end=6, symbol="average")],
                confidence=0.7,
                stats=RunStats(tool_calls=1, input_tokens=100, output_tokens=20, duration_s=0.01, explorer="stub",
                               commit=kwargs.get("commit")),
            )
            return Result(diagnosis, "# Diagnosis\naverage divides by zero")
        finally:
            with self._lock:
                self.running -= 1
                self._current[report.repo] -= 1


@dataclass
class Service:
    """A running app and a client for it."""

    app: Any
    client: httpx.AsyncClient
    stub: StubInvestigator
    settings: Settings

    @property
    def runtime(self) -> Any:
        return self.app.state.runtime

    async def wait_status(self, investigation_id: int, statuses: tuple[str, ...], timeout: float = 10.0) -> dict[str, Any]:
        """Poll the detail endpoint until the status is one of `statuses`."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            detail = (await self.client.get(f"/api/investigations/{investigation_id}")).json()
            if detail["status"] in statuses:
                return detail
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"investigation {investigation_id} stuck in {detail['status']}")
            await asyncio.sleep(0.05)


@asynccontextmanager
async def running_service(
    settings: Settings, stub: StubInvestigator | None = None, *, headers: dict[str, str] | None = None
) -> AsyncIterator[Service]:
    """Start the app (lifespan included) and yield it with an httpx client."""
    stub = stub or StubInvestigator()
    app = create_app(settings, investigate_fn=stub)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers) as client:
            yield Service(app=app, client=client, stub=stub, settings=settings)


@pytest.fixture
def fixture_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A tiny git repository (path, commits)."""
    path = tmp_path / "tiny"
    return path, make_repo(path)


@pytest.fixture
def base_settings(tmp_path: Path) -> Callable[..., Settings]:
    """Settings factory on a private SQLite database, self-registration off."""

    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = dict(data_dir=tmp_path / "data", register_self=False, log_json=True, workers=2)
        values.update(overrides)
        return Settings(**values)

    return make


async def register(service: Service, name: str, location: Path | str) -> None:
    """Register a repository through the API."""
    r = await service.client.post("/api/repos", json={"name": name, "location": str(location)})
    assert r.status_code == 201, r.text

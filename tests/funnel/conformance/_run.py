"""Running a conformance scenario: the scripted server, the provider pointed at it, the real harness, what happened.

`run_scenario` starts the server, points the provider at it through the environment (`OPENAI_BASE_URL` /
`ANTHROPIC_BASE_URL`), runs `investigate` with a model string exactly as a user would, and returns what happened
(result, HTTP requests, seconds).
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from funnel import CancelToken, Limits
from funnel.run.loop import InvestigationResult, investigate
from repomap import build_repo_map
from tests.funnel.conformance._server import ModelServer, Protocol
from tests.funnel.conformance.scenarios import BASE_LIMITS, EXPLORER, STRUCTURER, Scenario
from tests.funnel.harness_support import FIXTURE_REPO, REPORT


@functools.cache
def fixture_map() -> Any:
    """The fixture repository's map, built once per process (every scenario investigates the same tree)."""
    return build_repo_map(FIXTURE_REPO, focus=REPORT.text)


@dataclass
class Outcome:
    """What one scenario run produced."""

    scenario: Scenario
    protocol: Protocol
    result: InvestigationResult
    requests: list[Seen]
    seconds: float
    limits: Limits
    cancel_latency_s: float | None = None
    """Seconds from `CancelToken.cancel()` to `investigate` returning, when the run was cancelled."""

    def of(self, role: str) -> list[Seen]:
        """The HTTP requests of one role (explorer, structurer)."""
        return [r for r in self.requests if r.role == role]


@contextmanager
def pointed_at(server: ModelServer, protocol: Protocol) -> Iterator[None]:
    """The provider environment of a user pointing bugsleuth at `server` (restored afterwards)."""
    env = ({"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "test"} if protocol == "openai"
           else {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test"})  # fmt: skip
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


async def run_scenario(scenario: Scenario, protocol: Protocol, *, cancel_at_request: int | None = None) -> Outcome:
    """Run one scenario end to end over HTTP; with `cancel_at_request=n`, cancel the run once the server has
    received its n-th request (and measure how long the run takes to stop)."""
    limits = BASE_LIMITS.with_(**scenario.limits)
    repo_map = fixture_map()
    cancel = CancelToken()
    with ModelServer(scenario.script()) as server, pointed_at(server, protocol):
        started = time.monotonic()
        run = asyncio.ensure_future(investigate(
            REPORT, FIXTURE_REPO, explorer=EXPLORER[protocol], limits=limits, cancel=cancel, repo_map=repo_map,
            structurer=STRUCTURER[protocol] if scenario.structurer else None))  # fmt: skip
        cancelled_at = None
        while cancel_at_request is not None and not run.done():
            if len(server.requests) >= cancel_at_request:
                await asyncio.sleep(0.1)  # the request is in flight
                cancelled_at = time.monotonic()
                cancel.cancel("cancelled by the test")
                break
            await asyncio.sleep(0.01)
        result = await run
        ended = time.monotonic()
    latency = ended - cancelled_at if cancelled_at is not None else None
    return Outcome(scenario, protocol, result, list(server.requests), ended - started, limits, latency)


def run_scenario_sync(scenario: Scenario, protocol: Protocol, **kw: Any) -> Outcome:
    """`run_scenario` for synchronous callers (the bench script)."""
    return asyncio.run(run_scenario(scenario, protocol, **kw))

"""Progress of an MCP `investigate` call: the run's trace events mapped onto the funnel's phases.

The trace events are the ones the harness hands to its `on_event` callback; the job runner persists them as
they happen, so the same mapping serves a run in this process and a run on any worker of the service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from funnel.phases import ControlTool
from schemas import Phase

TOTAL = 4.0
"""Progress goes from 0 (queued) through explore (1), deep_dive (2) and output (3) to 4 (finished)."""
_BASE = {Phase.explore.value: 1.0, Phase.deep_dive.value: 2.0, Phase.output.value: 3.0}
_STEP = 0.001
"""Smallest increase between two notifications (MCP progress must increase with every notification)."""
_ARGS_CHARS = 120
_MOVES = frozenset({ControlTool.begin_deep_dive.value, ControlTool.finish_deep_dive.value})
"""Control tools whose phase change is reported by its own event."""


@dataclass(frozen=True)
class Step:
    """One progress notification."""

    progress: float
    """Strictly greater than the previous step's."""
    total: float
    """Always `TOTAL`."""
    message: str
    """What happened, prefixed with the phase it happened in."""


def _args(args: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= _ARGS_CHARS else text[: _ARGS_CHARS - 1] + "…"


class PhaseProgress:
    """Turns an investigation's events into steps: strictly increasing, at least one for every phase the run
    enters, and within a phase a step per tool call that approaches (never reaches) the next phase."""

    def __init__(self) -> None:
        self._last = -_STEP
        self._calls = 0
        self._phase: str | None = None

    def queued(self, investigation_id: int) -> Step:
        """The first step: the investigation is stored and waits for a worker."""
        return self._at(0.0, f"investigation {investigation_id} queued")

    def finished(self, status: str, detail: str = "") -> Step:
        """The last step."""
        return self._at(TOTAL, f"{status}{': ' + detail if detail else ''}")

    def step(self, kind: str, data: dict[str, Any]) -> Step | None:
        """The step for one persisted event (a `schemas.trace` event or a service `status`/`note` row), or None
        for events that say nothing new (model requests, phase moves told by their `phase_change`, the final
        status: see `finished`)."""
        phase = str(data.get("phase") or self._phase or Phase.explore.value)
        attempt = int(data.get("attempt") or 1)
        prefix = f"attempt {attempt}, " if attempt > 1 else ""
        if kind == "status":
            if data.get("status") != "running":
                return None
            return self._at(0.5, f"running{' on ' + data['worker'] if data.get('worker') else ''}")
        if kind == "note":
            return self._at(self._last, f"note: {data.get('detail', '')}")
        if kind == "start":
            return self._enter(phase, f"{prefix}{phase}: explorer {data.get('explorer', '?')}")
        if kind == "phase_change":
            to = str(data.get("to_phase"))
            forced = " (forced)" if data.get("forced") else ""
            return self._enter(to, f"{prefix}{to}{forced}: {data.get('reason', '')}".rstrip(": "))
        if kind == "tool_call":
            if data.get("tool") in _MOVES and not data.get("error"):
                return None
            line = f"{prefix}{phase}: {data.get('tool')}({_args(data.get('args') or {})})"
            if data.get("error"):
                line += f" ! {str(data['error']).splitlines()[0][:100]}"
            return self._within(phase, line)
        if kind == "prepass":
            return self._within(phase, f"{prefix}{phase}: pre-pass, {len(data.get('candidates') or [])} candidates")
        if kind == "verify":
            findings = data.get("findings") or []
            verdict = "ok" if data.get("ok") else f"{len(findings)} finding(s): " + "; ".join(findings)[:200]
            return self._within(phase, f"{prefix}{phase}: verify {verdict}")
        if kind == "stop":
            detail = f" — {data['detail']}" if data.get("detail") else ""
            return self._at(TOTAL - 0.1, f"{prefix}stop: {data.get('reason')}{detail}")
        return None

    def _enter(self, phase: str, message: str) -> Step:
        self._phase, self._calls = phase, 0
        return self._at(_BASE.get(phase, self._last), message)

    def _within(self, phase: str, message: str) -> Step:
        if phase != self._phase:
            self._phase, self._calls = phase, 0
        self._calls += 1
        return self._at(_BASE.get(phase, 1.0) + 0.9 * (1 - 0.8**self._calls), message)

    def _at(self, target: float, message: str) -> Step:
        if target >= TOTAL:
            value = TOTAL
        else:
            value = max(target, self._last + _STEP)
            if value >= TOTAL:  # a long tail of events after `stop`: halve the distance, never reach the end
                value = self._last + (TOTAL - self._last) / 2
        self._last = value
        return Step(value, TOTAL, message)

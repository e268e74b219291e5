"""`RunState`: everything the harness knows about a run in progress (the agent's `deps`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from funnel.cancel import CancelToken
from funnel.limits import Limits
from funnel.phases import PHASE_ORDER
from funnel.report.verify import VerifyResult
from funnel.run.budget import phase_budget
from funnel.run.hooks import Hooks, PhaseChange
from funnel.run.meter import Meter
from funnel.run.trace import TraceWriter
from funnel.tools.sandbox import Sandbox
from repomap import SymbolIndex
from schemas.enums import Phase
from schemas.trace import PhaseChangeEvent

__all__ = ("RunState",)


@dataclass(kw_only=True)
class RunState:
    """Everything the funnel knows about a run in progress; the agent's `deps`."""

    limits: Limits
    """Budgets in force."""
    root: Path
    """Repository root."""
    sandbox: Sandbox | None
    """The sandbox the tools read through (set once the explorer context is built)."""
    index: SymbolIndex | None = None
    """`repomap.SymbolIndex` for `find_symbol`, or None."""
    cancel: CancelToken = field(default_factory=CancelToken)
    """Cancellation flag (also passed to tool subprocesses)."""
    hooks: Hooks = field(default_factory=Hooks)
    """Hooks run after tool calls and at phase changes."""
    tracer: TraceWriter = field(default_factory=TraceWriter)
    """Where events go."""
    meter: Meter = field(default_factory=Meter)
    """Token, money and call counters."""
    deadline: float = float("inf")
    """`time.monotonic()` value at which the wall-clock timeout trips."""
    phase: Phase = Phase.explore
    """Current phase."""
    attempt: int = 1
    """Current verification attempt (1-based)."""
    iterations: int = 0
    """Model requests made so far (whole run)."""
    phase_calls: int = 0
    """Budgeted tool calls made in the current phase."""
    tool_calls_total: int = 0
    """Every tool call of the run, refusals and control tools included (the hard cap counts these)."""
    consecutive_tool_errors: int = 0
    """Failed tool calls in a row."""
    last_tool_error: str = ""
    """Text of the last failed tool call."""
    refused_here: int = 0
    """Calls of tools the current phase does not offer, since it began (`Limits.max_refused_calls`)."""
    last_refusal: str = ""
    """Why the last such call was refused."""
    seen: Counter[str] = field(default_factory=Counter)
    """How often each (attempt, read-only tool, arguments) triple was asked for (the no-progress guard)."""
    suspects: list[str] = field(default_factory=list)
    """Suspects named by `begin_deep_dive`, in order."""
    questions: list[str] = field(default_factory=list)
    """Questions for the reporter (`request_info`)."""
    reads: list[tuple[str, int, int]] = field(default_factory=list)
    """Ranges read successfully: (path, first line, last line)."""
    wrap_up: str | None = None
    """Why the harness forced the output phase, shown in the instructions."""
    last_markdown: str = ""
    """The last report the explorer wrote (kept for the partial result when a later attempt stops early)."""
    last_verdict: tuple[str, VerifyResult] | None = None
    """(report, verdict) of the last report verified, so structuring does not check
    the same claims a second time."""

    held: list[Any] | None = None
    """Events caused by a control tool while it runs, emitted after the tool's own `tool_call` event."""

    def emit(self, event_type: type[Any], **fields: Any) -> None:
        """Emit a trace event stamped with the current attempt, iteration and phase (held while a control tool runs)."""
        fields.setdefault("phase", self.phase)
        event = event_type(attempt=self.attempt, iteration=self.iterations, **fields)
        if self.held is not None:
            self.held.append(event)
        else:
            self.tracer.emit(event)

    def refused(self, tool: str) -> str:
        """Count a call of a tool this phase does not offer (`Limits.max_refused_calls`); the reason it is refused."""
        self.refused_here += 1
        self.last_refusal = f"`{tool}` is not available in the {self.phase.value} phase"
        return self.last_refusal

    def budget(self, phase: Phase | None = None) -> int:
        """Budgeted tool calls allowed in a phase (`funnel.run.budget.phase_budget`)."""
        return phase_budget(self.limits, phase or self.phase)

    def move_to(self, phase: Phase, *, forced: bool, reason: str) -> str:
        """Move the funnel forward (never back); returns what the phase hooks say ('' when silent)."""
        if PHASE_ORDER.index(phase) <= PHASE_ORDER.index(self.phase):
            return ""
        return self._enter(phase, forced=forced, reason=reason)

    def start_attempt(self, attempt: int) -> str:
        """Start verification attempt `attempt` (2+): the funnel re-enters the deep-dive, never explore, with a fresh
        deep-dive budget, through the same phase change as any other; returns what the phase hooks say."""
        self.attempt, self.wrap_up = attempt, None
        return self._enter(Phase.deep_dive, forced=False, reason=f"attempt {attempt}")

    def _enter(self, phase: Phase, *, forced: bool, reason: str) -> str:
        old, self.phase, self.phase_calls, self.refused_here = self.phase, phase, 0, 0
        self.emit(PhaseChangeEvent, phase=phase, from_phase=old, to_phase=phase, forced=forced, reason=reason)
        change = PhaseChange(old, phase, forced, tuple(self.suspects), self.budget(phase), reason)
        return self.hooks.run_phase_hooks(change)

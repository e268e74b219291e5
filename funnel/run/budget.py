"""The composite stop policy: typed stop exceptions and the check run at the head of every iteration.

Clauses, first one that trips ends the run (the reason is always recorded as a `StopReason`):

1. done: the model finished its report (the agent loop ended with a complete, non-truncated answer);
2. step_budget: model requests >= `Limits.max_iterations`, or the no-progress guard (same call a third time);
3. cost_budget: tokens >= `Limits.max_tokens`, money >= `Limits.max_cost_usd`, or the wall-clock timeout;
4. error: an unrecoverable tool error, the model endpoint failing after retries (`ModelUnavailable`), too many
   consecutive tool errors;
5. needs_info: the model asked for what only the reporter can give (`request_info`);

plus `cancelled` when the caller's `CancelToken` fires. Every clause is an exception subclass of `StopRun`,
raised anywhere (stop check, tools, model wrapper) and caught in ONE place: `funnel.investigate`.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from schemas.diagnosis import AffectedFile, Diagnosis, RunStats, Termination
from schemas.enums import Role, StopReason

if TYPE_CHECKING:
    from funnel.phases import RunState

__all__ = (
    "Cancelled",
    "CostBudgetExceeded",
    "ModelUnavailable",
    "NeedsInfo",
    "StepBudgetExceeded",
    "StopRun",
    "Unrecoverable",
    "assemble_diagnosis",
    "check_stop",
    "should_wrap_up",
)


_log = logging.getLogger(__name__)


class StopRun(Exception):
    """Ends the run with a reason; `detail` is shown to people."""

    reason: StopReason = StopReason.error

    def __init__(self, detail: str = "") -> None:
        self.detail = detail
        super().__init__(detail)


class StepBudgetExceeded(StopRun):
    """Too many model requests, or no progress (the same call again and again)."""

    reason = StopReason.step_budget


class CostBudgetExceeded(StopRun):
    """Too many tokens, too much money, or too much wall-clock time."""

    reason = StopReason.cost_budget


class Unrecoverable(StopRun):
    """The environment or the model endpoint is broken beyond retrying."""

    reason = StopReason.error


class ModelUnavailable(Unrecoverable):
    """The model endpoint failed (unreachable, refused the request, kept failing, could not be set up).

    Still termination `error`; the harness may rerun with the offline investigator (`Limits.fallback_to_offline`).
    """


class NeedsInfo(StopRun):
    """Only the reporter can supply what is missing; carries the questions to ask."""

    reason = StopReason.needs_info

    def __init__(self, questions: list[str]) -> None:
        self.questions = questions
        super().__init__("the report lacks information only the reporter can give: " + " | ".join(questions))


class Cancelled(StopRun):
    """The caller cancelled the run."""

    reason = StopReason.cancelled


def check_stop(state: RunState) -> None:
    """Raise the first stop clause that trips for the next iteration; return when the run may go on."""
    limits = state.limits
    if state.cancel.cancelled:
        raise Cancelled(state.cancel.reason or "cancelled")
    if state.iterations >= limits.max_iterations:
        raise StepBudgetExceeded(f"{state.iterations} model requests reached the limit of {limits.max_iterations}")
    if state.meter.total_tokens >= limits.max_tokens:
        raise CostBudgetExceeded(f"{state.meter.total_tokens} tokens reached the limit of {limits.max_tokens}")
    cost = state.meter.cost_usd
    if limits.max_cost_usd is not None and cost is not None and cost >= limits.max_cost_usd:
        raise CostBudgetExceeded(f"${cost:.4f} reached the limit of ${limits.max_cost_usd:.2f}")
    if time.monotonic() >= state.deadline:
        raise CostBudgetExceeded(f"timeout: the run took longer than {limits.timeout_s:.0f} s")
    if not state.root.is_dir():
        raise Unrecoverable(f"the repository vanished: {state.root} is no longer a directory")
    if state.consecutive_tool_errors >= limits.max_consecutive_tool_errors:
        raise Unrecoverable(f"{state.consecutive_tool_errors} tool calls in a row failed; last: {state.last_tool_error}")
    if state.questions:
        raise NeedsInfo(state.questions)


def should_wrap_up(state: RunState) -> str | None:
    """Why the model must write its report now (one request left, budget almost spent), or None."""
    limits = state.limits
    if state.iterations >= limits.max_iterations - 1:
        return "one model request left"
    if state.meter.total_tokens >= 0.85 * limits.max_tokens:
        return "token budget almost spent"
    if state.tool_calls_total >= limits.max_tool_calls:
        return f"hard cap of {limits.max_tool_calls} tool calls reached"
    if time.monotonic() >= state.deadline - min(60.0, 0.2 * limits.timeout_s):
        return "time almost up"
    return None


def assemble_diagnosis(
    state: RunState,
    markdown: str,
    findings: list[str],
    stop: StopRun | None,
    *,
    explorer: str,
    structurer: str | None,
    commit: str | None,
    seconds: float,
) -> Diagnosis:
    """The run's diagnosis: the structured report when there is one, else an honest partial result.

    A report is always structured through `funnel.structure` (which validates every claim against the tree);
    a run that stopped before any report gets the suspects it named and the code it read, with no conclusion.
    """
    diagnosis: Diagnosis | None = None
    structurer_used = "parser"
    if markdown.strip():
        diagnosis, structurer_used = _structure(markdown, state, structurer)
    if diagnosis is None:
        diagnosis = _partial(state, stop)
    if stop is None:
        detail = ""
        if findings:
            detail = f"verification failed after {state.attempt} attempt(s): " + "; ".join(findings)
        termination = Termination(reason=StopReason.done, detail=detail)
    else:
        termination = Termination(reason=stop.reason, detail=stop.detail)
    if isinstance(stop, NeedsInfo):
        diagnosis.open_questions = list(dict.fromkeys([*stop.questions, *diagnosis.open_questions]))
    diagnosis.termination = termination
    meter = state.meter
    old = diagnosis.stats
    diagnosis.stats = RunStats(
        per_phase=dict(meter.per_phase),
        tool_calls=meter.tool_calls,
        input_tokens=meter.input_tokens,
        output_tokens=meter.output_tokens,
        cost_usd=meter.cost_usd,
        duration_s=round(seconds, 3),
        attempts=state.attempt,
        explorer=explorer,
        structurer=structurer_used,
        commit=commit,
        claims_total=old.claims_total,
        claims_rejected=old.claims_rejected,
        claims_corrected=old.claims_corrected,
    )
    return diagnosis


def _structure(markdown: str, state: RunState, structurer: str | None) -> tuple[Diagnosis | None, str]:
    from funnel.report.structure import structure

    for model in dict.fromkeys([structurer, None]):
        try:
            diagnosis = structure(markdown, state.root, index=state.index, model=model)
            # structure() may fall back to the parser itself; record what really ran.
            return diagnosis, diagnosis.stats.structurer or model or "parser"
        except Exception:
            _log.warning("structuring with %s failed", model or "the parser", exc_info=True)
    return None, "parser"


def _partial(state: RunState, stop: StopRun | None) -> Diagnosis:
    """What was found before the run stopped: suspects named and code read; no made-up conclusion."""
    why = f"{stop.reason.value}: {stop.detail}" if stop else "no report was written"
    found = []
    if state.suspects:
        found.append("suspects named: " + ", ".join(state.suspects))
    if state.reads:
        found.append("code read: " + ", ".join(f"{p}:{a}-{b}" for p, a, b in state.reads[:10]))
    summary = f"The investigation stopped before a report ({why})."
    if found:
        summary += " Found so far: " + "; ".join(found) + "."
    suspect_paths = {s.split(":", 1)[0] for s in state.suspects}
    affected = []
    for path, start, end in state.reads:
        if path in suspect_paths and not any(a.path == path for a in affected):
            affected.append(AffectedFile(path=path, line_start=max(1, start), line_end=max(1, start, end), role=Role.related))
    return Diagnosis(summary=summary, affected_files=affected, confidence=0.0, open_questions=list(state.questions))

"""Every stop and budget rule of a run, in one place.

The composite stop policy (`check_stop`, at the head of every iteration); the first clause that trips ends the run
(the reason is always recorded as a `StopReason`):

1. done: the model finished its report (the agent loop ended with a complete, non-truncated answer);
2. step_budget: model requests >= `Limits.max_iterations`, or the no-progress guard (same call a third time);
3. cost_budget: tokens >= `Limits.max_tokens`, money >= `Limits.max_cost_usd`, or the wall-clock timeout;
4. error: an unrecoverable tool error, the model endpoint failing after retries (`ModelUnavailable`), too many
   consecutive tool errors;
5. needs_info: the model asked for what only the reporter can give (`request_info`);

plus `cancelled` when the caller's `CancelToken` fires. Every clause is an exception subclass of `StopRun`
(`funnel.errors`), raised anywhere (stop check, tools, model wrapper) and caught in ONE place: `funnel.run.loop`.

The budgets that move the funnel forward rather than stop it live here too: the per-phase call budgets
(`phase_budget`, `enforce_budgets`), the forced wrap-up (`should_wrap_up`), the refusal of a tool call before
it runs (`refuse`: gate, hard cap, phase budget, repeat guard), the wall-clock guard around the attempts
(`guarded`) and PydanticAI's `UsageLimits` backstop (`usage_limits`).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic_ai.usage import UsageLimits

from funnel.errors import (
    Cancelled,
    CostBudgetExceeded,
    NeedsInfo,
    RunFailed,
    StepBudgetExceeded,
)
from funnel.limits import Limits
from funnel.phases import ControlTool, next_phase, tools_for
from schemas.enums import Phase
from schemas.trace import ToolCallEvent

if TYPE_CHECKING:  # RunState holds the counters these rules read; it imports this module for `phase_budget`
    from funnel.run.state import RunState

__all__ = (
    "check_stop",
    "enforce_budgets",
    "guarded",
    "phase_budget",
    "refuse",
    "should_wrap_up",
    "timeout_message",
    "usage_limits",
)

_T = TypeVar("_T")


def timeout_message(limits: Limits) -> str:
    """The termination detail of a run that hit its wall-clock timeout."""
    return f"timeout: the run took longer than {limits.timeout_s:.0f} s"


def phase_budget(limits: Limits, phase: Phase) -> int:
    """Budgeted tool calls allowed in a phase (explore calls, deep-dive reads, none in output)."""
    if phase == Phase.explore:
        return limits.explore_calls
    if phase == Phase.deep_dive:
        return limits.deep_dive_reads
    return 0


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
        raise CostBudgetExceeded(timeout_message(limits))
    if not state.root.is_dir():
        raise RunFailed(f"the repository vanished: {state.root} is no longer a directory")
    if state.consecutive_tool_errors >= limits.max_consecutive_tool_errors:
        raise RunFailed(f"{state.consecutive_tool_errors} tool calls in a row failed; last: {state.last_tool_error}")
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


def enforce_budgets(state: RunState) -> None:
    """Force the funnel forward when the current phase's budget, or the run's, is spent."""
    if state.phase == Phase.explore and state.phase_calls >= state.limits.explore_calls:
        state.wrap_up = state.move_to(Phase.deep_dive, forced=True, reason="explore budget spent") or None
    if state.phase == Phase.deep_dive and state.phase_calls >= state.limits.deep_dive_reads:
        state.wrap_up = state.move_to(Phase.output, forced=True, reason="deep-dive budget spent") or None
    if state.phase != Phase.output and state.refused_here >= state.limits.max_refused_calls:
        why = f"the model kept calling tools the {state.phase.value} phase does not offer ({state.last_refusal})"
        state.wrap_up = state.move_to(next_phase(state.phase), forced=True, reason=why) or None
    if state.phase != Phase.output and (why := should_wrap_up(state)):
        state.wrap_up = state.move_to(Phase.output, forced=True, reason=why) or None


def _key(tool: str, args: dict[str, Any]) -> str:
    return tool + json.dumps(args, sort_keys=True, default=str)


def refuse(state: RunState, tool: str, args: dict[str, Any]) -> str | None:
    """Why a tool call is refused before it runs, or None when it may run.

    Raises `StepBudgetExceeded` when the same call comes once more than `Limits.max_repeats` (no progress).
    """
    if tool not in tools_for(state.phase):
        offered = ", ".join(tools_for(state.phase)) or "none: write the report"
        return f"{state.refused(tool)}. Tools now: {offered}."
    if state.tool_calls_total > state.limits.max_tool_calls:
        return "The tool budget of this run is spent. Write the report now from what you have read."
    budgeted = tool not in set(ControlTool)
    if budgeted and state.phase_calls >= state.budget():
        return f"The {state.phase.value} budget ({state.budget()} calls) is spent; the harness moves you on next turn."
    if not budgeted:
        return None  # control tools read nothing: calling one again is not repeated work
    key = f"{state.attempt}:{_key(tool, args)}"  # a new attempt re-reads on purpose: it starts counting afresh
    state.seen[key] += 1
    repeats = state.seen[key]
    if repeats > state.limits.max_repeats:
        detail = f"no progress: `{tool}` called {repeats} times with the same arguments {args}"
        state.emit(ToolCallEvent, tool=tool, args=args, error=detail)
        raise StepBudgetExceeded(detail)
    if repeats == state.limits.max_repeats:
        return (
            f"You already called `{tool}` with exactly these arguments; its result is above in this conversation. "
            "Do something different (another pattern, path or range), or move on. Repeating it again ends the run."
        )
    return None


def usage_limits(limits: Limits) -> UsageLimits:
    """PydanticAI's own limits, a backstop behind `check_stop` (twice the token budget, one request more)."""
    return UsageLimits(request_limit=limits.max_iterations + 1, total_tokens_limit=limits.max_tokens * 2)


async def guarded(state: RunState, work: Awaitable[_T]) -> _T:
    """Await the attempts; stop within a second on cancellation or the wall-clock timeout."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.05)
            if done:
                return task.result()
            timed_out = time.monotonic() >= state.deadline
            if timed_out or state.cancel.cancelled:
                if timed_out:
                    state.cancel.cancel("timeout")  # kills tool subprocesses too
                task.cancel()
                await asyncio.wait({task}, timeout=0.5)
                if timed_out:
                    raise CostBudgetExceeded(timeout_message(state.limits))
                raise Cancelled(state.cancel.reason or "cancelled")
    finally:
        if not task.done():
            task.cancel()

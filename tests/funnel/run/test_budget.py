"""Every rule of `funnel.run.budget`, one test each, on a `RunState` built by hand (no model, no tools)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from funnel import (
    Cancelled,
    CostBudgetExceeded,
    Limits,
    NeedsInfo,
    RunFailed,
    StepBudgetExceeded,
)
from funnel.phases import ControlTool
from funnel.run.budget import (
    check_stop,
    enforce_budgets,
    guarded,
    phase_budget,
    refuse,
    should_wrap_up,
    timeout_message,
    usage_limits,
)
from funnel.run.meter import RequestUsage
from funnel.run.state import RunState
from schemas.enums import Phase, ToolName
from schemas.trace import ToolCallEvent


def _state(tmp_path: Path, **limits: object) -> RunState:
    return RunState(limits=Limits(**limits), root=tmp_path, sandbox=None, deadline=time.monotonic() + 3600)


def _spend(state: RunState, tokens: int, cost: float | None = None) -> None:
    state.meter.add_request(Phase.explore, RequestUsage(input_tokens=tokens, output_tokens=0, cost_usd=cost))


def test_a_fresh_run_may_go_on(tmp_path):
    state = _state(tmp_path)
    assert check_stop(state) is None and should_wrap_up(state) is None and refuse(state, ToolName.search, {}) is None


def test_cancellation_stops_with_the_callers_reason(tmp_path):
    state = _state(tmp_path)
    state.cancel.cancel("user pressed stop")
    with pytest.raises(Cancelled, match="user pressed stop"):
        check_stop(state)


def test_the_request_budget_stops_with_step_budget(tmp_path):
    state = _state(tmp_path, max_iterations=3)
    state.iterations = 3
    with pytest.raises(StepBudgetExceeded, match="3 model requests"):
        check_stop(state)


def test_the_token_budget_stops_with_cost_budget(tmp_path):
    state = _state(tmp_path, max_tokens=100)
    _spend(state, 100)
    with pytest.raises(CostBudgetExceeded, match="100 tokens"):
        check_stop(state)


def test_the_money_budget_stops_with_cost_budget_only_when_prices_are_known(tmp_path):
    state = _state(tmp_path, max_cost_usd=0.5)
    _spend(state, 10)
    assert check_stop(state) is None  # no price known: no money cap
    _spend(state, 10, cost=0.5)
    with pytest.raises(CostBudgetExceeded, match=r"\$0.5000"):
        check_stop(state)


def test_the_wall_clock_stops_with_the_one_timeout_message(tmp_path):
    state = _state(tmp_path, timeout_s=30)
    state.deadline = time.monotonic() - 1
    with pytest.raises(CostBudgetExceeded) as stop:
        check_stop(state)
    assert stop.value.detail == timeout_message(state.limits) == "timeout: the run took longer than 30 s"


def test_a_vanished_repository_stops_with_error(tmp_path):
    state = _state(tmp_path / "gone")
    with pytest.raises(RunFailed, match="vanished"):
        check_stop(state)


def test_too_many_failed_tool_calls_in_a_row_stop_with_error(tmp_path):
    state = _state(tmp_path, max_consecutive_tool_errors=2)
    state.consecutive_tool_errors, state.last_tool_error = 2, "Not found: 'x.py'"
    with pytest.raises(RunFailed, match="Not found"):
        check_stop(state)


def test_questions_for_the_reporter_stop_with_needs_info(tmp_path):
    state = _state(tmp_path)
    state.questions = ["Which version?"]
    with pytest.raises(NeedsInfo) as stop:
        check_stop(state)
    assert stop.value.questions == ["Which version?"]


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        (lambda s: setattr(s, "iterations", s.limits.max_iterations - 1), "one model request left"),
        (lambda s: _spend(s, int(0.85 * s.limits.max_tokens)), "token budget almost spent"),
        (lambda s: setattr(s, "tool_calls_total", s.limits.max_tool_calls), "hard cap of 24 tool calls reached"),
        (lambda s: setattr(s, "deadline", time.monotonic() + 30), "time almost up"),
    ],
)
def test_the_report_is_forced_before_a_budget_runs_out(tmp_path, setup, why):
    state = _state(tmp_path)
    setup(state)
    assert should_wrap_up(state) == why


def test_phase_budgets_are_explore_calls_then_deep_dive_reads_then_none():
    limits = Limits(explore_calls=6, deep_dive_reads=2)
    assert [phase_budget(limits, p) for p in (Phase.explore, Phase.deep_dive, Phase.output)] == [6, 2, 0]


def test_a_spent_explore_budget_forces_the_deep_dive(tmp_path):
    state = _state(tmp_path, explore_calls=2)
    state.phase_calls = 2
    enforce_budgets(state)
    assert state.phase == Phase.deep_dive and state.phase_calls == 0


def test_a_spent_deep_dive_budget_forces_the_output_phase(tmp_path):
    state = _state(tmp_path, deep_dive_reads=1)
    state.phase, state.phase_calls = Phase.deep_dive, 1
    enforce_budgets(state)
    assert state.phase == Phase.output


def test_a_run_budget_almost_spent_forces_the_output_phase_from_explore(tmp_path):
    state = _state(tmp_path)
    state.iterations = state.limits.max_iterations - 1
    enforce_budgets(state)
    assert state.phase == Phase.output


def test_a_tool_the_phase_does_not_offer_is_refused(tmp_path):
    state = _state(tmp_path)
    state.phase = Phase.deep_dive
    assert "not available in the deep_dive phase" in refuse(state, ToolName.search, {})


def test_past_the_hard_cap_every_tool_call_is_refused(tmp_path):
    state = _state(tmp_path, max_tool_calls=4)
    state.tool_calls_total = 5
    assert "tool budget of this run is spent" in refuse(state, ControlTool.request_info, {})


def test_a_spent_phase_budget_refuses_budgeted_tools_but_not_control_tools(tmp_path):
    state = _state(tmp_path, explore_calls=1)
    state.phase_calls = 1
    assert "explore budget (1 calls) is spent" in refuse(state, ToolName.search, {"pattern": "x"})
    assert refuse(state, ControlTool.begin_deep_dive, {"suspects": ["a.py"]}) is None


def test_the_same_call_is_refused_once_then_stops_the_run(tmp_path):
    state = _state(tmp_path, max_repeats=2)
    args = {"pattern": "x"}
    assert refuse(state, ToolName.search, args) is None
    assert "already called" in refuse(state, ToolName.search, args)
    with pytest.raises(StepBudgetExceeded, match="no progress"):
        refuse(state, ToolName.search, args)
    assert [e.error for e in state.tracer.events if isinstance(e, ToolCallEvent)][-1].startswith("no progress")


def test_the_usage_limits_backstop_sits_behind_the_stop_policy():
    limits = Limits(max_iterations=10, max_tokens=1000)
    backstop = usage_limits(limits)
    assert (backstop.request_limit, backstop.total_tokens_limit) == (11, 2000)


async def test_guarded_returns_the_result_of_work_done_in_time(tmp_path):
    async def work() -> str:
        return "report"

    assert await guarded(_state(tmp_path), work()) == "report"


async def test_guarded_stops_on_the_timeout_and_cancels_the_token(tmp_path):
    state = _state(tmp_path, timeout_s=5)
    state.deadline = time.monotonic() + 0.1
    started = time.monotonic()
    with pytest.raises(CostBudgetExceeded, match="timeout: the run took longer than 5 s"):
        await guarded(state, asyncio.sleep(30))
    assert time.monotonic() - started < 5 and state.cancel.reason == "timeout"


async def test_guarded_stops_on_cancellation(tmp_path):
    state = _state(tmp_path)
    asyncio.get_running_loop().call_later(0.1, state.cancel.cancel, "stop now")
    with pytest.raises(Cancelled, match="stop now"):
        await guarded(state, asyncio.sleep(30))

"""One test per stop clause, plus the no-progress guard, the timeout, the tool-error cap and cancellation."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from decimal import Decimal

from pydantic_ai.messages import ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from funnel import tools
from funnel.cancel import CancelToken
from funnel.errors import UnrecoverableError
from funnel.run.loop import investigate
from funnel.limits import Limits
from schemas.enums import Phase, StopReason
from schemas.trace import StopEvent, ToolCallEvent
from tests.funnel.harness_support import (
    FIXTURE_REPO,
    GOOD_REPORT,
    HAPPY_STEPS,
    REPORT,
    Script,
    ScriptExplorer,
    call,
    copy_repo,
    returns,
    text,
)


def _searches(n: int) -> list:
    return [call("search", pattern=f"word{i}") for i in range(n)]


async def _run(steps, limits=None, **kw):
    script = Script(steps)
    result = await investigate(REPORT, kw.pop("root", FIXTURE_REPO), explorer=ScriptExplorer(script),
                               limits=limits or Limits(), **kw)  # fmt: skip
    return script, result


async def test_done_when_the_model_finishes_its_report():
    _, result = await _run(HAPPY_STEPS)
    assert result.diagnosis.termination.reason == StopReason.done
    stop = result.events[-1]
    assert isinstance(stop, StopEvent) and stop.reason == StopReason.done


async def test_a_reply_cut_off_by_the_token_limit_is_not_done():
    script, result = await _run([call("finish_deep_dive"), text(GOOD_REPORT[:80], finish_reason="length"), text(GOOD_REPORT)])
    assert result.diagnosis.termination.reason == StopReason.done
    assert any("cut off" in str(getattr(p, "content", "")) for p in script.seen[2][-1].parts)
    assert result.report_markdown == GOOD_REPORT


async def test_a_reply_always_cut_off_ends_with_error_never_done():
    _, result = await _run([call("finish_deep_dive"), text(GOOD_REPORT[:80], finish_reason="length")])
    term = result.diagnosis.termination
    assert term.reason == StopReason.error and "usable report" in term.detail
    assert result.diagnosis.root_cause is None  # nothing made up


async def test_step_budget_stops_a_model_that_never_finishes():
    from pydantic_ai.messages import ToolCallPart

    def stubborn(messages, info: AgentInfo) -> ModelResponse:
        n = sum(isinstance(m, ModelResponse) for m in messages)
        return ModelResponse(parts=[ToolCallPart("search", {"pattern": f"w{n}"})])

    _, result = await _run([stubborn], Limits(max_iterations=4, explore_calls=50))
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.step_budget
    assert "4 model requests" in dx.termination.detail
    assert dx.summary.startswith("The investigation stopped before a report") and dx.confidence == 0.0


async def test_the_last_request_is_forced_into_the_output_phase():
    script, result = await _run([*_searches(3), text(GOOD_REPORT)], Limits(max_iterations=4))
    assert script.offered[3] == []
    assert "one model request left" in script.instructions[3]
    assert result.diagnosis.termination.reason == StopReason.done


async def test_cost_budget_stops_on_tokens():
    _, result = await _run(_searches(8), Limits(max_tokens=1500))
    term = result.diagnosis.termination
    assert term.reason == StopReason.cost_budget and "tokens" in term.detail


async def test_cost_budget_stops_on_money():
    priced = [ModelResponse(parts=r.parts, usage=RequestUsage(input_tokens=10, output_tokens=5, cost=Decimal("0.4")))
              for r in _searches(8)]  # fmt: skip
    _, result = await _run(priced, Limits(max_cost_usd=1.0))
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.cost_budget and "$" in dx.termination.detail
    assert dx.stats.cost_usd is not None and 1.0 <= dx.stats.cost_usd < 1.3


async def test_wall_clock_timeout_stops_a_slow_model():
    async def slow(messages, info):
        await asyncio.sleep(30)

    started = time.monotonic()
    result = await investigate(REPORT, FIXTURE_REPO, explorer=_Explorer(slow), limits=Limits(timeout_s=0.5))
    assert time.monotonic() - started < 2.0
    assert result.diagnosis.termination.reason == StopReason.cost_budget
    assert "timeout" in result.diagnosis.termination.detail


class _Explorer:
    name = "fn"

    def __init__(self, fn):
        self.fn = fn

    def build_model(self, ctx):
        return FunctionModel(self.fn, model_name="fn")


async def test_unrecoverable_tool_error_stops_with_error(monkeypatch):
    def broken(*a, **k):
        raise UnrecoverableError("ripgrep is missing")

    monkeypatch.setattr(tools, "search", broken)
    _, result = await _run(HAPPY_STEPS)
    term = result.diagnosis.termination
    assert term.reason == StopReason.error and "ripgrep is missing" in term.detail


async def test_a_vanished_repository_stops_with_error(tmp_path):
    repo = copy_repo(tmp_path)

    def vanish(messages, info):
        shutil.rmtree(repo)
        return call("search", pattern="apply_discount")

    _, result = await _run([vanish, text(GOOD_REPORT)], root=repo)
    term = result.diagnosis.termination
    assert term.reason == StopReason.error and "vanished" in term.detail


async def test_too_many_consecutive_tool_errors_stop_with_error():
    steps = [call("read_range", path=f"missing{i}.py") for i in range(10)]
    _, result = await _run(steps, Limits(max_consecutive_tool_errors=3))
    term = result.diagnosis.termination
    assert term.reason == StopReason.error and "3 tool calls in a row failed" in term.detail


async def test_needs_info_stops_with_the_questions():
    q = ["Which version of shop do you run?", "What does Cart.checkout return for 1000 with 10%?"]
    _, result = await _run([call("search", pattern="checkout"), call("request_info", questions=q), text(GOOD_REPORT)])
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.needs_info
    assert dx.open_questions[:2] == q
    assert "Which version" in dx.termination.detail


async def test_the_same_call_is_refused_the_second_time_and_stops_the_third():
    same = call("search", pattern="apply_discount")
    script, result = await _run([same, same, same, text(GOOD_REPORT)])
    second = str(returns(script.seen[2])[-1].content)
    assert "already called `search` with exactly these arguments" in second
    term = result.diagnosis.termination
    assert term.reason == StopReason.step_budget and term.detail.startswith("no progress")
    assert sum(1 for e in result.events if isinstance(e, ToolCallEvent) and not e.error) == 1


async def test_cancel_stops_within_a_second_and_keeps_the_partial_trace(tmp_path):
    token = CancelToken()

    async def slow(messages, info):
        if sum(isinstance(m, ModelResponse) for m in messages) == 0:
            return call("search", pattern="apply_discount")
        await asyncio.sleep(30)

    threading.Timer(0.3, token.cancel).start()
    started = time.monotonic()
    trace = tmp_path / "c.jsonl"
    result = await investigate(REPORT, FIXTURE_REPO, explorer=_Explorer(slow), cancel=token, trace_path=trace)
    elapsed = time.monotonic() - started - 0.3
    assert elapsed < 1.0
    assert result.diagnosis.termination.reason == StopReason.cancelled
    lines = trace.read_text().splitlines()
    assert '"tool_call"' in lines[2] and '"stop"' in lines[-1]
    assert "code read" not in result.diagnosis.summary and "stopped before a report" in result.diagnosis.summary


async def test_cancel_kills_the_command_subprocess_within_a_second(tmp_path):
    from tests.funnel.run.test_harness import _assert_dead

    pid_file = tmp_path / "pid"
    token = CancelToken()
    threading.Timer(0.3, token.cancel).start()
    started = time.monotonic()
    result = await investigate(REPORT, FIXTURE_REPO, explorer=f"command:echo $$ > {pid_file}; exec sleep 30", cancel=token)
    assert time.monotonic() - started - 0.3 < 1.0
    assert result.diagnosis.termination.reason == StopReason.cancelled
    _assert_dead(int(pid_file.read_text()))


async def test_an_internal_bug_still_returns_an_honest_result(monkeypatch):
    from funnel import phases

    monkeypatch.setattr(phases.RunState, "enforce_budgets", lambda self: 1 / 0)
    _, result = await _run(HAPPY_STEPS)
    term = result.diagnosis.termination
    assert term.reason == StopReason.error and "internal error: ZeroDivisionError" in term.detail


async def test_a_partial_result_names_suspects_and_code_read():
    steps = [call("begin_deep_dive", suspects=["shop/pricing.py"]), call("read_range", path="shop/pricing.py", start=4, end=8),
             call("read_range", path="shop/pricing.py", start=4, end=8), call("read_range", path="shop/pricing.py", start=4, end=8)]  # fmt: skip
    _, result = await _run(steps)
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.step_budget
    assert "suspects named: shop/pricing.py" in dx.summary and "shop/pricing.py:4-8" in dx.summary
    assert dx.affected_files[0].path == "shop/pricing.py" and dx.affected_files[0].role == "related"
    assert dx.root_cause is None
    assert dx.stats.per_phase[Phase.deep_dive].tool_calls == 1


async def test_cancel_reaches_a_running_tool_through_its_cancel_event(monkeypatch):
    token = CancelToken()
    seen = {}

    def slow_search(sb, pattern, *, cancel=None, **kw):
        seen["event"], seen["asked"] = cancel, time.monotonic()
        token.cancel("stop now")
        seen["stopped"] = cancel.wait(10)  # a real search kills rg when this event is set
        return tools.SearchResult(pattern=pattern, matches=[])

    monkeypatch.setattr(tools, "search", slow_search)
    result = await investigate(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(Script(HAPPY_STEPS)), cancel=token)
    assert time.monotonic() - seen["asked"] < 1.0
    assert result.diagnosis.termination.reason == StopReason.cancelled
    assert result.diagnosis.termination.detail == "stop now"
    assert seen["event"] is token.event and seen["stopped"] is True

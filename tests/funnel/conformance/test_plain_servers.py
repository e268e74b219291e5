"""Behaviour 11 over real HTTP: tool calls in the shapes a plain OpenAI-compatible server passes through from a
mediocre model (prefixed or cased names, extra or encoded arguments, calls written into the text as JSON or as
Python), the same way at every turn."""

from __future__ import annotations

import pytest

from schemas.trace import ToolCallEvent
from tests.funnel.conformance._checks import run_checked
from tests.funnel.conformance._run import Outcome
from tests.funnel.conformance.scenarios import cases


def _every_call_runs_as_the_tool_it_means(out: Outcome) -> None:
    calls = [(e.tool, e.error) for e in out.result.events if isinstance(e, ToolCallEvent)]
    assert calls == [("search", None), ("begin_deep_dive", None), ("read_range", None), ("finish_deep_dive", None)]
    assert out.result.diagnosis.stats.claims_rejected == 0


def _two_calls_under_one_id_both_run(out: Outcome) -> None:
    calls = [(e.tool, e.error) for e in out.result.events if isinstance(e, ToolCallEvent)]
    assert calls[:2] == [("search", None), ("list_dir", None)] and all(error is None for _, error in calls)


def _calls_run_and_the_thought_is_not_the_report(out: Outcome) -> None:
    _every_call_runs_as_the_tool_it_means(out)
    assert [f.path for f in out.result.diagnosis.affected_files] == ["shop/pricing.py"]


CHECKS = {"same_call_ids": _two_calls_under_one_id_both_run, "harmony_calls": _calls_run_and_the_thought_is_not_the_report}


@pytest.mark.parametrize(("scenario", "protocol"), cases(11), ids=lambda v: getattr(v, "name", v))
async def test_tool_calls_a_plain_server_passes_through_run_as_the_tools_they_mean(scenario, protocol):
    await run_checked(scenario, protocol, {scenario.name: CHECKS.get(scenario.name, _every_call_runs_as_the_tool_it_means)})

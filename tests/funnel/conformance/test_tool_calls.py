"""Behaviours 3-4 over real HTTP: tools not offered, unknown, malformed or mistyped; parallel tool calls."""

from __future__ import annotations

import pytest

from schemas.trace import PhaseChangeEvent, ToolCallEvent
from tests.funnel.conformance._checks import run_checked
from tests.funnel.conformance._run import Outcome
from tests.funnel.conformance.scenarios import cases


def _tools(out: Outcome) -> list[tuple[str, str, bool]]:
    """(tool, phase, refused) of every tool call, in trace order."""
    return [(e.tool, e.phase.value, bool(e.error)) for e in out.result.events if isinstance(e, ToolCallEvent)]


def _search_refused_in_deep_dive(out: Outcome) -> None:
    assert ("search", "deep_dive", True) in _tools(out)


def _read_runs_in_the_deep_dive_it_opened(out: Outcome) -> None:
    steps = [e for e in out.result.events if isinstance(e, (ToolCallEvent, PhaseChangeEvent))]
    kinds = [(e.kind, getattr(e, "tool", None)) for e in steps]
    i = kinds.index(("tool_call", "begin_deep_dive"))
    assert kinds[i + 1] == ("phase_change", None) and kinds[i + 2] == ("tool_call", "read_range")
    assert ("read_range", "deep_dive", False) in _tools(out)


def _search_after_begin_is_refused(out: Outcome) -> None:
    assert ("search", "deep_dive", True) in _tools(out)


def _read_after_finish_is_refused(out: Outcome) -> None:
    assert _tools(out)[-2:] == [("finish_deep_dive", "deep_dive", False), ("read_range", "output", True)]


def _bad_arguments_are_traced_as_refused(out: Outcome) -> None:
    refused = [e for e in out.result.events if isinstance(e, ToolCallEvent) and e.tool == "read_range" and e.error]
    assert refused and refused[0].error.startswith("invalid arguments: ") and refused[0].phase.value == "explore"


def _a_mistyped_argument_is_named_in_the_refusal(out: Outcome) -> None:
    _bad_arguments_are_traced_as_refused(out)
    refused = [e for e in out.result.events if isinstance(e, ToolCallEvent) and e.tool == "read_range" and e.error]
    assert refused[0].error.startswith("invalid arguments: start: ")


def _gives_up_with_a_reason(out: Outcome) -> None:
    assert "read_range" in out.result.diagnosis.termination.detail


def _moved_on_after_two_refusals(out: Outcome) -> None:
    forced = [e for e in out.result.events if isinstance(e, PhaseChangeEvent) and e.forced]
    assert forced and "does not offer" in forced[0].reason
    assert out.result.diagnosis.stats.claims_rejected == 0


def _says_which_tool_it_kept_calling(out: Outcome) -> None:
    detail = out.result.diagnosis.termination.detail
    assert "kept calling `read_range` (`read_range` is not available in the output phase)" in detail


def _the_offline_investigator_writes_the_report(out: Outcome) -> None:
    assert out.result.diagnosis.termination.detail.startswith("offline fallback: the model explorer")
    assert out.result.diagnosis.affected_files and out.result.diagnosis.stats.explorer.startswith("offline")


EXTRA = {
    "hidden_tool": _search_refused_in_deep_dive,
    "control_with_read": _read_runs_in_the_deep_dive_it_opened,
    "search_after_begin": _search_after_begin_is_refused,
    "read_after_finish": _read_after_finish_is_refused,
    "malformed_json": _bad_arguments_are_traced_as_refused,
    "wrong_types": _a_mistyped_argument_is_named_in_the_refusal,
    "malformed_forever": _gives_up_with_a_reason,
    "hidden_tool_forever": _moved_on_after_two_refusals,
    "control_tool_forever": _moved_on_after_two_refusals,
    "tools_in_output_forever": _says_which_tool_it_kept_calling,
    "tools_in_output_fallback": _the_offline_investigator_writes_the_report,
}


@pytest.mark.parametrize(("scenario", "protocol"), cases(3, 4), ids=lambda v: getattr(v, "name", v))
async def test_bad_or_parallel_tool_calls_are_refused_or_run_in_order(scenario, protocol):
    await run_checked(scenario, protocol, EXTRA)

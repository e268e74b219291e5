"""The tool funnel's contract: which tools each phase offers, and the control tools that move it forward.

explore (search, read_range, list_dir, find_symbol + begin_deep_dive, request_info)
  -> deep_dive (read_range + finish_deep_dive, request_info)
  -> output (no tools: the model writes the markdown report).
Phases never go back; the harness forces the next phase when a phase's budget is spent (`funnel.run.budget`).
Explorers read their phase from the tools offered (`phase_of_tools`); the harness's side is in `funnel.run`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from schemas.enums import Phase, ToolName

__all__ = ("ControlTool", "PHASE_ORDER", "next_phase", "phase_of_tools", "tools_for")


class ControlTool(StrEnum):
    """Funnel control tools: they move the funnel or stop the run, and read nothing."""

    begin_deep_dive = "begin_deep_dive"
    """`begin_deep_dive(suspects: list[str])`: name suspect files/symbols and enter the deep-dive."""
    finish_deep_dive = "finish_deep_dive"
    """`finish_deep_dive()`: leave the deep-dive and write the report."""
    request_info = "request_info"
    """`request_info(questions: list[str])`: stop; only the reporter can answer these questions."""


PHASE_ORDER: tuple[Phase, ...] = (Phase.explore, Phase.deep_dive, Phase.output)
"""Phases in the only order they can be visited."""

_TOOLS: dict[Phase, tuple[str, ...]] = {
    Phase.explore: (
        ToolName.search,
        ToolName.read_range,
        ToolName.list_dir,
        ToolName.find_symbol,
        ControlTool.begin_deep_dive,
        ControlTool.request_info,
    ),
    Phase.deep_dive: (ToolName.read_range, ControlTool.finish_deep_dive, ControlTool.request_info),
    Phase.output: (),
}


def tools_for(phase: Phase) -> tuple[str, ...]:
    """Names of the tools offered to the model in a phase."""
    return _TOOLS[phase]


def next_phase(phase: Phase) -> Phase:
    """The phase after this one (output stays output)."""
    i = PHASE_ORDER.index(phase)
    return PHASE_ORDER[min(i + 1, len(PHASE_ORDER) - 1)]


def phase_of_tools(names: Iterable[str]) -> Phase:
    """The phase a model is in, judged from the tool names it is offered (what a FunctionModel sees).

    Use with `AgentInfo.function_tools`: `phase_of_tools(t.name for t in info.function_tools)`.
    """
    offered = set(names)
    if ControlTool.begin_deep_dive in offered or ToolName.search in offered:
        return Phase.explore
    if ToolName.read_range in offered or ControlTool.finish_deep_dive in offered:
        return Phase.deep_dive
    return Phase.output

"""The tool funnel: which tools each phase offers, and the control tools that move it forward.

explore (search, read_range, list_dir, find_symbol + begin_deep_dive, request_info)
  -> deep_dive (read_range + finish_deep_dive, request_info)
  -> output (no tools: the model writes the markdown report).
Phases never go back; the harness forces the next phase when a phase's budget is spent.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.tools import ToolDefinition

from funnel.cancel import CancelToken
from funnel.errors import ToolError, UnrecoverableError
from funnel.run.hooks import Hooks, PhaseChange, ToolCall
from funnel.limits import Limits
from funnel.run.meter import Meter
from funnel.run.budget import StepBudgetExceeded, Unrecoverable
from funnel.run.trace import TraceWriter
from schemas.enums import Phase, ToolName
from schemas.trace import PhaseChangeEvent, ToolCallEvent

__all__ = (
    "ControlTool",
    "PHASE_ORDER",
    "RunState",
    "funnel_tools",
    "next_phase",
    "offered_tools",
    "phase_of_tools",
    "tools_for",
)


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


@dataclass(kw_only=True)
class RunState:
    """Everything the funnel knows about a run in progress; the agent's `deps`."""

    limits: Limits
    """Budgets in force."""
    root: Path
    """Repository root."""
    sandbox: Any
    """`funnel.sandbox.Sandbox` the tools read through."""
    index: Any = None
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
    seen: Counter[str] = field(default_factory=Counter)
    """How often each (tool, arguments) pair was asked for."""
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

    def emit(self, event_type: type[Any], **fields: Any) -> None:
        """Emit a trace event stamped with the current attempt, iteration and phase."""
        fields.setdefault("phase", self.phase)
        self.tracer.emit(event_type(attempt=self.attempt, iteration=self.iterations, **fields))

    def budget(self, phase: Phase | None = None) -> int:
        """Budgeted tool calls allowed in a phase."""
        phase = phase or self.phase
        if phase == Phase.explore:
            return self.limits.explore_calls
        if phase == Phase.deep_dive:
            return self.limits.deep_dive_reads
        return 0

    def move_to(self, phase: Phase, *, forced: bool, reason: str) -> str:
        """Move the funnel forward (never back); returns what the phase hooks say ('' when silent)."""
        if PHASE_ORDER.index(phase) <= PHASE_ORDER.index(self.phase):
            return ""
        old, self.phase, self.phase_calls = self.phase, phase, 0
        self.emit(PhaseChangeEvent, phase=phase, from_phase=old, to_phase=phase, forced=forced, reason=reason)
        change = PhaseChange(old, phase, forced, tuple(self.suspects), self.budget(phase), reason)
        return self.hooks.run_phase_hooks(change)

    def enforce_budgets(self) -> None:
        """Force the funnel forward when the current phase's budget, or the run's, is spent."""
        from funnel.run.budget import should_wrap_up

        if self.phase == Phase.explore and self.phase_calls >= self.limits.explore_calls:
            self.wrap_up = self.move_to(Phase.deep_dive, forced=True, reason="explore budget spent") or None
        if self.phase == Phase.deep_dive and self.phase_calls >= self.limits.deep_dive_reads:
            self.wrap_up = self.move_to(Phase.output, forced=True, reason="deep-dive budget spent") or None
        if self.phase != Phase.output and (why := should_wrap_up(self)):
            self.wrap_up = self.move_to(Phase.output, forced=True, reason=why) or None


def offered_tools(state: RunState, tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
    """The tools offered in the current phase (the funnel gate, used by `PrepareTools`)."""
    allowed = set(tools_for(state.phase))
    return [td for td in tool_defs if td.name in allowed]


def _key(tool: str, args: dict[str, Any]) -> str:
    return tool + json.dumps(args, sort_keys=True, default=str)


def _refuse(state: RunState, tool: str, args: dict[str, Any]) -> str | None:
    """Why a tool call is refused before it runs, or None when it may run."""
    if tool not in tools_for(state.phase):
        offered = ", ".join(tools_for(state.phase)) or "none: write the report"
        return f"`{tool}` is not available in the {state.phase.value} phase. Tools now: {offered}."
    if state.tool_calls_total > state.limits.max_tool_calls:
        return "The tool budget of this run is spent. Write the report now from what you have read."
    budgeted = tool not in set(ControlTool)
    if budgeted and state.phase_calls >= state.budget():
        return f"The {state.phase.value} budget ({state.budget()} calls) is spent; the harness moves you on next turn."
    key = _key(tool, args)
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


async def _run_tool(state: RunState, tool: str, args: dict[str, Any], call: Callable[[], Any]) -> str:
    """Run one tool call through the funnel: gate, budget, repeat guard, errors, hooks, meter and trace.

    Bookkeeping and events stay on the event loop (so `on_event` is always called there); only the read-only
    tool itself runs on a worker thread.
    """
    started = time.perf_counter()
    phase = state.phase
    state.tool_calls_total += 1
    result: Any = None
    error: str | None = None
    text = _refuse(state, tool, args)
    if text is not None:
        error = text
    else:
        if tool not in set(ControlTool):
            state.phase_calls += 1
            state.meter.add_tool_call(state.phase)
        try:
            result = call() if tool in set(ControlTool) else await asyncio.to_thread(call)
            text = result if isinstance(result, str) else result.render()
            state.consecutive_tool_errors = 0
        except ToolError as e:  # the model's mistake: it sees the instructive text; only these count as failures
            text = error = str(e)
            state.consecutive_tool_errors += 1
            state.last_tool_error = error
        except UnrecoverableError as e:
            state.emit(ToolCallEvent, phase=phase, tool=tool, args=args, error=str(e))
            raise Unrecoverable(f"{tool}: {e}") from e
    notes = state.hooks.run_tool_hooks(
        ToolCall(tool, args, text, result, error, phase, max(state.budget(phase) - state.phase_calls, 0))
    )
    if notes:
        text = f"{text}\n\n{notes}"
    state.emit(
        ToolCallEvent,
        phase=phase,
        tool=tool,
        args=args,
        result_chars=len(text),
        result_preview=text[:300],
        latency_ms=(time.perf_counter() - started) * 1000,
        error=error,
    )
    return text


async def _search(
    ctx: RunContext[RunState],
    pattern: str,
    fixed_strings: bool = False,
    globs: list[str] | None = None,
    ignore_case: bool = False,
    context: int = 0,
) -> str:
    """Search the repository with ripgrep; returns `path:line: text` per match.

    Args:
        pattern: Regular expression (Rust regex syntax), or literal text with `fixed_strings=true`.
        fixed_strings: Treat the pattern as literal text.
        globs: Only search files matching these globs, e.g. `["*.py", "src/**"]`.
        ignore_case: Case-insensitive match.
        context: Lines of context around each match (0-5).
    """
    from funnel import tools

    args = {"pattern": pattern, "fixed_strings": fixed_strings, "globs": globs or [], "ignore_case": ignore_case,
            "context": context}  # fmt: skip
    s = ctx.deps
    return await _run_tool(
        s,
        ToolName.search,
        args,
        lambda: tools.search(
            s.sandbox, pattern, fixed_strings=fixed_strings, globs=tuple(globs or ()), ignore_case=ignore_case,
            context=max(0, min(context, 5)), cancel=s.cancel.event,
        ),
    )  # fmt: skip


async def _read_range(ctx: RunContext[RunState], path: str, start: int = 1, end: int | None = None) -> str:
    """Read numbered lines `start..end` (1-based, inclusive) of one file; the header gives the file's length.

    Args:
        path: Repository-relative path.
        start: First line to show.
        end: Last line to show; omit for a default window.
    """
    from funnel import tools

    s = ctx.deps

    def call() -> Any:
        result = tools.read_range(s.sandbox, path, start, end)
        if getattr(result, "lines", None):
            s.reads.append((result.path, result.start, result.end))
        return result

    return await _run_tool(s, ToolName.read_range, {"path": path, "start": start, "end": end}, call)


async def _list_dir(ctx: RunContext[RunState], path: str = ".", depth: int = 1) -> str:
    """List a directory of the repository (ignored and secret files are left out).

    Args:
        path: Repository-relative directory; `.` is the root.
        depth: How many levels to descend (1-3).
    """
    from funnel import tools

    s = ctx.deps
    args = {"path": path, "depth": depth}
    return await _run_tool(s, ToolName.list_dir, args, lambda: tools.list_dir(s.sandbox, path, max(1, min(depth, 3))))


async def _find_symbol(ctx: RunContext[RunState], name: str) -> str:
    """Find where a function, class or method is defined (`name`, `Class.method`, or close spellings).

    Args:
        name: Symbol name, optionally qualified.
    """
    from funnel import tools

    s = ctx.deps

    def call() -> Any:
        if s.index is None:
            raise ToolError("find_symbol is unavailable here (no symbol index); use search instead.")
        return tools.find_symbol(s.sandbox, s.index, name)

    return await _run_tool(s, ToolName.find_symbol, {"name": name}, call)


async def _begin_deep_dive(ctx: RunContext[RunState], suspects: list[str]) -> str:
    """Stop exploring and deep-dive into the suspects: from now on only `read_range` is available.

    Args:
        suspects: Suspect files or symbols (`path` or `path:Symbol`), most suspicious first.
    """
    s = ctx.deps

    def call() -> str:
        named = [x.strip() for x in suspects if x and x.strip()]
        if not named:
            raise ToolError("Name at least one suspect file or symbol, e.g. begin_deep_dive(['src/app.py:parse']).")
        s.suspects.extend(n for n in named if n not in s.suspects)
        note = s.move_to(Phase.deep_dive, forced=False, reason="suspects named: " + ", ".join(named))
        msg = (
            f"Deep-dive started on {', '.join(named)}. Only read_range is available now "
            f"({s.limits.deep_dive_reads} reads); call finish_deep_dive when you can write the report."
        )
        return f"{msg}\n{note}" if note else msg

    return await _run_tool(s, ControlTool.begin_deep_dive, {"suspects": suspects}, call)


async def _finish_deep_dive(ctx: RunContext[RunState]) -> str:
    """Stop reading and write the report (no tools after this)."""
    s = ctx.deps

    def call() -> str:
        note = s.move_to(Phase.output, forced=False, reason="deep-dive finished")
        msg = "Deep-dive finished. Write the report now, following the template; no more tools."
        return f"{msg}\n{note}" if note else msg

    return await _run_tool(s, ControlTool.finish_deep_dive, {}, call)


async def _request_info(ctx: RunContext[RunState], questions: list[str]) -> str:
    """Stop the investigation: the report lacks something only the reporter can give. Ask them.

    Args:
        questions: Precise questions for the reporter (versions, inputs, steps to reproduce, full traceback...).
    """
    s = ctx.deps

    def call() -> str:
        asked = [q.strip() for q in questions if q and q.strip()]
        if not asked:
            raise ToolError("Give at least one question for the reporter.")
        s.questions = asked
        return "Noted: the investigation stops here and these questions go to the reporter."

    return await _run_tool(s, ControlTool.request_info, {"questions": questions}, call)


def funnel_tools() -> list[Tool[RunState]]:
    """Every tool of the funnel; `offered_tools` hides those the current phase does not offer."""
    by_name = {
        ToolName.search: _search,
        ToolName.read_range: _read_range,
        ToolName.list_dir: _list_dir,
        ToolName.find_symbol: _find_symbol,
        ControlTool.begin_deep_dive: _begin_deep_dive,
        ControlTool.finish_deep_dive: _finish_deep_dive,
        ControlTool.request_info: _request_info,
    }
    # sequential: calls of one response run in order, so phase moves and budgets are deterministic (and replayable)
    return [Tool(fn, takes_ctx=True, name=str(name), sequential=True, max_retries=3) for name, fn in by_name.items()]

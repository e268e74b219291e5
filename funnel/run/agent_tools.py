"""The tools the model calls: one wrapper per funnel tool, each run through the gate, budgets and trace.

The four read-only tools read through the run's sandbox and cap what a model may ask for with the sandbox's
`ToolLimits` (`agent_search_context`, `agent_list_depth`); the three control tools move the funnel or stop the
run. `offered_tools` is the phase gate `PrepareTools` applies; `refuse` (`funnel.run.budget`) backs it in every
call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.tools import ToolDefinition

from funnel import tools
from funnel.errors import RunFailed, ToolError, UnrecoverableError, UserError
from funnel.phases import ControlTool, tools_for
from funnel.run.budget import refuse
from funnel.run.hooks import ToolCall
from funnel.run.state import RunState
from funnel.tools import ReadResult, Sandbox, SymbolResult
from schemas.enums import Phase, ToolName
from schemas.trace import ToolCallEvent

__all__ = ("funnel_tools", "offered_tools")


def _sandbox(state: RunState) -> Sandbox:
    if state.sandbox is None:  # the loop sets it before the first request
        raise UserError("the run has no sandbox yet")
    return state.sandbox


def offered_tools(state: RunState, tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
    """The tools offered in the current phase (the funnel gate, used by `PrepareTools`)."""
    allowed = set(tools_for(state.phase))
    return [td for td in tool_defs if td.name in allowed]


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
    text = refuse(state, tool, args)
    if text is not None:
        error = text
    else:
        if tool not in set(ControlTool):
            state.phase_calls += 1
            state.meter.add_tool_call(state.phase)
        try:
            if tool in set(ControlTool):
                state.held = []  # the phase change a control tool causes is traced after the call itself
                result = call()
            else:
                result = await asyncio.to_thread(call)
            text = result if isinstance(result, str) else result.render()
            state.consecutive_tool_errors = 0
        except ToolError as e:  # the model's mistake: it sees the instructive text; only these count as failures
            text = error = str(e)
            state.consecutive_tool_errors += 1
            state.last_tool_error = error
        except UnrecoverableError as e:
            caused, state.held = state.held, None
            state.emit(ToolCallEvent, phase=phase, tool=tool, args=args, error=str(e))
            state.held = caused
            _release(state)
            raise RunFailed(f"{tool}: {e}") from e
        except BaseException:
            _release(state)
            raise
    notes = state.hooks.run_tool_hooks(
        ToolCall(tool, args, text, result, error, phase, max(state.budget(phase) - state.phase_calls, 0))
    )
    if notes:
        text = f"{text}\n\n{notes}"
    caused, state.held = state.held, None
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
    state.held = caused
    _release(state)
    return text


def _release(state: RunState) -> None:
    """Emit the events held while a control tool ran."""
    held, state.held = state.held or [], None
    for event in held:
        state.tracer.emit(event)


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
    args = {"pattern": pattern, "fixed_strings": fixed_strings, "globs": globs or [], "ignore_case": ignore_case,
            "context": context}  # fmt: skip
    s = ctx.deps
    return await _run_tool(
        s,
        ToolName.search,
        args,
        lambda: tools.search(
            _sandbox(s), pattern, fixed_strings=fixed_strings, globs=tuple(globs or ()), ignore_case=ignore_case,
            context=max(0, min(context, _sandbox(s).limits.agent_search_context)), cancel=s.cancel.event,
        ),
    )  # fmt: skip


async def _read_range(ctx: RunContext[RunState], path: str, start: int = 1, end: int | None = None) -> str:
    """Read numbered lines `start..end` (1-based, inclusive) of one file; the header gives the file's length.

    Args:
        path: Repository-relative path.
        start: First line to show.
        end: Last line to show; omit for a default window.
    """
    s = ctx.deps

    def call() -> ReadResult:
        result = tools.read_range(_sandbox(s), path, start, end)
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
    s = ctx.deps
    args = {"path": path, "depth": depth}
    depth_cap = _sandbox(s).limits.agent_list_depth
    return await _run_tool(s, ToolName.list_dir, args, lambda: tools.list_dir(_sandbox(s), path, max(1, min(depth, depth_cap))))


async def _find_symbol(ctx: RunContext[RunState], name: str) -> str:
    """Find where a function, class or method is defined (`name`, `Class.method`, or close spellings).

    Args:
        name: Symbol name, optionally qualified.
    """
    s = ctx.deps

    def call() -> SymbolResult:
        if s.index is None:
            raise ToolError("find_symbol is unavailable here (no symbol index); use search instead.")
        return tools.find_symbol(_sandbox(s), s.index, name)

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
            raise ToolError("Name at least one suspect file or symbol, as `<path>` or `<path>:<symbol>` with a real path.")
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

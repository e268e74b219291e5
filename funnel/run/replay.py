"""Replay: re-run a stored transcript through today's tools and policy, and say which outcomes changed.

The recorded model responses are fed back, in order, by a `FunctionModel`; every tool call is executed again
against today's tools, phase gate, budgets, stop policy and verifier. Outcomes compared: the termination
reason, the tool calls (name, arguments, refused or not) and the suspects (ranked files of the diagnosis).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from funnel.errors import UserError
from funnel.limits import Limits
from funnel.run.prompts import extract_report_text
from funnel.run.budget import Unrecoverable
from funnel.run.trace import read_diagnosis, read_messages, read_trace
from schemas.report import BugReport
from schemas.trace import StartEvent, StopEvent, ToolCallEvent, TraceEvent

__all__ = ("Outcome", "ReplayExplorer", "ReplayResult", "find_traces", "render_table", "replay", "replay_all")


@dataclass
class Outcome:
    """What a run came to, in the terms replay compares."""

    termination: str
    """Stop reason."""
    tool_calls: list[str] = field(default_factory=list)
    """`tool(args)` per call, `!` appended when refused or failed."""
    suspects: list[str] | None = None
    """Ranked files of the diagnosis (None when unknown)."""


@dataclass
class ReplayResult:
    """One trace replayed."""

    trace: Path
    """The trace file."""
    recorded: Outcome
    """Outcome as recorded."""
    replayed: Outcome
    """Outcome today."""

    @property
    def changed(self) -> list[str]:
        """Which outcomes differ (`termination`, `tool_calls`, `suspects`)."""
        out = []
        if self.recorded.termination != self.replayed.termination:
            out.append("termination")
        if self.recorded.tool_calls != self.replayed.tool_calls:
            out.append("tool_calls")
        if self.recorded.suspects is not None and self.recorded.suspects != self.replayed.suspects:
            out.append("suspects")
        return out


@dataclass
class ReplayExplorer:
    """Feeds recorded responses back in order; stops the run when they run out."""

    responses: list[ModelResponse]
    """Recorded model responses."""
    name: str = "replay"
    """Explorer name."""

    def build_model(self, ctx: Any) -> FunctionModel:
        """A FunctionModel returning the recorded responses one by one."""
        queue = list(self.responses)

        def play(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            if not queue:
                raise Unrecoverable("replay: the recorded model responses ran out")
            return queue.pop(0)

        return FunctionModel(play, model_name="replay")


def _calls(events: list[TraceEvent]) -> list[str]:
    return [
        f"{e.tool}({json.dumps(e.args, sort_keys=True)}){'!' if e.error else ''}"
        for e in events
        if isinstance(e, ToolCallEvent)
    ]


def _root_for(trace: Path, start: StartEvent) -> Path:
    for d in (trace.parent, trace.parent.parent):
        if (d / "repo").is_dir():
            return d / "repo"
    return Path(start.root)


def _report_from(messages: list[ModelMessage], start: StartEvent) -> BugReport:
    for m in messages:
        if isinstance(m, ModelRequest):
            for p in m.parts:
                if isinstance(p, UserPromptPart) and isinstance(p.content, str):
                    text = extract_report_text(p.content)
                    if text is not None:
                        body = text.removeprefix(start.report_title).strip()
                        return BugReport(title=start.report_title, body=body)
    return BugReport(title=start.report_title)


async def replay(trace: Path, *, root: Path | None = None, limits: Limits | None = None) -> ReplayResult:
    """Replay one stored trace through today's harness and compare outcomes."""
    from funnel.run.loop import investigate

    events = read_trace(trace)
    messages = read_messages(trace)
    start = next((e for e in events if isinstance(e, StartEvent)), None)
    stop = next((e for e in reversed(events) if isinstance(e, StopEvent)), None)
    if start is None or stop is None:
        raise UserError(f"{trace}: not a complete trace (needs a start and a stop event)")
    if not messages:
        raise UserError(f"{trace}: no transcript beside it ({trace.with_suffix('.messages.json').name})")
    recorded_dx = read_diagnosis(trace)
    recorded = Outcome(stop.reason.value, _calls(events), recorded_dx.ranked_files() if recorded_dx else None)
    responses = [m for m in messages if isinstance(m, ModelResponse)]
    result = await investigate(
        _report_from(messages, start),
        root or _root_for(trace, start),
        explorer=ReplayExplorer(responses),
        limits=limits or Limits.from_dict(start.limits),
        commit=start.commit,
    )
    replayed = Outcome(result.diagnosis.termination.reason.value, _calls(result.events), result.diagnosis.ranked_files())
    return ReplayResult(trace, recorded, replayed)


def find_traces(path: Path) -> list[Path]:
    """The trace files at a path: the file itself, or every `*.jsonl` under a directory (fixture repos skipped)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UserError(f"no trace file or directory at {path}")
    return sorted(p for p in path.rglob("*.jsonl") if "repo" not in p.relative_to(path).parts[:-1])


def replay_all(path: Path, *, root: Path | None = None) -> list[ReplayResult]:
    """Replay every trace at a path (file or directory)."""
    return [asyncio.run(replay(t, root=root)) for t in find_traces(path)]


def render_table(results: list[ReplayResult]) -> str:
    """A plain-text table: one row per trace, recorded vs replayed termination and what changed."""
    rows = [("trace", "recorded", "replayed", "calls", "changed")]
    for r in results:
        calls = f"{len(r.recorded.tool_calls)}->{len(r.replayed.tool_calls)}"
        rows.append((r.trace.name, r.recorded.termination, r.replayed.termination, calls, ",".join(r.changed) or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)

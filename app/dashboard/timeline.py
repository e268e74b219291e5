"""The timeline of one investigation: its stored trace events grouped by attempt and phase, as the page shows them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from schemas.enums import Phase, ToolName


@dataclass
class Step:
    """One trace event as the timeline shows it."""

    kind: str
    phase: str
    title: str
    detail: str = ""
    args: str = ""
    preview: str = ""
    latency: str = ""
    tokens: str = ""
    error: str = ""
    attempt: int = 1
    ts: str = ""


@dataclass
class PhaseGroup:
    """The consecutive steps of one phase within one attempt."""

    phase: str
    attempt: int
    steps: list[Step] = field(default_factory=list)
    tool_calls: int = 0


@dataclass
class Timeline:
    """The funnel as it ran: phases in order, each with its steps, and how it stopped."""

    groups: list[PhaseGroup]
    tool_calls: int
    input_tokens: int
    output_tokens: int
    stop: Step | None
    count: int


def _args_text(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def step_of(event: dict[str, Any]) -> Step:
    """One stored trace event (its JSON data) as a timeline step."""
    kind = str(event.get("kind", "?"))
    phase = str(event.get("phase", Phase.explore.value))
    ts = str(event.get("ts", ""))[11:19]
    attempt = int(event.get("attempt", 1) or 1)
    step = Step(kind=kind, phase=phase, title=kind.replace("_", " "), attempt=attempt, ts=ts)
    step.detail = str(event.get("detail") or "")
    if kind == "tool_call":
        step.title = str(event.get("tool", "?"))
        step.args = _args_text(event.get("args") or {})
        step.preview = str(event.get("result_preview", ""))
        step.latency = f"{float(event.get('latency_ms') or 0):.0f} ms"
        step.error = str(event.get("error") or "")
        step.detail = f"{event.get('result_chars', 0)} chars returned"
    elif kind == "request":
        step.title = "model request"
        step.latency = f"{float(event.get('latency_ms') or 0):.0f} ms"
        step.tokens = f"{event.get('input_tokens', 0)} in / {event.get('output_tokens', 0)} out"
        if event.get("cached_tokens"):
            step.tokens += f" ({event['cached_tokens']} cached)"
        step.detail = f"finish: {event.get('finish_reason')}" if event.get("finish_reason") else ""
    elif kind == "phase_change":
        step.title = f"{event.get('from_phase')} → {event.get('to_phase')}"
        step.detail = ("forced: " if event.get("forced") else "") + str(event.get("reason", ""))
    elif kind == "verify":
        step.title = "verification passed" if event.get("ok") else "verification failed"
        step.detail = "; ".join(event.get("findings") or [])
    elif kind == "stop":
        step.title = f"stopped: {event.get('reason')}"
        step.detail = str(event.get("detail", ""))
    elif kind == "status":
        step.title = f"status: {event.get('status', '?')}"
        step.detail = str(event.get("detail") or event.get("error") or event.get("note") or "")
    elif kind == "start":
        step.title = f"started with {event.get('explorer', '?')}"
        step.detail = f"commit {event['commit']}" if event.get("commit") else ""
    return step


_TOOLS = frozenset(t.value for t in ToolName)
_PHASE_ORDER = {p.value: i for i, p in enumerate(Phase)}


def _order(phase: str) -> int:
    return _PHASE_ORDER.get(phase, 0)


def timeline_of(events: Iterable[dict[str, Any]]) -> Timeline:
    """Group stored trace events by (attempt, phase) in the order they happened."""
    groups: list[PhaseGroup] = []
    tool_calls = input_tokens = output_tokens = count = 0
    stop: Step | None = None
    for event in events:
        count += 1
        step = step_of(event)
        if step.kind == "stop":
            stop = step
        if step.kind == "tool_call" and step.title not in _TOOLS:
            step.kind = "control"  # begin_deep_dive, finish_deep_dive, request_info: the funnel's own controls
        if step.kind == "tool_call":
            tool_calls += 1
        if step.kind == "request":
            input_tokens += int(event.get("input_tokens") or 0)
            output_tokens += int(event.get("output_tokens") or 0)
        if step.kind == "phase_change":
            step.phase = str(event.get("to_phase", step.phase))
        elif "phase" not in event and groups:  # service events (status) belong to whatever phase is current
            step.phase, step.attempt = groups[-1].phase, groups[-1].attempt
        elif groups and groups[-1].attempt == step.attempt and _order(step.phase) < _order(groups[-1].phase):
            step.phase = groups[-1].phase  # phases never go back: a late event of the phase just left stays here
        if not groups or groups[-1].phase != step.phase or groups[-1].attempt != step.attempt:
            groups.append(PhaseGroup(phase=step.phase, attempt=step.attempt))
        groups[-1].steps.append(step)
        if step.kind == "tool_call":
            groups[-1].tool_calls += 1
    return Timeline(groups, tool_calls, input_tokens, output_tokens, stop, count)

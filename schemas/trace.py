"""Trace events: one JSONL line each, appended as the run goes. The trace is the source of truth for what happened."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from schemas.enums import Phase, StopReason


def _now() -> datetime:
    return datetime.now(timezone.utc)


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ts: datetime = Field(default_factory=_now)
    """When the event happened (UTC)."""
    attempt: int = 1
    """Verification attempt the event belongs to (1-based)."""
    iteration: int = 0
    """Agent-loop iteration (0 before the first model request)."""
    phase: Phase = Phase.explore
    """Phase the run was in."""


class StartEvent(_Event):
    """The run began."""

    kind: Literal["start"] = "start"
    explorer: str
    """Explorer name."""
    report_title: str = ""
    """Title of the report under investigation."""
    root: str = ""
    """Repository root investigated."""
    commit: str | None = None
    """Commit investigated, when known."""
    limits: dict[str, Any] = Field(default_factory=dict)
    """The limits in force."""


class RequestEvent(_Event):
    """One model request and its token use."""

    kind: Literal["request"] = "request"
    input_tokens: int = 0
    """Input tokens of this request."""
    output_tokens: int = 0
    """Output tokens of this request."""
    cached_tokens: int = 0
    """Cached input tokens of this request."""
    latency_ms: float = 0.0
    """Time the model took."""
    finish_reason: str | None = None
    """Why the model stopped (`stop`, `length`, `tool_call`...)."""


class ToolCallEvent(_Event):
    """One tool call: name, arguments, what came back."""

    kind: Literal["tool_call"] = "tool_call"
    tool: str
    """Tool name (one of ToolName, or a funnel control tool such as `begin_deep_dive`)."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Arguments as the explorer gave them."""
    result_chars: int = 0
    """Size of the result text the explorer saw."""
    result_preview: str = ""
    """First few hundred characters of the result."""
    latency_ms: float = 0.0
    """Time the tool took."""
    error: str | None = None
    """Error text when the call failed or was refused."""


class PhaseChangeEvent(_Event):
    """The funnel moved forward."""

    kind: Literal["phase_change"] = "phase_change"
    from_phase: Phase
    """Phase left."""
    to_phase: Phase
    """Phase entered."""
    forced: bool = False
    """True when the harness forced the move because a budget was spent."""
    reason: str = ""
    """Why the move happened (suspects named, budget spent...)."""


class VerifyEvent(_Event):
    """The verifier's verdict on one attempt's report."""

    kind: Literal["verify"] = "verify"
    ok: bool
    """Whether the report passed."""
    findings: list[str] = Field(default_factory=list)
    """What failed, in words the next attempt is given."""


class PrepassCandidate(BaseModel):
    """One candidate location of the lexical pre-pass."""

    model_config = ConfigDict(extra="forbid")

    path: str
    """Repository-relative path."""
    score: float = 0.0
    """Fused score of the offline ranking (higher is better)."""
    symbols: list[str] = Field(default_factory=list)
    """Best-matching definitions, as `qualname:start-end`."""
    reasons: list[str] = Field(default_factory=list)
    """Evidence that tied the file to the report."""


class PrepassEvent(_Event):
    """The offline ranking ran as a cheap pre-pass; its candidates were shown to the model (added in 1.1)."""

    kind: Literal["prepass"] = "prepass"
    candidates: list[PrepassCandidate] = Field(default_factory=list)
    """Candidates shown to the model, best first (empty when the pre-pass found nothing or failed)."""
    seconds: float = 0.0
    """Wall-clock seconds the pre-pass took."""
    detail: str = ""
    """Detail for people (what was shown, or why nothing was)."""


class StopEvent(_Event):
    """The run ended."""

    kind: Literal["stop"] = "stop"
    reason: StopReason
    """The stop clause that tripped."""
    detail: str = ""
    """Detail for people."""


TraceEvent = Annotated[
    StartEvent | RequestEvent | ToolCallEvent | PhaseChangeEvent | VerifyEvent | StopEvent | PrepassEvent,
    Field(discriminator="kind"),
]
"""Any trace event, discriminated on `kind`."""

trace_event_adapter: TypeAdapter[TraceEvent] = TypeAdapter(TraceEvent)
"""Validates one trace line (`trace_event_adapter.validate_json(line)`)."""

"""Read models returned by `app.store` and the API: plain Pydantic objects, detached from any DB session."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from schemas import BugReport, Classification, Diagnosis, Feedback, Source, Status

T = TypeVar("T")


class RepoView(BaseModel):
    """A registered repository."""

    name: str
    """`owner/name`; webhooks and reports name the repository by it."""
    location: str
    """Absolute local path or git URL."""
    kind: Literal["path", "git"]
    """`path` for a local directory, `git` for a URL cloned into the cache."""
    default_ref: str | None = None
    """Branch investigated when a report names none (None: the repository's HEAD)."""
    created_at: datetime
    """When it was registered."""


class InvestigationLinks(BaseModel):
    """Where to find an investigation."""

    self: str
    """JSON detail."""
    trace: str
    """Trace events as a JSON list."""
    events: str
    """Server-sent events stream."""
    cancel: str
    """POST here to cancel."""
    page: str
    """Dashboard page."""


def links(investigation_id: int) -> InvestigationLinks:
    """The URLs of one investigation."""
    base = f"/api/investigations/{investigation_id}"
    return InvestigationLinks(
        self=base,
        trace=f"{base}/trace",
        events=f"{base}/events",
        cancel=f"{base}/cancel",
        page=f"/investigations/{investigation_id}",
    )


class Accepted(BaseModel):
    """Answer to an accepted report: it is stored, classified and (if investigated) queued."""

    id: int
    """Investigation id."""
    report_id: int
    """Stored report id."""
    status: Status
    """`queued` when it will be investigated, `skipped` when its classification is not investigated."""
    classification: Classification
    """What the classifier decided."""
    urls: InvestigationLinks
    """Where to follow it."""


class InvestigationSummary(BaseModel):
    """One row of the investigation list."""

    id: int
    """Investigation id."""
    report_id: int
    """Report investigated."""
    repo: str | None
    """Repository name."""
    title: str
    """Report title."""
    source: Source
    """Where the report came from."""
    status: Status
    """Lifecycle status."""
    classification: Classification
    """Classifier's label."""
    termination: str | None = None
    """Stop reason of the finished run (`done`, `error`, `cancelled`...)."""
    confidence: float | None = None
    """Diagnosis confidence, when there is a diagnosis."""
    prime_suspect: str | None = None
    """First affected file of the diagnosis (`path:line`)."""
    tool_calls: int = 0
    """Tool calls of the run."""
    duration_s: float | None = None
    """Wall-clock seconds of the run."""
    runs: int = 0
    """Times a worker started it (more than 1 after a crash)."""
    rerun_of: int | None = None
    """Investigation this one reruns."""
    created_at: datetime
    """When it was accepted."""
    started_at: datetime | None = None
    """When the last run started."""
    finished_at: datetime | None = None
    """When it finished."""


class Page(BaseModel, Generic[T]):
    """A page of results."""

    items: list[T]
    """This page."""
    total: int
    """Rows matching the filters."""
    limit: int
    """Page size asked for."""
    offset: int
    """Rows skipped."""


class FeedbackView(BaseModel):
    """A person's verdict on a diagnosis."""

    id: int
    """Feedback id."""
    investigation_id: int
    """Investigation judged."""
    repo: str | None
    """Repository (feedback is memory per repository)."""
    verdict: Feedback
    """correct, partly or wrong."""
    note: str = ""
    """What the person added."""
    created_at: datetime
    """When it was given."""


class InvestigationStats(BaseModel):
    """Counters of one investigation."""

    tool_calls: int = 0
    """Tool calls."""
    input_tokens: int = 0
    """Input tokens."""
    output_tokens: int = 0
    """Output tokens."""
    duration_s: float | None = None
    """Wall-clock seconds."""
    runs: int = 0
    """Worker starts."""
    trace_events: int = 0
    """Trace events persisted."""


class InvestigationDetail(InvestigationSummary):
    """Everything about one investigation."""

    report: BugReport
    """The report as it arrived."""
    classification_confidence: float = 0.0
    """Classifier confidence."""
    classification_reason: str = ""
    """Classifier's reason."""
    explorer: str = ""
    """Explorer used."""
    extra_context: str | None = None
    """Context added on rerun."""
    commit: str | None = None
    """Commit investigated."""
    diagnosis: Diagnosis | None = None
    """The validated diagnosis, when the run produced one."""
    report_markdown: str | None = None
    """The explorer's markdown report."""
    error: str | None = None
    """Why the run failed, when it did."""
    cancel_requested: bool = False
    """Cancellation was asked for."""
    stats: InvestigationStats = Field(default_factory=InvestigationStats)
    """Counters."""
    feedback: list[FeedbackView] = Field(default_factory=list)
    """Verdicts given so far."""
    urls: InvestigationLinks
    """Where to follow it."""


class TraceEventView(BaseModel):
    """One persisted trace event (`data` is a `schemas.trace` event as JSON)."""

    model_config = ConfigDict(ser_json_timedelta="float")

    id: int
    """Monotonic id (resume a stream after it)."""
    run: int
    """Worker start this event belongs to."""
    kind: str
    """Event kind (`start`, `request`, `tool_call`, `phase_change`, `verify`, `stop`, or `status`)."""
    data: dict[str, Any]
    """The event."""


class DeliveryView(BaseModel):
    """One webhook delivery and what became of it."""

    id: int
    """Row id."""
    provider: Source
    """Sender."""
    delivery_id: str | None
    """Delivery id as sent."""
    outcome: str
    """accepted, ignored, unauthorized, invalid or duplicate."""
    reason: str
    """Why."""
    investigation_id: int | None
    """Investigation created, if any."""
    received_at: datetime
    """When it arrived."""


class Counts(BaseModel):
    """Investigation counts for metrics and the dashboard."""

    by_status: dict[str, int]
    """Count per status."""
    by_classification: dict[str, int]
    """Count per classification."""
    by_status_classification: dict[tuple[str, str], int] = Field(default_factory=dict, exclude=True)
    """Count per (status, classification)."""

"""Fixed sets shared by every layer: the database, the API, the dashboard and the funnel use these, never bare strings."""

from __future__ import annotations

from enum import StrEnum


class Classification(StrEnum):
    """What kind of report this is; only some kinds are investigated."""

    bug = "bug"
    crash = "crash"
    performance = "performance"
    feature_request = "feature_request"
    question = "question"
    other = "other"


class Phase(StrEnum):
    """The three phases of the tool funnel, in order; phases never go back."""

    explore = "explore"
    deep_dive = "deep_dive"
    output = "output"


class StopReason(StrEnum):
    """Why an investigation ended: the first stop-policy clause that tripped."""

    done = "done"
    step_budget = "step_budget"
    cost_budget = "cost_budget"
    error = "error"
    needs_info = "needs_info"
    cancelled = "cancelled"


class Role(StrEnum):
    """What part a cited location plays in the bug."""

    cause = "cause"
    symptom = "symptom"
    related = "related"


class Complexity(StrEnum):
    """How much work the fix is likely to be."""

    trivial = "trivial"
    small = "small"
    medium = "medium"
    large = "large"


class Risk(StrEnum):
    """How likely the fix is to break something else."""

    low = "low"
    medium = "medium"
    high = "high"


class Status(StrEnum):
    """Lifecycle of an investigation job in the service."""

    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"
    cancelled = "cancelled"
    skipped = "skipped"


class Source(StrEnum):
    """Where a report came from."""

    api = "api"
    github = "github"
    gitlab = "gitlab"
    sentry = "sentry"
    jira = "jira"
    cli = "cli"
    eval = "eval"
    dashboard = "dashboard"
    mcp = "mcp"


class ToolName(StrEnum):
    """The four read-only tools; nothing else is ever offered to an explorer."""

    search = "search"
    read_range = "read_range"
    list_dir = "list_dir"
    find_symbol = "find_symbol"


class Feedback(StrEnum):
    """A person's verdict on a diagnosis."""

    correct = "correct"
    partly = "partly"
    wrong = "wrong"

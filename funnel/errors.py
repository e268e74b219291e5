"""Errors raised by the funnel, named by whose fault they are, and the typed stops that end a run.

Errors (`BugsleuthError`): `ToolError` is the model's fixable mistake, `UnrecoverableError` a broken environment,
`UserError` a programmer's misuse of the API. Stops (`StopRun`): one exception per clause of the stop policy
(`funnel.run.budget`), raised anywhere (stop check, tools, model wrapper) and caught in ONE place
(`funnel.run.loop`); each carries the `StopReason` recorded in the diagnosis.
"""

from __future__ import annotations

from schemas.enums import StopReason

__all__ = (
    "BugsleuthError",
    "Cancelled",
    "CostBudgetExceeded",
    "ModelUnavailable",
    "ModelUnusable",
    "NeedsInfo",
    "RunFailed",
    "StepBudgetExceeded",
    "StopRun",
    "ToolError",
    "UnrecoverableError",
    "UserError",
)


class BugsleuthError(Exception):
    """Base class of every error the funnel raises on purpose."""

    message: str
    """The human- or model-readable description of what went wrong."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message


class ToolError(BugsleuthError):
    """The model asked a tool for something it cannot have, and can fix the request.

    `str(error)` is the instructive text shown to the model instead of a tool result:
    it says what was wrong and what to try instead (nearest paths, the file's length, the regex error).
    """


class UnrecoverableError(BugsleuthError):
    """The environment is broken (repository gone, `rg` missing); the harness stops the run with `error`."""


class UserError(BugsleuthError):
    """A programmer used the API wrongly (bad limits, bad arguments); not shown to a model."""


class StopRun(Exception):
    """Ends the run with a reason; `detail` is shown to people."""

    reason: StopReason = StopReason.error

    def __init__(self, detail: str = "") -> None:
        self.detail = detail
        super().__init__(detail)


class StepBudgetExceeded(StopRun):
    """Too many model requests, or no progress (the same call again and again)."""

    reason = StopReason.step_budget


class CostBudgetExceeded(StopRun):
    """Too many tokens, too much money, or too much wall-clock time."""

    reason = StopReason.cost_budget


class RunFailed(StopRun):
    """The environment or the model endpoint is broken beyond retrying: the run ends with termination `error`."""

    reason = StopReason.error


class ModelUnavailable(RunFailed):
    """The model endpoint failed (unreachable, refused the request, kept failing, could not be set up).

    Still termination `error`; the harness may rerun with the offline investigator (`Limits.fallback_to_offline`).
    """


class ModelUnusable(RunFailed):
    """The model answered, but never with a report or a tool call the harness could run, within its retries (a
    tool no phase left offers, called again and again; answers that are no report).

    Still termination `error`; the harness may rerun with the offline investigator (`Limits.fallback_to_offline`).
    """


class NeedsInfo(StopRun):
    """Only the reporter can supply what is missing; carries the questions to ask."""

    reason = StopReason.needs_info

    def __init__(self, questions: list[str]) -> None:
        self.questions = questions
        super().__init__("the report lacks information only the reporter can give: " + " | ".join(questions))


class Cancelled(StopRun):
    """The caller cancelled the run."""

    reason = StopReason.cancelled

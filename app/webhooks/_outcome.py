"""The result of parsing one webhook delivery."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from schemas import BugReport, Source

OutcomeKind = Literal["accepted", "ignored", "unauthorized", "invalid"]
"""`accepted`: a report to classify and maybe investigate; `ignored`: authentic but nothing to do (closed,
comment, ping, unsupported event); `unauthorized`: missing or forged signature; `invalid`: malformed body."""


class WebhookOutcome(BaseModel):
    """What one delivery amounts to; pure data, decided without I/O."""

    model_config = ConfigDict(extra="forbid")

    kind: OutcomeKind
    """The verdict."""
    provider: Source
    """Which provider the delivery claims to come from."""
    event: str | None = None
    """The provider's event name (`issues/opened`, `Issue Hook/open`, `event_alert/triggered`, `jira:issue_created`)."""
    delivery_id: str | None = None
    """The provider's id of this delivery, for deduplication of redeliveries; None when it has none."""
    identity: str | None = None
    """The event's identity in the signed body (object id + action + update time, or the provider's event id):
    a body resent under a new delivery id is the same event. None when the body carries none."""
    reason: str = ""
    """Why it was ignored, refused or invalid; empty when accepted."""
    report: BugReport | None = None
    """The bug report, only when `kind` is `accepted`."""

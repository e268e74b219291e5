"""Pieces shared by `app.store` and `app._store_jobs`."""

from __future__ import annotations

from app.models import Report
from schemas import BugReport, Status

FINISHED = (Status.done, Status.failed, Status.cancelled, Status.skipped)
"""Statuses an investigation never leaves (except through a rerun, which is a new investigation)."""


def storable(text: str | None, limit: int | None = None) -> str | None:
    """Text every backend accepts: no NUL characters (PostgreSQL refuses them), no lone surrogates."""
    if text is None:
        return None
    if "\x00" in text:
        text = text.replace("\x00", "")
    if not text.isascii():
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text[:limit] if limit else text


class DuplicateError(Exception):
    """The row already exists (a repository name, a webhook delivery id): the caller's redelivery, not a fault."""


def report_model(rep: Report) -> BugReport:
    """The stored report as a `BugReport`."""
    return BugReport(
        title=rep.title,
        body=rep.body,
        source=rep.source,
        repo=rep.repo,
        ref=rep.ref,
        labels=list(rep.labels or []),
        reporter=rep.reporter,
        url=rep.url,
        external_id=rep.external_id,
    )

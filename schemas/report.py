"""The bug report: the only input an investigation reads. Its text is untrusted data, never instructions."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from schemas.enums import Classification, Source
from schemas.text import scrub, visible_markdown, without_escapes

MAX_TITLE_CHARS = 500
MAX_BODY_CHARS = 200_000
_CUT = "\n\n...[{n} characters truncated by bugsleuth: the report was longer than the intake limit]...\n\n"
_TAIL_SHARE = 0.4
"""Of a clipped body, the share kept from its end: a pasted log ends with the error, a description starts the body."""


def clip_title(title: str) -> str:
    """A title within the report's limit, on one line."""
    title = " ".join(title.split())
    return title if len(title) <= MAX_TITLE_CHARS else title[: MAX_TITLE_CHARS - 3] + "..."


def clip_body(body: str) -> str:
    """A body within the report's limit: its beginning and its end, the cut between them stated."""
    if len(body) <= MAX_BODY_CHARS:
        return body
    room = MAX_BODY_CHARS - len(_CUT.format(n=len(body)))
    tail = int(room * _TAIL_SHARE)
    head = room - tail
    return body[:head] + _CUT.format(n=len(body) - head - tail) + body[len(body) - tail :]


class BugReport(BaseModel):
    """A bug report as it arrives from any intake (API, webhook, CLI, eval)."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(default="", max_length=MAX_TITLE_CHARS)
    """One-line title; may be empty when the source has none."""
    body: str = Field(default="", max_length=MAX_BODY_CHARS)
    """Free text: description, stack traces, code blocks, logs."""
    source: Source = Source.api
    """Which intake delivered the report."""
    repo: str | None = None
    """Registered repository name (`owner/name`) the report is about."""
    ref: str | None = None
    """Branch, tag, commit or version the reporter names; None means the default branch head."""
    labels: list[str] = Field(default_factory=list)
    """Tracker labels, used by classification."""
    reporter: str | None = None
    """Who filed it, as the source names them."""
    url: str | None = None
    """Link back to the issue in its tracker."""
    external_id: str | None = None
    """The tracker's own id for the issue (for comment-back and dedup)."""

    @field_validator("title", "body", "repo", "ref", "labels", "reporter", "url", "external_id", mode="before")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        """Lone surrogates and NUL (valid JSON escapes, unstorable text) become U+FFFD: a report is never lost."""
        return scrub(value)

    @property
    def visible_body(self) -> str:
        """The body as the reader of the rendered issue sees it: Markdown without the HTML comments a renderer hides
        (`visible_markdown`: an issue template's instructions); Jira's wiki markup shows `<!--` as written. A
        terminal's escape sequences, pasted with a coloured log, are left out too (`without_escapes`)."""
        body = without_escapes(self.body)
        return body if self.source == Source.jira else visible_markdown(body)

    @property
    def text(self) -> str:
        """Title and visible body as one text: the form every extractor reads."""
        return f"{without_escapes(self.title)}\n\n{self.visible_body}".strip()


class ClassificationResult(BaseModel):
    """What the classifier decided and why."""

    label: Classification
    """The class."""
    confidence: float = Field(ge=0.0, le=1.0)
    """How sure the classifier is."""
    reason: str
    """Short human-readable justification (matched signals)."""

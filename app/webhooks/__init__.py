"""Webhook deliveries from GitHub, GitLab, Sentry and Jira: verified and turned into bug reports.

Pure functions: no HTTP, no database. The webhook route hands over the raw delivery and acts on the outcome.
"""

from __future__ import annotations

from collections.abc import Mapping

from schemas import Source

from app.webhooks import github, gitlab, jira, sentry
from app.webhooks._common import invalid
from app.webhooks._outcome import OutcomeKind, WebhookOutcome

__all__ = ("PROVIDERS", "OutcomeKind", "WebhookOutcome", "parse_delivery")

PROVIDERS = {Source.github: github.parse, Source.gitlab: gitlab.parse, Source.sentry: sentry.parse, Source.jira: jira.parse}
"""The parser of each provider: `parse(headers, body, secret, *, query=None) -> WebhookOutcome`."""


def parse_delivery(
    provider: str | Source,
    headers: Mapping[str, str],
    body: bytes,
    secret: str | None,
    *,
    query: Mapping[str, str] | None = None,
) -> WebhookOutcome:
    """Verify one delivery with the provider's secret and say what it amounts to.

    `headers` as received (any case), `body` the raw bytes (signatures cover them exactly), `secret` the
    provider's configured secret (None refuses every delivery), `query` the URL's query parameters (used by
    Sentry and Jira for `repo=` and by Jira for `secret=`). Never raises for bad input: a forged or unsigned
    delivery is `unauthorized`, a malformed one `invalid`, an irrelevant one `ignored` with the reason.
    """
    try:
        source = Source(provider)
    except ValueError:
        source = None
    parser = PROVIDERS.get(source) if source else None
    if parser is None:
        return invalid(Source.api, f"unknown webhook provider {provider!r}; expected one of github, gitlab, sentry, jira")
    if not isinstance(body, bytes | bytearray):
        body = str(body).encode("utf-8")
    return parser(headers or {}, bytes(body), secret, query=query)

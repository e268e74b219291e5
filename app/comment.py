"""Optional comment-back: post the diagnosis on the GitHub or GitLab issue the report came from
(`comment_back = true` plus a token). Off by default; failures are logged, never fatal.

The comment is `funnel.export.to_markdown` of the validated diagnosis (not the investigator's raw report):
only claims that survived validation are named as suspects; dropped claims are listed, collapsed, as dropped."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx

from app.config import Settings
from funnel.report.export import to_markdown
from schemas import BugReport, Diagnosis, Source

_GITHUB_ISSUE = re.compile(r"^https?://[^/]+/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)")
_GITLAB_ISSUE = re.compile(r"^https?://[^/]+/(?P<project>.+?)/-/issues/(?P<iid>\d+)")
FOOTER = "\n\n---\n*Posted by bugsleuth. Feedback on this diagnosis in the dashboard guides later runs.*"
"""Appended to every comment."""


def comment_target(settings: Settings, report: BugReport) -> tuple[str, dict[str, str]] | None:
    """The API URL and headers to comment on the report's issue, or None when it cannot be done."""
    if not report.url:
        return None
    if report.source == Source.github and settings.github_token:
        m = _GITHUB_ISSUE.match(report.url)
        if m:
            url = f"{settings.github_api_url.rstrip('/')}/repos/{m['owner']}/{m['repo']}/issues/{m['number']}/comments"
            headers = {
                "Authorization": f"Bearer {settings.github_token.get_secret_value()}",
                "Accept": "application/vnd.github+json",
            }
            return url, headers
    if report.source == Source.gitlab and settings.gitlab_token:
        m = _GITLAB_ISSUE.match(report.url)
        if m:
            project = quote(m["project"], safe="")
            url = f"{settings.gitlab_api_url.rstrip('/')}/projects/{project}/issues/{m['iid']}/notes"
            return url, {"PRIVATE-TOKEN": settings.gitlab_token.get_secret_value()}
    return None


def comment_body(diagnosis: Diagnosis) -> str:
    """The text posted on the issue: the compact export of the validated diagnosis, plus a footer."""
    return to_markdown(diagnosis).rstrip() + FOOTER


async def post_diagnosis_comment(
    settings: Settings, report: BugReport, diagnosis: Diagnosis, *, timeout_s: float = 15.0
) -> bool:
    """Post the validated diagnosis on the issue; True when the tracker accepted it."""
    target = comment_target(settings, report)
    if target is None:
        return False
    url, headers = target
    async with httpx.AsyncClient(timeout=timeout_s) as client:
        response = await client.post(url, json={"body": comment_body(diagnosis)}, headers=headers)
    return response.is_success

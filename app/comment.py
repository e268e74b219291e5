"""Optional comment-back: post the diagnosis on the GitHub or GitLab issue the report came from
(`comment_back = true` plus a token). Off by default; failures are logged, never fatal."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx

from app.config import Settings
from schemas import BugReport, Source

_GITHUB_ISSUE = re.compile(r"^https?://[^/]+/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)")
_GITLAB_ISSUE = re.compile(r"^https?://[^/]+/(?P<project>.+?)/-/issues/(?P<iid>\d+)")
FOOTER = "\n\n---\n*Posted by bugsleuth (read-only investigation). Reply with feedback in the dashboard.*"


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


async def post_diagnosis_comment(settings: Settings, report: BugReport, markdown: str, *, timeout_s: float = 15.0) -> bool:
    """Post the diagnosis markdown on the issue; True when the tracker accepted it."""
    target = comment_target(settings, report)
    if target is None:
        return False
    url, headers = target
    async with httpx.AsyncClient(timeout=timeout_s) as client:
        response = await client.post(url, json={"body": markdown + FOOTER}, headers=headers)
    return response.is_success

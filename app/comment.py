"""Optional comment-back: the diagnosis on the GitHub or GitLab issue the report came from (`comment_back = true`
plus a token). Off by default; it never fails nor holds up an investigation: the outcome is returned and recorded.

A good bot's manners:
- one comment per issue: the comment starts with a hidden marker keyed by the issue
  (`<!-- bugsleuth:investigation acme/shop#7 -->`); a rerun finds it (comments listed page by page) and edits it,
  only when the token wrote it (`GET /user`): a person's comment that carries the marker is never overwritten;
- nothing the tracker acts on (`inert`): no line runs as a GitLab quick action, no mention notifies anyone;
- `X-GitHub-Api-Version` on every GitHub call;
- bodies cut to the tracker's limit (GitHub 65,536 characters, GitLab notes 1,000,000), with a link to the full
  diagnosis on the dashboard (`public_url`);
- retries with exponential backoff on network errors, 5xx and rate limits (429, and 403 with `Retry-After` or
  `x-ratelimit-remaining: 0` + `x-ratelimit-reset`), honouring `Retry-After`, all within `comment_timeout_s`.

The comment is `funnel.report.export.to_markdown` of the validated diagnosis (not the investigator's raw report): only
claims that survived validation are named as suspects; dropped claims are listed, collapsed, as dropped."""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Literal
from urllib.parse import quote

import httpx

from app.config import Settings
from app.webhooks._common import mapping
from funnel.report.export import to_markdown
from schemas import BugReport, Diagnosis, Source
from schemas.text import markdown_parts

_GITHUB_ISSUE = re.compile(r"^https?://[^/]+/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)")
_GITLAB_ISSUE = re.compile(r"^https?://[^/]+/(?P<project>.+?)(?:/-)?/(?:issues|work_items)/(?P<iid>\d+)")
GITHUB_API_VERSION = "2022-11-28"
"""The REST API version every GitHub call asks for."""
GITHUB_LIMIT = 65_536
"""Most characters GitHub keeps in a comment body."""
GITLAB_LIMIT = 1_000_000
"""Most characters GitLab keeps in a note (`Gitlab::Database::MAX_TEXT_SIZE_LIMIT`)."""
FOOTER = "\n\n---\n*Posted by bugsleuth. Feedback on this diagnosis in the dashboard guides later runs.*"
"""Appended to every comment."""
MAX_PAGES = 50
"""Pages of 100 comments searched for the previous comment."""
MAX_ATTEMPTS = 5
"""Tries of one API call (the total time is bounded by `comment_timeout_s` as well)."""
BASE_DELAY_S = 0.5
"""First backoff delay; doubled per retry, with jitter."""

Action = Literal["created", "updated", "failed", "skipped"]

_COMMAND_LINE = re.compile(r"^(?=/[A-Za-z])", re.M)
"""A line GitLab runs as a quick action when it starts with `/` and a command's name (`/close`, `/assign @x`)."""
_MENTION = re.compile(r"(?<![\w.+\-/@`])@(?=[A-Za-z0-9_])")
"""An `@` that starts a mention (`@alice`, `@all`, `@org/team`), not one inside an address or a path."""


@dataclass(frozen=True)
class Tracker:
    """The comment endpoints of one issue on GitHub or GitLab."""

    kind: Literal["github", "gitlab"]
    comments_url: str
    """Lists (GET) and creates (POST) the issue's comments."""
    headers: dict[str, str]
    limit: int
    """Most characters a comment may have."""
    key: str
    """The issue, as written in the hidden marker."""
    user_url: str = ""
    """Who the token is (`GET /user` on either): a rerun edits only a comment the token wrote."""

    def comment_url(self, comment_id: int | str) -> str:
        """Where one comment is edited (GitHub: PATCH `/issues/comments/{id}`; GitLab: PUT `/notes/{id}`)."""
        if self.kind == "github":
            return f"{self.comments_url.rsplit('/issues/', 1)[0]}/issues/comments/{comment_id}"
        return f"{self.comments_url}/{comment_id}"

    @property
    def marker(self) -> str:
        """The hidden first line that makes the comment findable by a rerun."""
        return f"<!-- bugsleuth:investigation {self.key} -->"


@dataclass(frozen=True)
class CommentResult:
    """What became of one comment-back."""

    action: Action
    detail: str
    comment_id: int | None = None
    attempts: int = 0
    """HTTP requests made, retries included."""

    @property
    def ok(self) -> bool:
        """Whether the tracker now shows the diagnosis."""
        return self.action in ("created", "updated")


class TrackerUnavailable(Exception):
    """The tracker did not answer usefully within the retries and the time budget."""


class TrackerRefused(Exception):
    """The tracker answered with a client error a retry cannot mend (bad token, no such issue, no access)."""

    def __init__(self, what: str, response: httpx.Response) -> None:
        super().__init__(f"{what}: HTTP {response.status_code} {response.text[:200]}".rstrip())


def comment_target(settings: Settings, report: BugReport) -> Tracker | None:
    """The issue's comment endpoints, or None when comment-back cannot be done (no URL, no token, other source)."""
    if not report.url:
        return None
    if report.source == Source.github and settings.github_token:
        m = _GITHUB_ISSUE.match(report.url)
        if m:
            base = f"{settings.github_api_url.rstrip('/')}/repos/{m['owner']}/{m['repo']}"
            headers = {
                "Authorization": f"Bearer {settings.github_token.get_secret_value()}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": GITHUB_API_VERSION,
                "User-Agent": "bugsleuth",
            }
            key = f"{m['owner']}/{m['repo']}#{m['number']}"
            return Tracker("github", f"{base}/issues/{m['number']}/comments", headers, GITHUB_LIMIT, key,
                           f"{settings.github_api_url.rstrip('/')}/user")
    if report.source == Source.gitlab and settings.gitlab_token:
        m = _GITLAB_ISSUE.match(report.url)
        if m:
            project = quote(m["project"], safe="")
            url = f"{settings.gitlab_api_url.rstrip('/')}/projects/{project}/issues/{m['iid']}/notes"
            headers = {"PRIVATE-TOKEN": settings.gitlab_token.get_secret_value(), "User-Agent": "bugsleuth"}
            return Tracker("gitlab", url, headers, GITLAB_LIMIT, f"{m['project']}#{m['iid']}",
                           f"{settings.gitlab_api_url.rstrip('/')}/user")
    return None


def diagnosis_link(settings: Settings, investigation_id: int | None) -> str | None:
    """The dashboard page of the investigation, when the service's public address is configured."""
    if investigation_id is None or not settings.public_url:
        return None
    return f"{settings.public_url.rstrip('/')}/investigations/{investigation_id}"


def comment_body(diagnosis: Diagnosis, *, marker: str = "", limit: int = GITHUB_LIMIT, link: str | None = None) -> str:
    """The text posted on the issue: the marker, the compact export of the validated diagnosis (`inert`) and a
    footer, cut to `limit` characters with a pointer to the full diagnosis when it is longer."""
    head = f"{marker}\n" if marker else ""
    footer = FOOTER + (f" [Full diagnosis and trace]({link})." if link else "")
    text = inert(to_markdown(diagnosis).rstrip())
    if len(head) + len(text) + len(footer) <= limit:
        return head + text + footer
    where = f"the full diagnosis is on the dashboard: {link}" if link else "the full diagnosis is on the bugsleuth dashboard"
    note = f"\n\n**[cut at {limit:,} characters: {where}]**"
    room = max(0, limit - len(head) - len(note) - len(footer) - 4)
    kept = text[:room]
    if kept.count("```") % 2:  # do not leave the rest of the comment inside an open code block
        kept += "\n```"
    return head + kept + note + footer


def inert(text: str) -> str:
    """`text` as a bot may post it: no line a tracker or another bot would run as a command with the bot's rights,
    and no mention that would notify anyone; it reads the same. A line starting `/close` gets its slash escaped
    (`\\/close`), or inside a fence a leading space (GitLab skips only some fences, and other bots none), and a
    mention gets a zero-width space after its `@`. Code spans are left as written: nothing acts on them. Carriage
    returns are dropped first, as GitLab drops them before it looks for commands."""
    out: list[str] = []
    for kind, part in markdown_parts(text.replace("\r", "")):
        if kind in ("prose", "comment"):
            part = _MENTION.sub("@\u200b", _COMMAND_LINE.sub("\\\\", part))
        elif kind == "fence":
            part = _COMMAND_LINE.sub(" ", part)
        out.append(part)
    return "".join(out)


def retry_delay(response: httpx.Response, attempt: int, *, now: float | None = None) -> float | None:
    """Seconds to wait before trying again after `response` (the `attempt`-th try), or None when a retry
    cannot help (success, or a client error such as 401, 404, 422, or a 403 that is not a rate limit)."""
    status, headers = response.status_code, response.headers
    after = _retry_after(headers.get("retry-after"), now)
    if status in (403, 429):
        if after is not None:
            return after
        remaining = headers.get("x-ratelimit-remaining") or headers.get("ratelimit-remaining")
        reset = headers.get("x-ratelimit-reset") or headers.get("ratelimit-reset")
        if remaining == "0" and reset and reset.isdigit():
            return max(0.0, int(reset) - (time.time() if now is None else now)) + 1.0
        return _backoff(attempt) if status == 429 else None
    if status >= 500 or status == 408:
        return after if after is not None else _backoff(attempt)
    return None


def _retry_after(value: str | None, now: float | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - (time.time() if now is None else now))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _backoff(attempt: int) -> float:
    return BASE_DELAY_S * 2 ** (attempt - 1) * (0.5 + random.random() / 2)


class _Calls:
    """API calls sharing one time budget, each retried while the tracker says it is worth it."""

    def __init__(self, client: httpx.AsyncClient, tracker: Tracker, budget_s: float) -> None:
        self.client, self.tracker = client, tracker
        self.deadline = time.monotonic() + budget_s
        self.attempts = 0

    async def send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """The first answer worth acting on; TrackerUnavailable when retries or time run out."""
        problem = "no attempt made"
        for attempt in range(1, MAX_ATTEMPTS + 1):
            left = self.deadline - time.monotonic()
            if left <= 0:
                break
            self.attempts += 1
            try:
                response = await self.client.request(method, url, headers=self.tracker.headers, timeout=left, **kwargs)
            except httpx.HTTPError as exc:
                problem, delay = f"{type(exc).__name__}: {exc}".rstrip(": "), _backoff(attempt)
            else:
                delay = retry_delay(response, attempt)
                if delay is None:
                    return response
                problem = f"HTTP {response.status_code}"
            if attempt == MAX_ATTEMPTS or time.monotonic() + delay >= self.deadline:
                problem += f" (next retry in {delay:.1f} s would pass the budget)" if attempt < MAX_ATTEMPTS else ""
                break
            await asyncio.sleep(delay)
        raise TrackerUnavailable(f"{method} {url}: {problem} after {self.attempts} request(s)")


async def _own_comment(calls: _Calls) -> Callable[[dict[str, Any]], bool]:
    """Whether a listed comment is one the token wrote. Anyone can write the marker into a comment of their own, and
    a token with write access may edit it: a rerun would then overwrite a person's words. A GitHub App's
    installation token may not ask who it is (403, "Resource not accessible by integration"); every comment it writes
    is its bot's (`user.type` "Bot")."""
    tracker = calls.tracker
    response = await calls.send("GET", tracker.user_url)
    if tracker.kind == "github" and response.status_code == 403 and "accessible by integration" in response.text:
        return lambda item: mapping(item.get("user")).get("type") == "Bot"
    try:
        me = response.json() if response.is_success else None
    except ValueError:
        me = None
    if not isinstance(me, dict) or me.get("id") is None:
        raise TrackerRefused("asking who the token is", response)
    field_name = "user" if tracker.kind == "github" else "author"
    return lambda item: mapping(item.get(field_name)).get("id") == me["id"]


async def _find_previous(calls: _Calls) -> int | None:
    """The id of the comment the token wrote carrying the tracker's marker, searched page by page (oldest first)."""
    tracker = calls.tracker
    mine = await _own_comment(calls)
    params: dict[str, Any] | None = {"per_page": 100}
    if tracker.kind == "gitlab":
        params |= {"sort": "asc", "order_by": "created_at"}
    url: str | None = tracker.comments_url
    for _ in range(MAX_PAGES):
        if url is None:
            break
        response = await calls.send("GET", url, params=params)
        if not response.is_success:
            raise TrackerRefused("listing comments", response)
        try:
            page = response.json()
        except ValueError:
            raise TrackerRefused("listing comments: the answer is not JSON", response) from None
        for item in page if isinstance(page, list) else []:
            if (isinstance(item, dict) and tracker.marker in str(item.get("body") or "") and str(item.get("id")).isdigit()
                    and mine(item)):
                return int(item["id"])
        url, params = _next_page(response, params)
        if url is not None and _origin(url) != _origin(tracker.comments_url):
            return None  # the token goes to the tracker's own API only: a page linked elsewhere is not followed
    return None


def _origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port of `url`."""
    parsed = httpx.URL(url)
    return parsed.scheme, parsed.host, parsed.port


def _next_page(response: httpx.Response, params: dict[str, Any] | None) -> tuple[str | None, dict[str, Any] | None]:
    """The next page: the `Link: rel="next"` URL (GitHub, GitLab), else GitLab's `X-Next-Page` number."""
    nxt = response.links.get("next", {}).get("url")
    if nxt:
        return nxt, None  # the link carries the query
    page = response.headers.get("x-next-page", "")
    if page.isdigit():
        return str(response.request.url.copy_with(query=None)), {**(params or {}), "page": int(page)}
    return None, None


async def post_diagnosis_comment(
    settings: Settings,
    report: BugReport,
    diagnosis: Diagnosis,
    *,
    investigation_id: int | None = None,
    budget_s: float | None = None,
) -> CommentResult:
    """Put the validated diagnosis on the issue: edit the comment a previous run posted, else add one.
    Never raises for tracker trouble: the result says what happened."""
    tracker = comment_target(settings, report)
    if tracker is None:
        return CommentResult("skipped", "no GitHub/GitLab issue URL with a configured token")
    link = diagnosis_link(settings, investigation_id)
    body = comment_body(diagnosis, marker=tracker.marker, limit=tracker.limit, link=link)
    async with httpx.AsyncClient() as client:
        calls = _Calls(client, tracker, settings.comment_timeout_s if budget_s is None else budget_s)
        try:
            previous = await _find_previous(calls)
            if previous is not None:
                method = "PATCH" if tracker.kind == "github" else "PUT"
                response = await calls.send(method, tracker.comment_url(previous), json={"body": body})
                action: Action = "updated"
            else:
                response = await calls.send("POST", tracker.comments_url, json={"body": body})
                action = "created"
            if not response.is_success:
                raise TrackerRefused(f"{'editing' if previous is not None else 'posting'} the comment", response)
        except TrackerUnavailable as exc:
            return CommentResult("failed", f"{tracker.kind} unavailable: {exc}", attempts=calls.attempts)
        except TrackerRefused as exc:
            return CommentResult("failed", f"{tracker.kind} refused: {exc}", attempts=calls.attempts)
    try:
        answer = response.json()
    except ValueError:
        answer = None
    comment_id = answer.get("id") if isinstance(answer, dict) and answer.get("id") is not None else previous
    detail = f"{action} {tracker.kind} comment {comment_id} on {tracker.key} ({len(body):,} characters)"
    return CommentResult(action, detail, comment_id, calls.attempts)

"""Comment-back: the diagnosis is posted on the originating issue, against a fake tracker on 127.0.0.1."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest
from pydantic import SecretStr

from sqlalchemy import select

from app import store
from app.comment import (
    BASE_DELAY_S,
    FOOTER,
    GITHUB_API_VERSION,
    GITHUB_LIMIT,
    GITLAB_LIMIT,
    comment_body,
    comment_target,
    inert,
    post_diagnosis_comment,
    retry_delay,
)
from app.config import Settings
from app.models import Investigation
from funnel.report.export import to_markdown
from schemas import BugReport, Classification, ClassificationResult, Diagnosis, Source
from schemas.diagnosis import RejectedClaim
from tests.app._fake_tracker import fake_tracker
from tests.app._service_fixtures import (  # noqa: F401
    Result,
    StubInvestigator,
    base_settings,
    fixture_repo,
    register,
    running_service,
)

GITHUB_REPORT = BugReport(
    title="crash", body="ZeroDivisionError", source=Source.github, repo="acme/tiny",
    url="https://github.com/acme/tiny/issues/7", external_id="acme/tiny#7",
)
RAW_REPORT = "# Diagnosis\naverage divides by zero\n\n## Affected files\n1. `ghost.py:99` — `vanish` (cause)\n"
"""What the investigator wrote: it also names a file the validator dropped."""


class ValidatedStub(StubInvestigator):
    """The stub's diagnosis plus one claim the validator rejected, and a raw report that still makes that claim."""

    async def __call__(self, report, root, **kwargs):
        result = await super().__call__(report, root, **kwargs)
        rejected = [RejectedClaim(kind="affected_file", claim={"path": "ghost.py", "line_start": 99},
                                  reason="file does not exist")]
        return Result(result.diagnosis.model_copy(update={"rejected": rejected}), RAW_REPORT)


async def test_the_validated_diagnosis_is_posted_on_the_github_issue_when_enabled(base_settings, fixture_repo):
    path, _ = fixture_repo
    with fake_tracker() as fake:
        settings = base_settings(comment_back=True, github_token=SecretStr("ghp_x"), github_api_url=fake.url)
        async with running_service(settings, ValidatedStub()) as svc:
            await register(svc, "acme/tiny", path)
            inv = await _investigate(svc, GITHUB_REPORT)
            detail = await svc.wait_status(inv, ("done",), timeout=30)
            await _commented(svc, inv)
    posts = [r for r in fake.requests if r["method"] == "POST"]
    assert posts[0]["path"] == "/repos/acme/tiny/issues/7/comments"
    assert posts[0]["headers"]["Authorization"] == "Bearer ghp_x"
    assert posts[0]["headers"]["X-GitHub-Api-Version"] == GITHUB_API_VERSION
    body = posts[0]["body"]["body"]
    marker, rest = body.split("\n", 1)
    assert marker == "<!-- bugsleuth:investigation acme/tiny#7 -->"
    assert rest.startswith(to_markdown(Diagnosis.model_validate(detail["diagnosis"])).rstrip())
    assert "**Summary.** average divides by zero on an empty list" in body
    suspects = body.split("**Suspects**", 1)[1].split("\n\n", 1)[0]
    assert "`app.py:4-6` — `average` (cause)" in suspects  # the validated prime suspect
    assert "ghost.py" not in suspects and "vanish" not in body  # the rejected claim is not a suspect
    assert "Dropped claims (1)" in body and "`ghost.py:99`: file does not exist" in body
    assert RAW_REPORT.strip() not in body and "# Diagnosis" not in body  # not the raw investigator report


def test_gitlab_issues_are_addressed_by_project_path_and_nothing_without_a_token(tmp_path):
    report = BugReport(title="t", source=Source.gitlab, url="https://gitlab.example/grp/sub/proj/-/issues/3")
    settings = Settings(data_dir=tmp_path, gitlab_token=SecretStr("glpat"), gitlab_api_url="http://127.0.0.1:1/api/v4")
    target = comment_target(settings, report)
    assert target.comments_url == "http://127.0.0.1:1/api/v4/projects/grp%2Fsub%2Fproj/issues/3/notes"
    assert target.comment_url(9) == target.comments_url + "/9"
    assert target.headers["PRIVATE-TOKEN"] == "glpat" and target.limit == GITLAB_LIMIT
    old_style = report.model_copy(update={"url": "https://gitlab.com/grp/proj/issues/4"})  # GitLab before /-/
    assert comment_target(settings, old_style).comments_url.endswith("/projects/grp%2Fproj/issues/4/notes")
    assert comment_target(Settings(data_dir=tmp_path), report) is None
    assert comment_target(settings, BugReport(title="t", source=Source.api, url=report.url)) is None


async def _investigate(svc, report: BugReport) -> int:
    """Store and queue one investigation of `report`, as the webhook does."""
    async with svc.runtime.db.session() as s:
        inv, _ = await store.create_investigation(
            s, report, ClassificationResult(label=Classification.crash, confidence=1, reason="t"),
            investigate=True, explorer="offline",
        )
    svc.runtime.jobs.committed()
    return inv


async def _is_commented(svc, inv: int) -> bool:
    async with svc.runtime.db.session() as s:
        return await s.scalar(select(Investigation.commented).where(Investigation.id == inv))


async def _commented(svc, inv: int, timeout: float = 20.0) -> str:
    """Wait for the comment-back note of `inv` in its trace (written after `done`) and return it."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        async with svc.runtime.db.session() as s:
            notes = [e.data.get("detail", "") for e in await store.trace_events(s, inv) if e.kind == "note"]
        found = [n for n in notes if n.startswith("comment-back:")]
        if found:
            return found[-1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no comment-back note for investigation {inv}")


async def _rerun(svc, inv: int) -> int:
    r = await svc.client.post(f"/api/investigations/{inv}/rerun", json={"extra_context": "again"})
    assert r.status_code == 202, r.text
    return r.json()["id"]


async def test_a_rerun_edits_the_comment_it_posted_before_found_past_the_first_page(base_settings, fixture_repo):
    path, _ = fixture_repo
    with fake_tracker() as fake:
        fake.seed("github:acme/tiny#7", [f"+1 from user {i}" for i in range(130)])  # our comment lands on page 2
        settings = base_settings(comment_back=True, github_token=SecretStr("ghp_x"), github_api_url=fake.url,
                                 public_url="https://bugsleuth.example")  # fmt: skip
        async with running_service(settings) as svc:
            await register(svc, "acme/tiny", path)
            first = await _investigate(svc, GITHUB_REPORT)
            await svc.wait_status(first, ("done",), timeout=30)
            assert (await _commented(svc, first)).startswith("comment-back: created github comment")
            for _ in range(2):
                again = await _rerun(svc, first)
                await svc.wait_status(again, ("done",), timeout=30)
                assert (await _commented(svc, again)).startswith("comment-back: updated github comment")
            assert await _is_commented(svc, again) is True
    bots = fake.bots("github:acme/tiny#7")
    assert len(bots) == 1 and len(fake.comments["github:acme/tiny#7"]) == 131
    assert f"https://bugsleuth.example/investigations/{again}" in bots[0]["body"]  # the latest run's page
    patches = [r for r in fake.requests if r["method"] == "PATCH"]
    assert len(patches) == 2 and patches[0]["path"] == f"/repos/acme/tiny/issues/comments/{bots[0]['id']}"
    assert any("page=2" in r["path"] for r in fake.requests if r["method"] == "GET")
    assert all(r["headers"]["X-GitHub-Api-Version"] == GITHUB_API_VERSION for r in fake.requests)


async def test_a_gitlab_rerun_edits_its_note_found_through_x_next_page(base_settings, fixture_repo):
    path, _ = fixture_repo
    report = BugReport(title="crash", body="ZeroDivisionError", source=Source.gitlab, repo="acme/tiny",
                       url="https://gitlab.com/grp/tiny/-/issues/3")  # fmt: skip
    with fake_tracker() as fake:
        fake.seed("gitlab:grp/tiny#3", [f"note {i}" for i in range(101)])
        settings = base_settings(comment_back=True, gitlab_token=SecretStr("glpat"), gitlab_api_url=f"{fake.url}/api/v4")
        async with running_service(settings) as svc:
            await register(svc, "acme/tiny", path)
            first = await _investigate(svc, report)
            await svc.wait_status(first, ("done",), timeout=30)
            await _commented(svc, first)
            again = await _rerun(svc, first)
            await svc.wait_status(again, ("done",), timeout=30)
            assert (await _commented(svc, again)).startswith("comment-back: updated gitlab comment")
    assert len(fake.bots("gitlab:grp/tiny#3")) == 1
    assert [r["method"] for r in fake.requests].count("PUT") == 1
    assert all({k.lower(): v for k, v in r["headers"].items()}["private-token"] == "glpat" for r in fake.requests)


async def test_a_tracker_outage_leaves_the_investigation_done_and_the_failure_recorded(base_settings, fixture_repo):
    path, _ = fixture_repo
    with fake_tracker() as fake:
        fake.fail_always = (503, {})
        settings = base_settings(comment_back=True, github_token=SecretStr("ghp_x"), github_api_url=fake.url,
                                 comment_timeout_s=3.0)  # fmt: skip
        async with running_service(settings) as svc:
            await register(svc, "acme/tiny", path)
            inv = await _investigate(svc, GITHUB_REPORT)
            detail = await svc.wait_status(inv, ("done",), timeout=30)
            note = await _commented(svc, inv)
            assert detail["status"] == "done" and detail["diagnosis"]["summary"]
            assert await _is_commented(svc, inv) is False
    assert note.startswith("comment-back: github unavailable: GET ") and "HTTP 503" in note
    assert 2 <= len(fake.requests) <= 5  # retried with backoff, within the budget
    assert not fake.comments


async def test_an_unreachable_tracker_is_given_up_within_the_budget(tmp_path):
    settings = Settings(data_dir=tmp_path, github_token=SecretStr("x"), github_api_url="http://127.0.0.1:9", comment_timeout_s=2.0)
    result = await post_diagnosis_comment(settings, GITHUB_REPORT, Diagnosis(summary="s"))
    assert result.action == "failed" and "ConnectError" in result.detail and result.attempts >= 2


def _settings(tmp_path, fake, **kw) -> Settings:
    return Settings(data_dir=tmp_path, github_token=SecretStr("x"), github_api_url=fake.url, **kw)


async def test_retry_after_is_honoured_on_a_secondary_rate_limit_and_then_the_comment_is_posted(tmp_path):
    with fake_tracker() as fake:
        fake.failures = [(429, {"Retry-After": "1"}), (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "0"})]
        result = await post_diagnosis_comment(_settings(tmp_path, fake), GITHUB_REPORT, Diagnosis(summary="s"))
    assert result.action == "created" and result.attempts == 5  # two refusals, who the token is, the listing, the post
    times = [r["t"] for r in fake.requests]
    assert times[1] - times[0] >= 0.95  # waited the second Retry-After asked for
    assert len(fake.bots("github:acme/tiny#7")) == 1


async def test_a_403_that_is_not_a_rate_limit_is_not_retried(tmp_path):
    with fake_tracker() as fake:
        fake.failures = [(403, {})]
        result = await post_diagnosis_comment(_settings(tmp_path, fake), GITHUB_REPORT, Diagnosis(summary="s"))
    assert (result.action, result.attempts) == ("failed", 1)
    assert result.detail.startswith("github refused: asking who the token is: HTTP 403")
    assert len(fake.requests) == 1


async def test_a_retry_after_longer_than_the_budget_gives_up_at_once(tmp_path):
    with fake_tracker() as fake:
        fake.failures = [(429, {"Retry-After": "3600"})]
        result = await post_diagnosis_comment(_settings(tmp_path, fake, comment_timeout_s=5), GITHUB_REPORT, Diagnosis(summary="s"))
    assert result.action == "failed" and "would pass the budget" in result.detail and len(fake.requests) == 1


def test_retry_delays_follow_the_headers():
    def answer(status, **headers):
        return httpx.Response(status, headers=headers)

    assert retry_delay(answer(200), 1) is None and retry_delay(answer(404), 1) is None and retry_delay(answer(422), 1) is None
    assert retry_delay(answer(503, **{"Retry-After": "7"}), 1) == 7.0
    assert retry_delay(answer(403, **{"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000"}), 1, now=990.0) == 11.0
    assert retry_delay(answer(403, **{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}), 1, now=1445412470.0) == 10.0
    assert 0 < retry_delay(answer(502), 3) <= 4 * BASE_DELAY_S
    assert retry_delay(answer(403), 1) is None and retry_delay(answer(429), 1) > 0


def test_a_body_longer_than_the_tracker_keeps_is_cut_with_the_marker_a_link_and_closed_code():
    big = Diagnosis(summary="word " * 40_000 + "```python\n" + "x = 1\n" * 20_000)
    body = comment_body(big, marker="<!-- bugsleuth:investigation a/b#1 -->", limit=GITHUB_LIMIT,
                        link="https://bugsleuth.example/investigations/5")  # fmt: skip
    assert len(body) <= GITHUB_LIMIT
    assert body.startswith("<!-- bugsleuth:investigation a/b#1 -->\n")
    assert "cut at 65,536 characters: the full diagnosis is on the dashboard: https://bugsleuth.example/investigations/5" in body
    assert body.endswith(FOOTER + " [Full diagnosis and trace](https://bugsleuth.example/investigations/5).")
    assert body.split("**[cut at")[0].count("```") % 2 == 0
    assert len(comment_body(big, limit=GITLAB_LIMIT)) < GITLAB_LIMIT and "cut at" not in comment_body(big, limit=GITLAB_LIMIT)


_GITLAB_EXTRACTOR = re.compile(
    r"(?P<code>^```.+?\n```$)|(?P<html>^<[^>]+?>\n.+?\n</[^>]+?>$)|(?P<quote>^>>>.+?\n>>>$)"
    r"|^/(?P<cmd>[a-z_]+)(?:[ ](?P<arg>[^\n]*))?(?:\s*\n|$)", re.S | re.M | re.I)
"""GitLab's `Gitlab::QuickActions::Extractor`: where in a note it reads commands (any word stands for a command)."""
HOSTILE = Diagnosis(
    summary="Crash in pricing.\n/close\n/assign @mallory",
    root_cause={"explanation": "Off by one, see `@property` and ask @all or @org/team; mail a@b.com.\r\n/label ~wontfix"
                               "\n\n```\n/close\n```\n\n````\n/lock\n````"},
)
"""A diagnosis whose text (a model's, steered by the report it read) spells quick actions and mentions."""


def _commands(body: str) -> list[str]:
    return [m["cmd"] for m in _GITLAB_EXTRACTOR.finditer(body.replace("\r", "")) if m["cmd"]]


def test_a_posted_diagnosis_runs_no_gitlab_quick_action_and_mentions_nobody():
    assert _commands(to_markdown(HOSTILE)) == ["close", "assign", "label", "lock"]
    body = comment_body(HOSTILE, marker="<!-- bugsleuth:investigation g/p#1 -->", limit=GITLAB_LIMIT)
    assert _commands(body) == []
    assert re.findall(r"(?<![\w.+\-/@`\u200b])@[A-Za-z]", body.replace("`@property`", "")) == []
    assert "@\u200bmallory" in body and "@\u200ball" in body and "@\u200borg/team" in body
    assert "`@property`" in body and "a@b.com" in body  # code spans and addresses as written
    assert "\\/close\n\\/assign" in body and "```\n /close\n```" in body and "````\n /lock\n````" in body
    assert re.findall(r"^/\w", body, re.M) == []  # no line any bot reads as a command, fenced or not
    assert body.startswith("<!-- bugsleuth:investigation g/p#1 -->\n")
    assert inert("no commands, no mentions: `a/b` and x/y") == "no commands, no mentions: `a/b` and x/y"


async def test_the_note_gitlab_receives_is_the_inert_one(tmp_path):
    report = BugReport(title="t", source=Source.gitlab, url="https://gitlab.com/grp/tiny/-/issues/3")
    with fake_tracker() as fake:
        settings = Settings(data_dir=tmp_path, gitlab_token=SecretStr("glpat"), gitlab_api_url=f"{fake.url}/api/v4")
        result = await post_diagnosis_comment(settings, report, HOSTILE)
        posted = [r["body"]["body"] for r in fake.requests if r["method"] == "POST"]
    assert result.action == "created" and len(posted) == 1
    assert _commands(posted[0]) == [] and "@mallory" not in posted[0]


@pytest.mark.parametrize("token", ["ghp_x", "ghs_installation"])
async def test_a_comment_someone_else_wrote_with_the_marker_is_never_overwritten(tmp_path, token):
    marker = "<!-- bugsleuth:investigation acme/tiny#7 -->"
    with fake_tracker() as fake:
        fake.seed("github:acme/tiny#7", [f"{marker}\nmy own notes, which a rerun must not replace"])
        settings = Settings(data_dir=tmp_path, github_token=SecretStr(token), github_api_url=fake.url)
        first = await post_diagnosis_comment(settings, GITHUB_REPORT, Diagnosis(summary="first"))
        second = await post_diagnosis_comment(settings, GITHUB_REPORT, Diagnosis(summary="second"))
    assert (first.action, second.action) == ("created", "updated") and second.comment_id == first.comment_id
    comments = fake.comments["github:acme/tiny#7"]
    assert comments[0]["body"].endswith("my own notes, which a rerun must not replace")
    assert len(comments) == 2 and "**Summary.** second" in comments[1]["body"]


async def test_a_gitlab_note_someone_else_wrote_with_the_marker_is_never_overwritten(tmp_path):
    report = BugReport(title="t", source=Source.gitlab, url="https://gitlab.com/grp/tiny/-/issues/3")
    with fake_tracker() as fake:
        fake.seed("gitlab:grp/tiny#3", ["<!-- bugsleuth:investigation grp/tiny#3 -->\nalice's note"])
        settings = Settings(data_dir=tmp_path, gitlab_token=SecretStr("glpat"), gitlab_api_url=f"{fake.url}/api/v4")
        result = await post_diagnosis_comment(settings, report, Diagnosis(summary="s"))
    assert result.action == "created" and fake.comments["gitlab:grp/tiny#3"][0]["body"].endswith("alice's note")


async def test_a_page_linked_on_another_origin_is_not_followed_so_the_token_never_goes_there(tmp_path):
    with fake_tracker() as fake, fake_tracker() as elsewhere:
        fake.seed("github:acme/tiny#7", [f"comment {i}" for i in range(150)])  # two pages of 100
        fake.link_base = elsewhere.url
        result = await post_diagnosis_comment(_settings(tmp_path, fake), GITHUB_REPORT, Diagnosis(summary="s"))
    assert result.action == "created" and len(fake.bots("github:acme/tiny#7")) == 1
    assert elsewhere.requests == []  # before: GET with `Authorization: Bearer <token>` on the other host


async def test_listed_comments_whose_author_is_not_an_object_are_someone_elses(tmp_path):
    with fake_tracker() as fake:
        fake.seed("github:acme/tiny#7", ["<!-- bugsleuth:investigation acme/tiny#7 -->\nodd"], author="ghost")
        result = await post_diagnosis_comment(_settings(tmp_path, fake), GITHUB_REPORT, Diagnosis(summary="s"))
    assert result.action == "created" and len(fake.comments["github:acme/tiny#7"]) == 2  # before: AttributeError

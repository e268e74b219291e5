"""The 27 real webhook payloads of `../shared/realclient/` (GitHub from octokit/webhooks; GitLab, Sentry and Jira
from zulip's captured fixtures), each signed the way its provider signs and posted to the real app over HTTP.

Every issue-opening delivery becomes an investigation of the right repository with the right title and body;
comments, closes, status changes, pings and resolved issues are acknowledged as ignored with a reason; nothing
answers 5xx. The rows come from the README's tables (file and the event header a real delivery carries)."""

from __future__ import annotations

import hashlib
import hmac
import re
import uuid
from dataclasses import dataclass

import pytest
from pydantic import SecretStr

from app.webhooks import parse_delivery
from repomap.focus import Focus
from tests.app._realclient import REALCLIENT, ROOT
from tests.app._service_fixtures import base_settings, fixture_repo, register, running_service  # noqa: F401

SECRET = "real-delivery-secret"
pytestmark = pytest.mark.skipif(
    REALCLIENT is None, reason=f"the real payloads are absent: no shared/realclient/README.md beside {ROOT}"
)


@dataclass(frozen=True)
class Delivery:
    """One row of the README: the payload file and the event header its real delivery carries."""

    provider: str
    file: str
    header: tuple[str, str] | None

    @property
    def body(self) -> bytes:
        assert REALCLIENT is not None
        return (REALCLIENT / self.file).read_bytes()


def readme_rows() -> list[Delivery]:
    """The payload tables of the README: `| provider/file | source or commit | header | body |`."""
    if REALCLIENT is None:
        return []
    rows = []
    for line in (REALCLIENT / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not re.fullmatch(r"(github|gitlab|sentry|jira)/[\w.-]+\.json", cells[0]):
            continue
        header = re.match(r"`([\w-]+): ([^`]+)`", cells[2])
        rows.append(Delivery(cells[0].split("/")[0], cells[0], (header[1], header[2]) if header else None))
    return rows


def hmac_hex(body: bytes) -> str:
    return hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


def signed_request(d: Delivery) -> tuple[str, dict[str, str]]:
    """The URL and headers of the delivery as its provider sends it, signed with SECRET."""
    body = d.body
    headers = {"Content-Type": "application/json"}
    if d.header:
        headers[d.header[0]] = d.header[1]
    url = f"/webhooks/{d.provider}"
    if d.provider == "github":
        headers |= {"X-GitHub-Delivery": str(uuid.uuid4()), "X-Hub-Signature-256": f"sha256={hmac_hex(body)}"}
    elif d.provider == "gitlab":
        headers |= {"X-Gitlab-Event-UUID": str(uuid.uuid4()), "X-Gitlab-Token": SECRET}
    elif d.provider == "sentry":
        url += "?repo=acme/shop"
        if d.header:  # the integration platform signs; the legacy WebHooks plugin can only carry a URL
            headers |= {"Request-ID": str(uuid.uuid4()), "Sentry-Hook-Signature": hmac_hex(body)}
        else:
            url += f"&secret={SECRET}"
    else:  # Jira Cloud webhook with a secret
        url += "?repo=acme/shop"
        headers |= {"X-Atlassian-Webhook-Identifier": str(uuid.uuid4()), "X-Hub-Signature": f"sha256={hmac_hex(body)}"}
    return url, headers


@dataclass(frozen=True)
class Accepted:
    repo: str
    title: str
    body: str | tuple[str, ...]
    """The exact body, or fragments it must contain (Sentry bodies are built from the event)."""
    absent: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ignored:
    reason: str
    """The reason starts with this."""


HELLO = "Codertocat/Hello-World"
SPELLING = "Spelling error in the README file"
EXPECTED: dict[str, Accepted | Ignored] = {
    "github/opened.payload.json": Accepted(HELLO, SPELLING, "It looks like you accidently spelled 'commit' with two 't's."),
    "github/reopened.payload.json": Accepted(HELLO, SPELLING, ""),
    "github/labeled.payload.json": Accepted(HELLO, SPELLING, "It looks like you accidently spelled 'commit' with two 't's."),
    "github/edited.payload.json": Ignored("edited without a change to the title or body"),
    "github/created.payload.json": Ignored("comment:"),
    "github/payload.json": Ignored("ping:"),
    "gitlab/issue_hook__issue_created_with_two_assignees.json": Accepted("adambirds/zulip-gitlab-test", "Zulip Test Issue 2", "Zulip Test Issue 2"),
    "gitlab/issue_hook__issue_opened_with_null_description.json": Accepted("eeshangarg/my-awesome-project", "Issue without description", ""),
    "gitlab/issue_created_without_assignee.json": Accepted("tomaszkolek0/my-awesome-project", "Issue title", "Issue description"),
    "gitlab/issue_hook__issue_reopened.json": Accepted("tomaszkolek0/my-awesome-project", "Issue title_new", "Issue description"),
    "gitlab/issue_hook__incident_created.json": Accepted("sathwikshetty33-group/mVc", "Testing", "Zulip Test"),
    "gitlab/issue_hook__issue_closed.json": Ignored("closed:"),
    "gitlab/note_hook__issue_note.json": Ignored("comment:"),
    "sentry/webhook_event_for_exception_python.json": Accepted("acme/shop", "ValueError: new sentry error.", (
        'Traceback (most recent call last):\n  File "/home/user/software/bar/bar-foo/data/trigger-exception.py", line 10, in <module>\n'
        '    raise ValueError("new sentry error.")\nValueError: new sentry error.',
    )),
    "sentry/webhook_event_for_exception_javascript.json": Accepted("acme/shop", 'TypeError: can\'t access property "bar", x.foo is undefined', (
        'TypeError: can\'t access property "bar", x.foo is undefined\n    at debugger eval code:3',
    )),
    "sentry/event_for_exception_python.json": Accepted("acme/shop", "Exception: Custom exception!", (
        'File "/home/hemanth/Desktop/sentry/trigger-exception.py", line 7, in <module>\n    raise Exception("Custom exception!")',
    )),
    "sentry/event_for_exception_node.json": Accepted("acme/shop", "Error: Sample error from node.", (
        "Error: Sample error from node.\n    at null.<anonymous> (/home/hemanth/Desktop/sentry/trigger-exception.js:11:27)\n",
    )),
    "sentry/event_for_exception_golang.json": Accepted("acme/shop", '*url.Error: Get "bad_url": unsupported protocol scheme ""', (
        '*url.Error: Get "bad_url": unsupported protocol scheme ""\n\ngoroutine 1 [running]:\nmain.main()\n'
        "\t/home/hemanth/Desktop/sentry/trigger-exception.go:45",
    ), absent=("Traceback (most recent call last)", 'line 45, in main')),
    "sentry/sample_event_through_alert.json": Accepted("acme/shop", "This is an example Python exception", (
        'File "/home/ubuntu/.virtualenvs/getsentry/src/raven/raven/base.py", line 303, in build_msg',
        'File "/home/ubuntu/.virtualenvs/getsentry/src/raven/raven/scripts/runner.py", line 112, in main\n'
        "    send_test_message(client, opts.__dict__)",
    )),
    "sentry/issue_created_for_exception.json": Accepted("acme/shop", "Exception: Custom exception!", ("Culprit: __main__ in <module>",)),
    "sentry/issue_resolved.json": Ignored("closed:"),
    "jira/created_v2.json": Accepted("acme/shop", "New bug with hook", "Fix me please"),
    "jira/issue_created.json": Accepted("acme/shop", "New bug with hook", "Fix me please"),
    "jira/created_with_unicode_v2.json": Accepted("acme/shop", "New bug with à hook", "Fix me please"),
    "jira/issue_created_with_custom_fields.json": Accepted("acme/shop", "This is test files", ""),
    "jira/comment_created.json": Ignored("comment:"),
    "jira/issue_updated__status.json": Ignored("updated without a change to the summary, description or labels"),
}  # fmt: skip

ROWS = readme_rows()


def test_the_readme_lists_the_27_payloads_and_each_has_an_expectation():
    assert len(ROWS) == 27
    assert {d.file for d in ROWS} == set(EXPECTED)
    assert all((REALCLIENT / d.file).is_file() for d in ROWS)


@pytest.mark.parametrize("delivery", ROWS, ids=[d.file for d in ROWS])
async def test_a_real_delivery_is_investigated_or_ignored_with_a_reason(delivery, base_settings, fixture_repo):  # noqa: F811
    expected = EXPECTED[delivery.file]
    path, _ = fixture_repo
    secrets = {f"{p}_webhook_secret": SecretStr(SECRET) for p in ("github", "gitlab", "sentry", "jira")}
    async with running_service(base_settings(**secrets)) as svc:
        if isinstance(expected, Accepted):
            await register(svc, expected.repo, path)
        url, headers = signed_request(delivery)
        r = await svc.client.post(url, content=delivery.body, headers=headers)
        assert r.status_code < 500 and r.status_code == 202, r.text
        answer = r.json()
        if isinstance(expected, Ignored):
            assert answer["outcome"] == "ignored", answer
            assert answer["reason"].startswith(expected.reason), answer
            assert (await svc.client.get("/api/investigations")).json()["total"] == 0
            return
        assert answer["outcome"] == "accepted", answer
        detail = (await svc.client.get(f"/api/investigations/{answer['id']}")).json()
        assert (detail["repo"], detail["report"]["title"]) == (expected.repo, expected.title)
        body = detail["report"]["body"]
        if isinstance(expected.body, str):
            assert body == expected.body
        else:
            for fragment in expected.body:
                assert fragment in body
        for fragment in expected.absent:
            assert fragment not in body


SENTRY_FRAMES = {
    "sentry/event_for_exception_golang.json": ("go", "/home/hemanth/Desktop/sentry/trigger-exception.go", 45, "main.main"),
    "sentry/event_for_exception_node.json": ("javascript", "/home/hemanth/Desktop/sentry/trigger-exception.js", 11, "null.<anonymous>"),
    "sentry/sample_event_through_alert.json": ("python", "/home/ubuntu/.virtualenvs/getsentry/src/raven/raven/scripts/runner.py", 112, "main"),
    "sentry/event_for_exception_python.json": ("python", "/home/hemanth/Desktop/sentry/trigger-exception.py", 7, "<module>"),
}  # fmt: skip


@pytest.mark.parametrize("file", sorted(SENTRY_FRAMES))
def test_the_focus_reads_the_frames_of_a_real_sentry_event_as_its_runtime_printed_them(file):
    body = (REALCLIENT / file).read_bytes()
    resource = "issue" if "issue_" in file else "event_alert"
    headers = {"Sentry-Hook-Resource": resource, "Sentry-Hook-Signature": hmac_hex(body)}
    report = parse_delivery("sentry", headers, body, SECRET, query={"repo": "acme/shop"}).report
    language, path, line, function = SENTRY_FRAMES[file]
    frames = Focus.from_text(report.body).frames
    assert any((f.language, f.path, f.line, f.function) == (language, path, line, function) for f in frames), frames

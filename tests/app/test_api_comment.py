"""Comment-back: the diagnosis is posted on the originating issue, against a fake tracker on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import SecretStr

from app import store
from app.comment import comment_target
from app.config import Settings
from funnel.report.export import to_markdown
from schemas import BugReport, Classification, ClassificationResult, Diagnosis, Source
from schemas.diagnosis import RejectedClaim
from tests.app._service_fixtures import (  # noqa: F401
    Result,
    StubInvestigator,
    base_settings,
    fixture_repo,
    register,
    running_service,
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


@pytest.fixture
def fake_tracker():
    """An HTTP server on loopback that records every POST."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server API
            length = int(self.headers.get("content-length", 0))
            received.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(self.rfile.read(length))})
            self.send_response(201)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", received
    server.shutdown()
    server.server_close()


async def test_the_validated_diagnosis_is_posted_on_the_github_issue_when_enabled(base_settings, fixture_repo, fake_tracker):
    path, _ = fixture_repo
    url, received = fake_tracker
    settings = base_settings(comment_back=True, github_token=SecretStr("ghp_x"), github_api_url=url)
    stub = ValidatedStub()
    async with running_service(settings, stub) as svc:
        await register(svc, "acme/tiny", path)
        report = BugReport(
            title="crash", body="ZeroDivisionError", source=Source.github, repo="acme/tiny",
            url="https://github.com/acme/tiny/issues/7",
        )
        async with svc.runtime.db.session() as s:
            inv, _ = await store.create_investigation(
                s, report, ClassificationResult(label=Classification.crash, confidence=1, reason="t"),
                investigate=True, explorer="offline",
            )
        svc.runtime.jobs.committed()
        detail = await svc.wait_status(inv, ("done",))
        for _ in range(100):
            if received:
                break
            import asyncio

            await asyncio.sleep(0.05)
    assert received[0]["path"] == "/repos/acme/tiny/issues/7/comments"
    assert received[0]["headers"]["Authorization"] == "Bearer ghp_x"
    body = received[0]["body"]["body"]
    assert body.startswith(to_markdown(Diagnosis.model_validate(detail["diagnosis"])).rstrip())
    assert "**Summary.** average divides by zero on an empty list" in body
    suspects = body.split("**Suspects**", 1)[1].split("\n\n", 1)[0]
    assert "`app.py:4-6` — `average` (cause)" in suspects  # the validated prime suspect
    assert "ghost.py" not in suspects and "vanish" not in body  # the rejected claim is not a suspect
    assert "Dropped claims (1)" in body and "`ghost.py:99`: file does not exist" in body
    assert RAW_REPORT.strip() not in body and "# Diagnosis" not in body  # not the raw investigator report


def test_gitlab_issues_are_addressed_by_project_path_and_nothing_without_a_token(tmp_path):
    report = BugReport(title="t", source=Source.gitlab, url="https://gitlab.example/grp/sub/proj/-/issues/3")
    settings = Settings(data_dir=tmp_path, gitlab_token=SecretStr("glpat"), gitlab_api_url="http://127.0.0.1:1/api/v4")
    url, headers = comment_target(settings, report)
    assert url == "http://127.0.0.1:1/api/v4/projects/grp%2Fsub%2Fproj/issues/3/notes"
    assert headers == {"PRIVATE-TOKEN": "glpat"}
    assert comment_target(Settings(data_dir=tmp_path), report) is None
    assert comment_target(settings, BugReport(title="t", source=Source.api, url=report.url)) is None

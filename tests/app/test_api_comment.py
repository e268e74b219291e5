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
from schemas import BugReport, Classification, ClassificationResult, Source
from tests.app._service_fixtures import base_settings, fixture_repo, register, running_service  # noqa: F401


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


async def test_the_diagnosis_is_posted_on_the_github_issue_when_enabled(base_settings, fixture_repo, fake_tracker):
    path, _ = fixture_repo
    url, received = fake_tracker
    settings = base_settings(comment_back=True, github_token=SecretStr("ghp_x"), github_api_url=url)
    async with running_service(settings) as svc:
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
        await svc.wait_status(inv, ("done",))
        for _ in range(100):
            if received:
                break
            import asyncio

            await asyncio.sleep(0.05)
    assert received[0]["path"] == "/repos/acme/tiny/issues/7/comments"
    assert received[0]["headers"]["Authorization"] == "Bearer ghp_x"
    assert "average divides by zero" in received[0]["body"]["body"]


def test_gitlab_issues_are_addressed_by_project_path_and_nothing_without_a_token(tmp_path):
    report = BugReport(title="t", source=Source.gitlab, url="https://gitlab.example/grp/sub/proj/-/issues/3")
    settings = Settings(data_dir=tmp_path, gitlab_token=SecretStr("glpat"), gitlab_api_url="http://127.0.0.1:1/api/v4")
    url, headers = comment_target(settings, report)
    assert url == "http://127.0.0.1:1/api/v4/projects/grp%2Fsub%2Fproj/issues/3/notes"
    assert headers == {"PRIVATE-TOKEN": "glpat"}
    assert comment_target(Settings(data_dir=tmp_path), report) is None
    assert comment_target(settings, BugReport(title="t", source=Source.api, url=report.url)) is None

"""The dashboard pages against the real app (`create_app`, SQLite, in-process jobs) through Starlette's TestClient.

The investigation itself is a small scripted stand-in here (these tests are about pages, forms and access);
tests/app/test_dashboard_browser.py runs the real offline explorer in a real browser.
"""

from __future__ import annotations

import re
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from starlette.testclient import TestClient

from app import cookies, security, service, store
from app.repos import tree_path
from app.config import Settings
from app.main import create_app
from schemas import Diagnosis
from schemas.diagnosis import AffectedFile, ComplexityRating, ProposedChange, RejectedClaim, RiskRating, RootCause, RunStats
from schemas.enums import Complexity, Phase, Risk, StopReason
from schemas.trace import PhaseChangeEvent, RequestEvent, StartEvent, StopEvent, ToolCallEvent

STATS_PY = '''"""Small statistics helpers."""


def total(values):
    """Sum of the values."""
    return sum(values)


def mean(values):
    """Arithmetic mean; the caller must pass a non-empty list."""
    count = len(values)
    return total(values) / count  # fails on an empty list


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle]
'''


def make_fixture_repo(root: Path) -> tuple[Path, str]:
    """A tiny git repository with one buggy module; returns its path and commit."""
    repo = root / "calc-repo"
    (repo / "calc").mkdir(parents=True)
    (repo / "calc" / "__init__.py").write_text("from calc.stats import mean, median, total\n")
    (repo / "calc" / "stats.py").write_text(STATS_PY)
    (repo / "README.md").write_text("# calc\n\nTiny statistics helpers.\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()
    return repo, commit


async def scripted_investigation(report, root, *, commit=None, on_event=None, cancel=None, **_: Any):
    """A stand-in for `funnel.investigate`: emits a short trace and cites calc/stats.py like a real run would."""
    events = [
        StartEvent(explorer="scripted", report_title=report.title, root=str(root), commit=commit),
        RequestEvent(input_tokens=900, output_tokens=40, latency_ms=12.0),
        ToolCallEvent(tool="search", args={"pattern": "def mean"}, result_chars=60,
                      result_preview="calc/stats.py:10: def mean(values):", latency_ms=4.0),
        ToolCallEvent(tool="read_range", args={"path": "calc/nope.py"}, error="no such file: calc/nope.py"),
        PhaseChangeEvent(from_phase=Phase.explore, to_phase=Phase.deep_dive, reason="suspects: calc/stats.py", phase=Phase.explore),
        ToolCallEvent(tool="read_range", args={"path": "calc/stats.py", "start": 10, "end": 13}, phase=Phase.deep_dive,
                      result_chars=200, result_preview="10 def mean(values):", latency_ms=2.5),
        PhaseChangeEvent(from_phase=Phase.deep_dive, to_phase=Phase.output, reason="done reading", phase=Phase.deep_dive),
        StopEvent(reason=StopReason.done, phase=Phase.output),
    ]
    for event in events:
        if on_event:
            on_event(event)
    diagnosis = Diagnosis(
        summary="mean() divides by zero when the list is empty.",
        root_cause=RootCause(explanation="`mean` divides by `len(values)` without checking for an empty list.",
                             evidence=["calc/stats.py:13 divides by count"]),
        affected_files=[
            AffectedFile(path="calc/stats.py", line_start=12, line_end=13, symbol="mean",
                         evidence="return total(values) / count"),
            AffectedFile(path="calc/stats.py", line_start=4, line_end=6, symbol="total", role="related"),
        ],
        proposed_changes=[ProposedChange(path="calc/stats.py", symbol="mean", description="Raise a clear error on empty input.",
                                         diff="@@ -12,2 +12,4 @@\n     count = len(values)\n+    if not count:\n+        raise ValueError('mean of empty list')\n     return total(values) / count")],
        complexity=ComplexityRating(level=Complexity.trivial, reason="one guard clause"),
        risk=RiskRating(level=Risk.low, reason="only the error case changes"),
        confidence=0.82,
        open_questions=["Which Python version do you run?"],
        rejected=[RejectedClaim(kind="affected_file", claim={"path": "calc/nope.py", "line_start": 1}, reason="file does not exist")],
        stats=RunStats(tool_calls=3, input_tokens=900, output_tokens=40, duration_s=0.4, explorer="scripted", commit=commit),
    )
    return SimpleNamespace(diagnosis=diagnosis, report_markdown="# Report\n\nmean divides by zero", events=events)


@contextmanager
def dashboard_client(tmp_path: Path, *, jobs: str = "local", **overrides: Any):
    """The real app with a registered fixture repository, served in-process over https://testserver."""
    repo, commit = make_fixture_repo(tmp_path)
    overrides.setdefault("allowed_hosts", ["testserver"])  # the name Starlette's TestClient sends
    settings = Settings(data_dir=tmp_path / "data", register_self=False, job_backend=jobs, log_json=False,
                        log_level="WARNING", **overrides)
    app = create_app(settings, investigate_fn=scripted_investigation)
    with TestClient(app, base_url="https://testserver") as client:
        runtime = app.state.runtime
        client.portal.call(service.register_repository, runtime, "acme/calc", str(repo))
        client.runtime = runtime  # type: ignore[attr-defined]
        client.commit = commit  # type: ignore[attr-defined]
        yield client


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "page has no CSRF field"
    return match.group(1)


def submit(client: TestClient, title: str, body: str = "", repo: str = "acme/calc") -> int:
    page = client.get("/reports/new")
    response = client.post("/reports/new", data={"csrf_token": csrf_of(page.text), "repo": repo, "title": title,
                                                 "body": body, "ref": ""}, follow_redirects=False)
    assert response.status_code == 303, response.text
    match = re.match(r"/investigations/(\d+)", response.headers["location"])
    assert match
    return int(match.group(1))


def wait_terminal(client: TestClient, investigation_id: int, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(f"/investigations/{investigation_id}/status").json()
        if status["terminal"]:
            return status["status"]
        time.sleep(0.1)
    raise AssertionError(f"investigation {investigation_id} did not finish")


CRASH_BODY = "Traceback (most recent call last):\n  File \"app.py\", line 3\n    mean([])\nZeroDivisionError: division by zero"


def test_a_submitted_report_ends_on_a_page_with_its_diagnosis_code_and_timeline(tmp_path):
    with dashboard_client(tmp_path) as client:
        inv = submit(client, "mean() crashes on empty list", CRASH_BODY)
        assert wait_terminal(client, inv) == "done"
        page = client.get(f"/investigations/{inv}")
        html = page.text
        assert page.status_code == 200
        assert "divides by <code>len(values)</code> without checking" in html
        # the excerpt is read from the repository at the commit: line numbers, cited lines, highlighting
        assert '<tr class="cited"><td class="ln">12</td>' in html
        assert '<td class="ln">9</td>' in html  # context above the cited range
        assert '<span class="tok-keyword">return</span>' in html
        assert '<span class="tok-comment"># fails on an empty list</span>' in html
        assert "View at commit" not in html  # a local path has no web URL
        # ratings, proposed diff, questions, rejected claims, timeline with arguments and errors
        assert "level-trivial" in html and "risk-low" in html and "82%" in html
        assert '<span class="add">+    if not count:</span>' in html
        assert "Which Python version do you run?" in html
        assert "file does not exist" in html
        assert "pattern=&#39;def mean&#39;" in html
        assert "no such file: calc/nope.py" in html
        assert "phase-deep_dive" in html and "stopped: done" in html
        # the list shows it with its prime suspect and counters
        listing = client.get("/").text
        assert "calc/stats.py:12" in listing and f'data-id="{inv}"' in listing and "82%" in listing


def test_report_text_with_html_is_shown_as_text_everywhere(tmp_path):
    title = "<script>alert('t')</script> crash"
    body = "<img src=x onerror=alert(1)> and </pre><b>bold</b>"
    with dashboard_client(tmp_path, jobs="none") as client:
        inv = submit(client, title, body)
        for url in (f"/investigations/{inv}", "/", "/partials/investigations"):
            html = client.get(url).text
            assert "<script>alert" not in html and "<img src=x" not in html and "<b>bold" not in html
            assert "&lt;script&gt;alert(&#39;t&#39;)&lt;/script&gt;" in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in client.get(f"/investigations/{inv}").text


def test_every_page_sends_a_strict_content_security_policy_and_no_inline_code(tmp_path):
    with dashboard_client(tmp_path) as client:
        inv = submit(client, "mean() crashes", CRASH_BODY)
        wait_terminal(client, inv)
        for url in ("/", "/reports/new", "/stats", f"/investigations/{inv}", "/login", "/static/dashboard.css",
                    "/api/investigations", "/nope"):
            response = client.get(url)
            assert response.headers["content-security-policy"] == security.CONTENT_SECURITY_POLICY, url
            assert response.headers["x-content-type-options"] == "nosniff"
            if response.headers.get("content-type", "").startswith("text/html"):
                html = response.text
                assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), url
                assert not re.search(r"\sstyle=", html), url
                assert not re.search(r"\son[a-z]+=", html), url
                assert "http://" not in html.replace("http://www.w3.org", "") and "//cdn" not in html, url


def test_a_form_post_without_the_sessions_csrf_token_is_refused(tmp_path):
    with dashboard_client(tmp_path) as client:
        inv = submit(client, "mean() crashes", CRASH_BODY)
        wait_terminal(client, inv)
        refused = client.post(f"/investigations/{inv}/feedback", data={"verdict": "wrong", "csrf_token": "forged"})
        assert refused.status_code == 403
        other = TestClient(client.app, base_url="https://testserver")
        foreign_token = csrf_of(other.get("/login").text)  # valid for another session, not this one
        refused = client.post(f"/investigations/{inv}/feedback", data={"verdict": "wrong", "csrf_token": foreign_token})
        assert refused.status_code == 403
        assert "Feedback given" not in client.get(f"/investigations/{inv}").text


def test_feedback_is_saved_shown_and_counted_in_the_stats(tmp_path):
    with dashboard_client(tmp_path) as client:
        inv = submit(client, "mean() crashes", CRASH_BODY)
        wait_terminal(client, inv)
        token = csrf_of(client.get(f"/investigations/{inv}").text)
        saved = client.post(f"/investigations/{inv}/feedback", data={"verdict": "partly", "note": "right file, <wrong> line",
                                                                     "csrf_token": token}, follow_redirects=False)
        assert saved.status_code == 303
        html = client.get(saved.headers["location"]).text
        assert "verdict-partly" in html and "right file, &lt;wrong&gt; line" in html
        stats = client.get("/stats").text
        assert stats.count("<svg") == 4
        assert "1 feedback verdict." in stats
        assert "50%" in stats  # partly counts one half on the accuracy line


def test_a_post_from_another_origin_is_refused(tmp_path):
    with dashboard_client(tmp_path, jobs="none") as client:
        inv = submit(client, "mean() crashes")
        token = csrf_of(client.get(f"/investigations/{inv}").text)
        response = client.post(f"/investigations/{inv}/cancel", data={"csrf_token": token},
                               headers={"Origin": "https://evil.example"})
        assert response.status_code == 403
        assert client.get(f"/investigations/{inv}/status").json()["status"] == "queued"


def test_cancel_and_rerun_from_the_page(tmp_path):
    with dashboard_client(tmp_path, jobs="none") as client:
        inv = submit(client, "mean() crashes")
        token = csrf_of(client.get(f"/investigations/{inv}").text)
        done = client.post(f"/investigations/{inv}/cancel", data={"csrf_token": token}, follow_redirects=False)
        assert done.status_code == 303 and "msg=cancelled" in done.headers["location"]
        assert client.get(f"/investigations/{inv}/status").json() == {"status": "cancelled", "terminal": True, "events": 0}
        rerun = client.post(f"/investigations/{inv}/rerun", data={"csrf_token": token, "extra_context": "look at mean()"},
                            follow_redirects=False)
        new_id = int(rerun.headers["location"].split("/")[2].split("?")[0])
        assert new_id != inv
        html = client.get(f"/investigations/{new_id}").text
        assert f'href="/investigations/{inv}"' in html and "look at mean()" in html
        original = client.get(f"/investigations/{inv}").text
        assert f'<a href="/investigations/{new_id}">#{new_id}</a>' in original  # the original links to its rerun


def test_the_list_filters_searches_the_report_text_and_pages(tmp_path, monkeypatch):
    monkeypatch.setattr("app.dashboard.routes.PAGE_SIZE", 2)
    with dashboard_client(tmp_path, jobs="none") as client:
        ids = [submit(client, f"report {n}", f"body mentions token{n}") for n in range(5)]
        page = client.get("/?q=token3").text
        assert f'data-id="{ids[3]}"' in page and f'data-id="{ids[2]}"' not in page
        assert "1 investigation match the filters" in page or "1 investigation matches the filters" in page
        first = client.get("/").text
        assert f'data-id="{ids[4]}"' in first and f'data-id="{ids[2]}"' not in first and "Page 1 of 3" in first
        third = client.get("/?page=3").text
        assert f'data-id="{ids[0]}"' in third
        none = client.get("/?status=done").text
        assert "No investigations yet" in none
        partial = client.get("/partials/investigations?q=token")
        assert partial.headers["x-total-count"] == "5" and "<tr" in partial.text and "<html" not in partial.text


def test_an_unknown_investigation_is_a_friendly_404(tmp_path):
    with dashboard_client(tmp_path, jobs="none") as client:
        response = client.get("/investigations/999")
        assert response.status_code == 404 and "There is no investigation #999" in response.text
        beyond = 10**20  # past any row id: its lookup raised OverflowError, a 500
        assert "There is no investigation #100000000000000000000" in client.get(f"/investigations/{beyond}").text
        token = csrf_of(client.get("/reports/new").text)
        codes = [client.get(f"/investigations/{beyond}/{part}").status_code for part in ("timeline", "status")]
        codes += [client.post(f"/investigations/{beyond}/{action}", data={"csrf_token": token, "verdict": "wrong"},
                              follow_redirects=False).status_code for action in ("cancel", "rerun", "feedback")]
        assert all(code < 500 for code in codes), codes


def test_static_files_are_served_and_nothing_else(tmp_path):
    with dashboard_client(tmp_path, jobs="none") as client:
        assert client.get("/static/dashboard.js").headers["content-type"].startswith("text/javascript")
        assert client.get("/static/..%2Fsecurity.py").status_code == 404
        assert client.get("/static/index.html").status_code == 404


def test_the_report_form_explains_what_is_missing(tmp_path):
    with dashboard_client(tmp_path, jobs="none") as client:
        token = csrf_of(client.get("/reports/new").text)
        response = client.post("/reports/new", data={"csrf_token": token, "repo": "acme/other", "title": "", "body": ""})
        assert response.status_code == 422
        assert "Write a title or paste the report." in response.text
        assert "Pick one of the registered repositories (acme/calc)" in response.text


# ---------------------------------------------------------------------------------------------- access


def test_beyond_loopback_every_page_and_api_read_needs_the_token(tmp_path):
    with dashboard_client(tmp_path, jobs="none", host="0.0.0.0", api_token="s3cret-token-long-enough") as client:
        page = client.get("/stats", headers={"Accept": "text/html,*/*"}, follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"] == "/login?next=%2Fstats"
        api = client.get("/api/investigations")
        assert api.status_code == 401 and api.headers["www-authenticate"] == "Bearer"
        assert client.get("/api/investigations", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/api/investigations", headers={"Authorization": "Bearer s3cret-token-long-enough"}).status_code == 200
        assert client.get("/static/dashboard.css").status_code == 200  # the login page needs its styles
        assert client.get("/investigations/1/timeline").status_code in (303, 401)


def test_login_sets_a_strict_http_only_secure_session_cookie(tmp_path):
    with dashboard_client(tmp_path, jobs="none", host="0.0.0.0", api_token="s3cret-token-long-enough") as client:
        login = client.get("/login?next=/stats")
        token = csrf_of(login.text)
        wrong = client.post("/login", data={"csrf_token": token, "token": "nope", "next": "/stats"})
        assert wrong.status_code == 401 and "That token is not right." in wrong.text
        ok = client.post("/login", data={"csrf_token": token, "token": "s3cret-token-long-enough", "next": "/stats"},
                         follow_redirects=False)
        assert ok.status_code == 303 and ok.headers["location"] == "/stats"
        cookie = ok.headers["set-cookie"]
        assert cookie.startswith(f"{cookies.SESSION_COOKIE}=") and "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie and "Secure" in cookie
        assert client.get("/stats").status_code == 200
        assert client.get("/api/investigations").status_code == 200  # the session works for API reads too
        # the session id changed at login, so the pre-login CSRF token is dead
        inv = submit(client, "mean() crashes")
        assert client.post(f"/investigations/{inv}/cancel", data={"csrf_token": token}).status_code == 403
        logout = client.post("/logout", data={"csrf_token": csrf_of(client.get("/").text)}, follow_redirects=False)
        assert logout.status_code == 303
        assert client.get("/", headers={"Accept": "text/html"}, follow_redirects=False).status_code == 303


def test_repeated_wrong_tokens_are_throttled(tmp_path):
    with dashboard_client(tmp_path, jobs="none", host="0.0.0.0", api_token="s3cret-token-long-enough") as client:
        token = csrf_of(client.get("/login").text)
        codes = [client.post("/login", data={"csrf_token": token, "token": f"guess{i}"}).status_code for i in range(12)]
        assert codes[0] == 401 and codes[-1] == 429
        # the right token still passes: a guesser behind the same address cannot lock its owner out
        assert client.post("/login", data={"csrf_token": token, "token": "s3cret-token-long-enough"},
                           follow_redirects=False).status_code == 303


def test_on_loopback_with_a_token_pages_are_readable_but_acting_needs_a_login(tmp_path):
    with dashboard_client(tmp_path, jobs="none", api_token="s3cret-token-long-enough") as client:
        page = client.get("/reports/new")
        assert page.status_code == 200 and "Log in</a> with the API token" in page.text
        response = client.post("/reports/new", data={"csrf_token": csrf_of(page.text), "repo": "acme/calc",
                                                      "title": "x"}, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith("/login")
        assert client.get("/api/investigations").json()["total"] == 0


def test_citations_link_to_the_lines_at_the_commit_and_read_the_materialized_tree(tmp_path):
    commit = "0123456789abcdef0123456789abcdef01234567"
    with dashboard_client(tmp_path, jobs="none") as client:
        runtime = client.runtime
        tree = tree_path(runtime.settings, "octo/calc", commit) / "calc"
        tree.mkdir(parents=True)
        (tree / "stats.py").write_text(STATS_PY)

        async def finished_investigation() -> int:
            from schemas import BugReport, ClassificationResult, Classification, Status

            async with runtime.db.session() as s:
                await store.add_repository(s, "octo/calc", "https://github.com/octo/calc.git")
                inv, _ = await store.create_investigation(
                    s, BugReport(title="mean crashes", repo="octo/calc"),
                    ClassificationResult(label=Classification.crash, confidence=1.0, reason="test"),
                    investigate=True, explorer="offline")
            result = await scripted_investigation(SimpleNamespace(title="mean crashes"), tree.parent, commit=commit)
            async with runtime.db.session() as s:
                await store.finish(s, inv, status=Status.done, diagnosis=result.diagnosis.model_dump(mode="json"),
                                   report_markdown=result.report_markdown)
            return inv

        inv = client.portal.call(finished_investigation)
        html = client.get(f"/investigations/{inv}").text
        assert f'href="https://github.com/octo/calc/blob/{commit}/calc/stats.py#L12-L13"' in html
        assert 'rel="noopener noreferrer"' in html
        assert '<span class="tok-comment"># fails on an empty list</span>' in html  # read from the tree
        assert "Quoted evidence" not in html

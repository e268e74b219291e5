"""The dashboard in a real browser: Debian's chromium driven by Playwright against the real service (uvicorn in a
subprocess on a free 127.0.0.1 port, temp data dir, a tiny fixture git repository).

Screenshots of every page go to test-artifacts/dashboard/ (gitignored).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.app.dashboard.test_dashboard_pages import CRASH_BODY, make_fixture_repo

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[3]
ARTIFACTS = ROOT / "test-artifacts" / "dashboard"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed: apt-get install -y chromium"),
]

REPORT_MD = """## Summary
mean() divides by zero on an empty list.

## Root cause
`mean` divides by `len(values)` without checking for an empty list.

- calc/stats.py:13 divides by `count`

## Affected files
1. `calc/stats.py:11-12` — `mean` (cause)
   ```python
   return total(values) / count  # fails on an empty list
   ```

## Proposed changes
- `calc/stats.py` — `mean`: Raise ValueError on empty input instead of dividing by zero.

## Complexity
trivial — one guard clause

## Risk
low — only the empty-input path changes

## Confidence
0.80

## Open questions
_None._
"""


@dataclass
class Service:
    """A running service and how to reach it."""

    url: str
    token: str | None
    repo: Path
    log: Path
    headers: dict[str, str] = field(default_factory=dict)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _offline_available() -> bool:
    try:
        from funnel.explorers.offline import OfflineExplorer  # noqa: F401
    except ImportError:
        return False
    return True


@contextmanager
def run_service(tmp: Path, *, explorer: str, token: str | None = None, policy_host: str = "127.0.0.1") -> Iterator[Service]:
    """uvicorn serving `create_app()` on 127.0.0.1; `policy_host` is what the settings claim (0.0.0.0 turns on
    the login requirement without exposing the test server to the network)."""
    repo, _ = make_fixture_repo(tmp)
    port = _free_port()
    env = {
        **os.environ,
        "BUGSLEUTH_DATA_DIR": str(tmp / "data"),
        "BUGSLEUTH_REGISTER_SELF": "false",
        "BUGSLEUTH_EXPLORER": explorer,
        "BUGSLEUTH_HOST": policy_host,
        "BUGSLEUTH_LOG_LEVEL": "WARNING",
        "BUGSLEUTH_CONFIG": str(tmp / "none.toml"),
        "BUGSLEUTH_JOB_BACKEND": "local",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("BUGSLEUTH_API_TOKEN", None)
    if token:
        env["BUGSLEUTH_API_TOKEN"] = token
    log = tmp / "service.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory", "--host", "127.0.0.1",
             "--port", str(port), "--log-level", "warning"],
            cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"service did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        registered = httpx.post(f"{url}/api/repos", json={"name": "acme/calc", "location": str(repo)}, headers=headers)
        assert registered.status_code in (200, 201), registered.text
        try:
            yield Service(url=url, token=token, repo=repo, log=log, headers=headers)
        except BaseException:
            # pytest shows captured output of a failing test: the service's own account of what went wrong
            print(f"--- service log ({log}) ---\n{log.read_text(errors='replace')[-6000:]}", file=sys.stderr)
            raise
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        yield b
        b.close()


@contextmanager
def page_on(browser, service: Service, *, width: int = 1280, height: int = 900, color_scheme: str = "light"):
    """A fresh browser context and page that records every request URL and every console error."""
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=color_scheme)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.requests = []  # type: ignore[attr-defined]
    page.console_errors = []  # type: ignore[attr-defined]
    page.on("request", lambda r: page.requests.append(r.url))
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    try:
        yield page
    finally:
        context.close()


def assert_only_local_requests(page, service: Service) -> None:
    foreign = [u for u in page.requests if not (u.startswith(service.url + "/") or u.startswith("data:"))]
    assert not foreign, f"requests to other hosts: {foreign}"
    assert page.requests, "no request was recorded"


def shot(page, name: str, **kwargs) -> Path:
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), **kwargs)
    return path


# ---------------------------------------------------------------------------------------------- the whole path


@pytest.fixture(scope="module")
def offline_service(tmp_path_factory):
    explorer = "offline" if _offline_available() else "scripted"
    with run_service(tmp_path_factory.mktemp("dash-offline"), explorer=explorer) as service:
        yield service


def test_report_to_diagnosis_timeline_and_feedback_in_the_browser(browser, offline_service):
    service = offline_service
    with page_on(browser, service) as page:
        page.goto(service.url + "/")
        assert page.title() == "Investigations · bugsleuth"
        shot(page, "01-investigations-empty")

        page.get_by_role("link", name="New report").first.click()
        page.get_by_label("Repository").select_option("acme/calc")
        page.get_by_label("Title").fill("mean() raises ZeroDivisionError on an empty list")
        page.get_by_label("Report").fill(CRASH_BODY + "\n\nCalling calc.stats.mean([]) crashes instead of a clear error.")
        shot(page, "02-report-form")
        page.get_by_role("button", name="Investigate").click()
        page.wait_for_url(re.compile(r"/investigations/\d+"))
        investigation_id = int(re.search(r"/investigations/(\d+)", page.url).group(1))

        # the page follows the run by itself and shows the outcome when it ends (no manual reload)
        page.wait_for_selector('article[data-terminal="true"]', timeout=90_000)
        status = page.get_attribute("#investigation", "data-status")
        assert status in ("done", "failed", "cancelled"), status
        if _offline_available():  # the offline investigator finds the suspect in this tiny repository
            assert status == "done"
            first = page.locator(".citation").first
            assert "calc/stats.py" in first.locator("figcaption").inner_text()
            assert first.locator("tr.cited").count() >= 1
            assert "return total(values) / count" in first.inner_text()
        assert page.locator("h2", has_text="Funnel timeline").is_visible()
        assert page.locator("#timeline .phase").count() >= 1
        assert page.locator("#timeline .step-tool_call").count() >= 1
        shot(page, "03-investigation-detail", full_page=True)

        previews = page.locator("#timeline details.preview summary")
        if previews.count():
            previews.first.click()
            assert page.locator("#timeline details.preview[open] pre").first.is_visible()
        page.locator("#timeline").screenshot(path=str(ARTIFACTS / "04-timeline.png"))

        if page.locator("form.feedback-form").count():
            page.get_by_role("radio", name="Correct", exact=True).check()
            page.get_by_label("Note").fill("found it — <b>thanks</b>")
            page.get_by_role("button", name="Send feedback").click()
            page.wait_for_selector(".feedback-list")
            assert "found it — <b>thanks</b>" in page.inner_text(".feedback-list")
            assert page.locator(".flash-ok").is_visible()
            shot(page, "05-feedback-saved")

        page.get_by_role("link", name="Stats").click()
        page.wait_for_selector("svg.chart")  # a click does not wait for the page it opens; a loaded machine showed it
        assert page.locator("svg.chart").count() == 4
        shot(page, "06-stats", full_page=True)

        page.get_by_role("link", name="Investigations").first.click()
        row = page.locator(f'tr[data-id="{investigation_id}"]')
        row.wait_for()
        assert row.is_visible() and status in row.inner_text()
        assert_only_local_requests(page, service)
        assert not page.console_errors, page.console_errors


def test_keyboard_users_get_a_skip_link_and_visible_focus(browser, offline_service):
    with page_on(browser, offline_service) as page:
        page.goto(offline_service.url + "/reports/new")
        page.keyboard.press("Tab")
        focused = page.evaluate("document.activeElement.textContent.trim()")
        assert focused == "Skip to content"
        box = page.locator(".skip-link").bounding_box()
        assert box is not None and box["y"] >= 0  # moved on screen when focused
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline == "solid"
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "r-repo"
        shot(page, "07-keyboard-focus")


def test_pages_read_well_on_a_phone_in_dark_mode(browser, offline_service):
    with page_on(browser, offline_service, width=390, height=844, color_scheme="dark") as page:
        page.goto(offline_service.url + "/")
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(15, 18, 23)", background  # the dark palette is in force
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390 + 1, f"page is {width}px wide on a 390px screen"
        shot(page, "08-phone-list", full_page=True)
        link = page.locator("tbody a").first
        if link.count():
            link.click()
            page.wait_for_selector("#investigation")
            assert page.evaluate("document.documentElement.scrollWidth") <= 391
            shot(page, "09-phone-detail", full_page=True)


# ---------------------------------------------------------------------------------------------- live progress


@pytest.fixture(scope="module")
def slow_service(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dash-live")
    (tmp / "report.md").write_text(REPORT_MD)
    # A command explorer that takes a while (longer when the report says SLOW), then answers with a fixed report.
    command = f"if grep -q SLOW; then sleep 60; else sleep 4; fi; cat {shlex.quote(str(tmp / 'report.md'))}"
    with run_service(tmp, explorer=f"command:{command}") as service:
        yield service


def _post_report(service: Service, title: str) -> int:
    response = httpx.post(f"{service.url}/api/reports", headers=service.headers,
                          json={"repo": "acme/calc", "title": title, "body": CRASH_BODY})
    assert response.status_code == 202, response.text
    return response.json()["id"]


def test_new_investigations_and_their_progress_appear_without_reloading(browser, slow_service):
    service = slow_service
    with page_on(browser, service) as page:
        page.goto(service.url + "/")
        investigation_id = _post_report(service, "mean() crashes on []")
        row = page.locator(f'tr[data-id="{investigation_id}"]')
        row.wait_for(timeout=15_000)  # appeared by polling, no reload
        assert page.evaluate("performance.getEntriesByType('navigation').length") == 1

        row.get_by_role("link").first.click()
        page.wait_for_selector('article[data-terminal="false"]')
        assert page.locator(".live").is_visible()
        shot(page, "10-live-running")
        # the run ends while we watch: the diagnosis replaces the progress panel by itself
        page.wait_for_selector("#diag-h", timeout=60_000)
        assert page.get_attribute("#investigation", "data-status") == "done"
        assert any(f"/api/investigations/{investigation_id}/events" in u for u in page.requests)
        cited = page.locator(".code-table tr.cited")
        assert cited.count() == 2
        assert "return total(values) / count" in cited.last.inner_text()
        assert page.locator(".code-table .tok-keyword").count() >= 1
        assert "divides by" in page.inner_text(".root-cause")
        shot(page, "11-live-finished", full_page=True)
        assert_only_local_requests(page, service)
        assert not page.console_errors, page.console_errors


def test_cancel_button_stops_a_running_investigation(browser, slow_service):
    service = slow_service
    with page_on(browser, service) as page:
        investigation_id = _post_report(service, "SLOW: mean() crashes")
        page.goto(f"{service.url}/investigations/{investigation_id}")
        deadline = time.monotonic() + 20
        while httpx.get(f"{service.url}/investigations/{investigation_id}/status").json()["status"] != "running":
            assert time.monotonic() < deadline, "never started"
            time.sleep(0.2)
        page.get_by_role("button", name="Cancel investigation").click()
        page.wait_for_selector('article[data-status="cancelled"]', timeout=20_000)
        assert page.locator(".flash-ok").inner_text().startswith("Cancellation requested")
        shot(page, "12-cancelled", full_page=True)


# ---------------------------------------------------------------------------------------------- access and escaping


@pytest.fixture(scope="module")
def guarded_service(tmp_path_factory):
    explorer = "offline" if _offline_available() else "scripted"
    with run_service(tmp_path_factory.mktemp("dash-auth"), explorer=explorer, token="browser-test-token",
                     policy_host="0.0.0.0") as service:
        yield service


def test_login_then_script_in_a_report_stays_text(browser, guarded_service):
    service = guarded_service
    with page_on(browser, service) as page:
        page.goto(service.url + "/stats")
        assert "/login?next=%2Fstats" in page.url
        shot(page, "13-login")
        page.get_by_label("API token").fill("wrong")
        page.get_by_role("button", name="Log in").click()
        assert page.locator(".flash-error").inner_text() == "That token is not right."
        page.get_by_label("API token").fill("browser-test-token")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(service.url + "/stats")
        cookie = next(c for c in page.context.cookies() if c["name"] == "bugsleuth_session")
        assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"
        assert page.evaluate("document.cookie") == ""  # not readable from script

        page.goto(service.url + "/reports/new")
        page.get_by_label("Title").fill("<script>window.__xss = 1</script> crash")
        page.get_by_label("Report").fill('<img src=x onerror="window.__xss = 2"> ZeroDivisionError in mean()')
        page.get_by_role("button", name="Investigate").click()
        page.wait_for_url(re.compile(r"/investigations/\d+"))
        assert page.locator("h1").inner_text() == "<script>window.__xss = 1</script> crash"
        assert '<img src=x onerror="window.__xss = 2">' in page.inner_text(".report-text")
        assert page.evaluate("typeof window.__xss") == "undefined"
        page.goto(service.url + "/")
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert page.locator("td.title-cell", has_text="<script>window.__xss = 1</script>").count() == 1
        shot(page, "14-escaped-report")
        assert_only_local_requests(page, service)
        # the API still answers scripts with the bearer token, and refuses them without it
        assert httpx.get(f"{service.url}/api/investigations", headers=service.headers).status_code == 200
        assert httpx.get(f"{service.url}/api/investigations").status_code == 401
        assert json.loads(httpx.get(f"{service.url}/health").text)

"""`/docs` in a real browser: Swagger UI renders the API from the service's own files, under the strict policy,
with no request to another host (the service and chromium as in test_dashboard_browser.py).

Screenshot: test-artifacts/dashboard/20-api-docs.png.
"""

from __future__ import annotations

import pytest

from tests.app.dashboard.test_dashboard_browser import (  # noqa: F401 - `browser` is a fixture
    CHROMIUM,
    assert_only_local_requests,
    browser,
    page_on,
    run_service,
    shot,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed: apt-get install -y chromium"),
]


def test_api_docs_render_offline_under_the_strict_policy(browser, tmp_path):  # noqa: F811
    with run_service(tmp_path, explorer="scripted") as service, page_on(browser, service) as page:
        page.goto(service.url + "/docs")
        page.locator(".opblock").first.wait_for(state="visible")
        reports = page.locator(".opblock-post", has_text="/api/reports").first
        reports.wait_for(state="visible")
        assert "POST" in reports.inner_text()
        assert page.locator(".opblock").count() >= 10
        reports.locator(".opblock-summary").first.click()  # expanding an operation renders its schema
        page.locator(".opblock-body").first.wait_for(state="visible")
        shot(page, "20-api-docs", full_page=False)
        assert_only_local_requests(page, service)
        assert any(u.startswith(service.url + "/openapi.json") for u in page.requests)
        assert not page.console_errors, page.console_errors

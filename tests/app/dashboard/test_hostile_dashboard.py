"""The service over the hostile tree (tests/hostile.py): the real offline investigation ends `done` and neither the
API, the trace nor the dashboard page (its code excerpts included) ever shows a secret (issue 21, item 1)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from starlette.testclient import TestClient

from app.dashboard import view
from app import service
from app.config import Settings
from app.main import create_app
from schemas import Diagnosis
from schemas.diagnosis import AffectedFile, RootCause
from tests.app.dashboard.test_dashboard_pages import submit, wait_terminal
from tests.hostile import LINKS_TO_SECRETS, SECRET, build_hostile, leaks, remove_hostile


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    yield build_hostile(base)
    remove_hostile(base)


@pytest.mark.parametrize("rel", [*LINKS_TO_SECRETS, ".env", ".ssh/config", ".git/config", "app/pipe.py"])
def test_read_source_never_excerpts_a_secret_or_an_odd_file(hostile, rel):
    assert view.read_source(None, None, rel, [hostile.root]) is None


def test_read_source_still_excerpts_ordinary_code(hostile):
    assert "def load" in view.read_source(None, None, "app/loader.py", [hostile.root])


async def _cites_the_link(report, root, **_: Any):
    """A stand-in explorer that cites the symlinked secret, as a model that was steered by the report might."""
    diagnosis = Diagnosis(summary="load() reads the settings",
                          root_cause=RootCause(explanation="see app/settings.py", evidence=["app/settings.py:1"]),
                          affected_files=[AffectedFile(path="app/settings.py", line_start=1, line_end=1),
                                          AffectedFile(path="app/loader.py", line_start=4, line_end=6)])
    return SimpleNamespace(diagnosis=diagnosis, report_markdown="# Report\n\nsee app/settings.py", events=[])


def _client(tmp_path, hostile, investigate_fn=None):
    settings = Settings(data_dir=tmp_path / "data", register_self=False, job_backend="local", log_json=False,
                        log_level="WARNING", allowed_hosts=["testserver"])  # the name Starlette's TestClient sends
    app = create_app(settings, investigate_fn=investigate_fn)
    client = TestClient(app, base_url="https://testserver")
    return client, app


def _all_views(client: TestClient, inv: int) -> list[str]:
    return [client.get(f"/api/investigations/{inv}").text, client.get(f"/api/investigations/{inv}/trace").text,
            client.get(f"/investigations/{inv}").text, client.get("/").text]


def test_a_real_offline_investigation_of_the_hostile_tree_is_done_and_shows_no_secret(tmp_path, hostile, monkeypatch):
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(tmp_path / "cache"))
    client, app = _client(tmp_path, hostile)
    with client:
        client.portal.call(service.register_repository, app.state.runtime, "evil/repo", str(hostile.root))
        inv = submit(client, "load() crashes", "KeyError: DATABASE_PASSWORD\n\nin app/loader.py load()",
                     repo="evil/repo")
        assert wait_terminal(client, inv, timeout=120) == "done"
        assert all(leaks(text) == [] for text in _all_views(client, inv))


def test_the_dashboard_page_shows_no_excerpt_of_a_cited_link_to_a_secret(tmp_path, hostile):
    client, app = _client(tmp_path, hostile, investigate_fn=_cites_the_link)
    with client:
        client.portal.call(service.register_repository, app.state.runtime, "evil/repo", str(hostile.root))
        inv = submit(client, "load() crashes", "KeyError", repo="evil/repo")
        assert wait_terminal(client, inv) == "done"
        page = client.get(f"/investigations/{inv}").text
        assert "Read the settings" in page  # the ordinary citation is excerpted
        assert SECRET not in page and leaks(page) == []

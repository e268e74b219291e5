"""The in-process job pool and the repository registry at work: restarts, concurrency limits, refs, trees."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app import store
from app.db import Database
from app.models import Investigation
from schemas import Status
from tests.app._service_fixtures import (  # noqa: F401 - fixtures
    StubInvestigator,
    base_settings,
    fixture_repo,
    git,
    register,
    running_service,
)

REPORT = {"repo": "acme/tiny", "title": "average crashes on empty list", "body": "ZeroDivisionError in average()"}


async def test_restart_requeues_interrupted_investigations_and_finishes_them(base_settings, fixture_repo):
    path, _ = fixture_repo
    settings = base_settings()
    async with running_service(settings, StubInvestigator(block=True)) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        await svc.wait_status(inv, ("running",))
        while not (await svc.client.get(f"/api/investigations/{inv}/trace")).json():
            await asyncio.sleep(0.05)
    # the service went away mid-run: the row is still `running`
    db = Database(settings.resolved_database_url)
    async with db.session() as s:
        assert await store.get_status(s, inv) == Status.running
    await db.dispose()
    async with running_service(settings, StubInvestigator()) as svc:
        detail = await svc.wait_status(inv, ("done",))
        assert detail["runs"] == 2
        runs = {e["run"] for e in (await svc.client.get(f"/api/investigations/{inv}/trace")).json()}
        assert runs == {1, 2}


async def test_crashed_process_rows_are_requeued_on_start(base_settings, fixture_repo):
    path, _ = fixture_repo
    settings = base_settings()
    async with running_service(settings, StubInvestigator(), headers=None) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        await svc.wait_status(inv, ("done",))
        # simulate a process that died holding a run (SIGKILL leaves the row running)
        async with svc.runtime.db.session() as s:
            row = await s.get(Investigation, inv)
            row.status, row.worker = Status.running, "local:deadhost:1"
    async with running_service(settings, StubInvestigator()) as svc:
        await svc.wait_status(inv, ("done",))
        assert len(svc.stub.calls) == 1


async def test_per_repository_concurrency_limit_holds_while_other_repos_proceed(base_settings, fixture_repo, tmp_path):
    path, _ = fixture_repo
    other = tmp_path / "plain"
    other.mkdir()
    (other / "main.py").write_text("print('hi')\n")
    stub = StubInvestigator(delay_s=0.3)
    async with running_service(base_settings(workers=4, per_repo_concurrency=1), stub) as svc:
        await register(svc, "acme/tiny", path)
        await register(svc, "acme/plain", other)
        ids = []
        for repo in ("acme/tiny", "acme/tiny", "acme/tiny", "acme/plain", "acme/plain"):
            ids.append((await svc.client.post("/api/reports", json={**REPORT, "repo": repo})).json()["id"])
        for inv in ids:
            await svc.wait_status(inv, ("done",), timeout=20)
        assert stub.max_running == {"acme/tiny": 1, "acme/plain": 1}


async def test_git_url_is_cloned_and_the_named_version_investigated(base_settings, fixture_repo):
    path, commits = fixture_repo
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/tiny", f"file://{path}")
        repos = (await svc.client.get("/api/repos")).json()
        assert repos[0]["kind"] == "git"
        inv = (await svc.client.post("/api/reports", json={**REPORT, "ref": "1.0"})).json()["id"]
        detail = await svc.wait_status(inv, ("done",))
        assert detail["commit"] == commits["v1"]
        root = svc.stub.calls[0]["root"]
        assert (root / "app.py").is_file() and not (root / "README.md").exists()
        # a new upstream commit is fetched before the next investigation
        (path / "NEW.md").write_text("new\n")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "third")
        head = git(path, "rev-parse", "HEAD")
        inv2 = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        assert (await svc.wait_status(inv2, ("done",)))["commit"] == head


async def test_unknown_ref_falls_back_to_the_default_head_with_a_note(base_settings, fixture_repo):
    path, commits = fixture_repo
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json={**REPORT, "ref": "9.9.9"})).json()["id"]
        detail = await svc.wait_status(inv, ("done",))
        assert detail["commit"] == commits["head"]
        events = (await svc.client.get(f"/api/investigations/{inv}/events")).text
        assert "not found; investigated the default branch head" in events


async def test_plain_directory_is_investigated_in_place(base_settings, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "main.py").write_text("print('hi')\n")
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/plain", plain)
        inv = (await svc.client.post("/api/reports", json={**REPORT, "repo": "acme/plain"})).json()["id"]
        await svc.wait_status(inv, ("done",))
        assert Path(svc.stub.calls[0]["root"]) == plain.resolve()


async def test_vanished_repository_path_fails_with_a_clear_error(base_settings, tmp_path):
    plain = tmp_path / "gone"
    plain.mkdir()
    async with running_service(base_settings()) as svc:
        await register(svc, "acme/gone", plain)
        plain.rmdir()
        inv = (await svc.client.post("/api/reports", json={**REPORT, "repo": "acme/gone"})).json()["id"]
        detail = await svc.wait_status(inv, ("failed",))
        assert "does not exist" in detail["error"]


async def test_real_offline_investigation_produces_a_validated_diagnosis(base_settings, fixture_repo):
    from funnel.errors import UserError
    from funnel.explorers import resolve_explorer
    from funnel.run.loop import investigate

    try:
        resolve_explorer("offline")
    except UserError as exc:
        pytest.skip(f"the offline explorer has not landed yet: {exc}")
    path, _ = fixture_repo
    settings = base_settings()
    from app.main import create_app
    import httpx

    app = create_app(settings, investigate_fn=investigate)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            assert (await client.post("/api/repos", json={"name": "acme/tiny", "location": str(path)})).status_code == 201
            inv = (await client.post("/api/reports", json=REPORT)).json()["id"]
            for _ in range(600):
                detail = (await client.get(f"/api/investigations/{inv}")).json()
                if detail["status"] not in ("queued", "running"):
                    break
                await asyncio.sleep(0.1)
            assert detail["status"] == "done", detail.get("error")
            assert detail["diagnosis"]["stats"]["explorer"] == "offline"
            kinds = {e["kind"] for e in (await client.get(f"/api/investigations/{inv}/trace")).json()}
            assert {"start", "tool_call", "phase_change", "stop"} <= kinds


@pytest.mark.slow
async def test_a_model_endpoint_that_is_down_falls_back_to_the_offline_investigator(base_settings, fixture_repo, monkeypatch):
    import httpx

    from app.main import create_app
    from funnel.run.loop import investigate

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # discard port: connection refused
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path, _ = fixture_repo
    app = create_app(base_settings(explorer="openai:gpt-4o-mini"), investigate_fn=investigate)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            await client.post("/api/repos", json={"name": "acme/tiny", "location": str(path)})
            inv = (await client.post("/api/reports", json=REPORT)).json()["id"]
            for _ in range(900):
                detail = (await client.get(f"/api/investigations/{inv}")).json()
                if detail["status"] not in ("queued", "running"):
                    break
                await asyncio.sleep(0.1)
            # funnel: Limits.fallback_to_offline (default on) reruns with the offline investigator, marked as such
            assert detail["status"] == "done", detail.get("error")
            assert detail["termination"] == "done"
            assert detail["diagnosis"]["stats"]["explorer"].startswith("offline (fallback from openai:gpt-4o-mini")
            assert (await client.get("/ready")).status_code == 200


async def test_an_interrupted_event_flush_keeps_its_events_for_the_next_flush():
    import contextlib
    from types import SimpleNamespace

    from app.jobs import runner

    class _Session:
        pass

    @contextlib.asynccontextmanager
    async def failing_session():
        raise asyncio.CancelledError  # the watcher cancelled in the middle of a write
        yield _Session()

    sink = runner._EventSink(SimpleNamespace(metrics=None))
    sink.add({"kind": "tool_call", "n": 1})
    sink.add({"kind": "phase_change", "n": 2})
    runtime = SimpleNamespace(db=SimpleNamespace(session=failing_session))
    with pytest.raises(asyncio.CancelledError):
        await runner._flush(runtime, 1, 1, sink)
    sink.add({"kind": "stop", "n": 3})
    assert [e["n"] for e in sink.drain()] == [1, 2, 3]

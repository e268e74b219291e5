"""The MCP tools' behaviour on bad input and cancellation, through the SDK's in-process client (same server, same
backend as `bugsleuth mcp`, no subprocess), and the progress mapping on its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp import Client

from app import store
from app.config import Settings
from app.db import Database
from app.mcp_server.backend import Backend
from app.mcp_server.progress import TOTAL, PhaseProgress
from app.mcp_server.server import build_server
from app.runtime import Runtime
from schemas import Status
from tests.app._mcp_fixtures import BODY, TITLE, make_repo
from tests.app._service_fixtures import StubInvestigator


@asynccontextmanager
async def session(tmp: Path, **runtime_args) -> AsyncIterator[tuple[Client, Runtime]]:  # noqa: ANN003
    """An in-process MCP session on a stdio-like backend (roots = `tmp`, runs its own jobs)."""
    settings = Settings(data_dir=tmp / "data", register_self=False, explorer="offline")
    db = Database(settings.resolved_database_url)
    await db.migrate()
    runtime = Runtime(settings=settings, db=db, worker_name="mcp:test", **runtime_args)
    backend = Backend(lambda: runtime, roots=[tmp], runs_jobs=True)
    try:
        async with Client(build_server(backend)) as client:
            yield client, runtime
    finally:
        await backend.close()
        await db.dispose()


async def _status(runtime: Runtime, investigation_id: int) -> Status | None:
    async with runtime.db.read_session() as s:
        return await store.get_status(s, investigation_id)


async def test_a_cancelled_investigate_call_cancels_the_investigation(tmp_path):
    repo, _ = make_repo(tmp_path)
    stub = StubInvestigator(block=True)
    async with session(tmp_path, investigate_fn=stub) as (client, runtime):
        with anyio.move_on_after(1.5):
            await client.call_tool("investigate", {"repository": str(repo), "title": TITLE, "body": BODY})
        for _ in range(100):
            if await _status(runtime, 1) == Status.cancelled:
                break
            await asyncio.sleep(0.1)
        assert await _status(runtime, 1) == Status.cancelled
        assert stub.calls and stub.calls[0]["cancel"].cancelled


async def test_investigate_refuses_shell_explorers_unknown_models_and_empty_reports(tmp_path):
    repo, _ = make_repo(tmp_path)
    async with session(tmp_path) as (client, runtime):
        cases = (
            ({"explorer": "command:cat /etc/passwd"}, "runs a shell command"),
            ({"explorer": "nonsense"}, "Unknown model: nonsense"),
            ({"title": " ", "body": ""}, "the report is empty"),
            ({"title": "x" * 501}, "title"),
            ({"repository": ""}, "no repository given"),
        )
        for change, reason in cases:
            result = await client.call_tool("investigate", {"repository": str(repo), "title": TITLE, **change})
            assert result.is_error and reason in result.content[0].text, (change, result.content[0].text)
        async with runtime.db.read_session() as s:
            assert (await store.list_investigations(s)).total == 0  # nothing refused was stored


async def test_a_directory_whose_name_is_taken_is_registered_under_a_distinct_name(tmp_path):
    repo, _ = make_repo(tmp_path / "mine")
    other = tmp_path / "other"
    other.mkdir()
    async with session(tmp_path, investigate_fn=StubInvestigator()) as (client, runtime):
        async with runtime.db.session() as s:
            await store.add_repository(s, "calc-repo", str(other))
        result = await client.call_tool("investigate", {"repository": str(repo), "title": TITLE, "body": BODY})
        assert not result.is_error, result.content[0].text
        name = result.structured_content["repo"]
        assert name.startswith("calc-repo-") and f"registered {repo} as {name!r}" in result.content[0].text
        again = await client.call_tool("investigate", {"repository": str(repo), "title": TITLE, "wait": False})
        assert again.structured_content["repo"] == name  # found by its location from now on


async def test_an_asked_for_investigation_runs_whatever_its_classification_with_the_explorer_asked_for(tmp_path):
    repo, _ = make_repo(tmp_path)
    stub = StubInvestigator()
    async with session(tmp_path, investigate_fn=stub) as (client, runtime):
        result = await client.call_tool("investigate", {"repository": str(repo), "explorer": "scripted",
                                                        "title": "How do I configure the cache directory?"})  # fmt: skip
        data = result.structured_content
        assert data["classification"] == "question" and data["status"] == "done", data
        assert data["explorer"] == "scripted" and stub.calls[0]["explorer"] == "scripted"


def test_progress_keeps_increasing_when_a_second_attempt_starts_over_in_deep_dive():
    steps = PhaseProgress()
    events = [
        ("status", {"status": "running", "worker": "w"}),
        ("start", {"phase": "explore", "explorer": "offline"}),
        ("tool_call", {"phase": "explore", "tool": "search", "args": {"pattern": "mean"}}),
        ("tool_call", {"phase": "explore", "tool": "begin_deep_dive", "args": {"suspects": ["a.py"]}}),
        ("phase_change", {"phase": "explore", "from_phase": "explore", "to_phase": "deep_dive", "reason": "suspects"}),
        ("phase_change", {"phase": "deep_dive", "from_phase": "deep_dive", "to_phase": "output", "reason": "read"}),
        ("verify", {"phase": "output", "ok": False, "findings": ["a.py:99 is past the end"]}),
        ("tool_call", {"phase": "deep_dive", "attempt": 2, "tool": "read_range", "args": {"path": "a.py"}}),
        ("request", {"phase": "deep_dive", "attempt": 2}),
        ("stop", {"phase": "output", "attempt": 2, "reason": "done"}),
    ]
    made = [steps.queued(1)] + [s for kind, data in events if (s := steps.step(kind, data)) is not None]
    made.append(steps.finished("done", "prime suspect a.py:3"))
    values = [s.progress for s in made]
    assert all(b > a for a, b in zip(values, values[1:])) and values[-1] == TOTAL
    messages = [s.message for s in made]
    assert "attempt 2, deep_dive: read_range(path='a.py')" in messages
    assert not any("begin_deep_dive" in m for m in messages)  # told by the phase change
    assert messages[-1] == "done: prime suspect a.py:3"


async def test_arguments_no_file_system_or_database_takes_get_a_reason_never_an_unexpected_error(tmp_path):
    """Each of these ended a bare "Error executing tool X", no reason given, with a traceback in the server's log
    (`UnicodeEncodeError`, `OSError: File name too long`, `OverflowError`): a client learnt nothing from it."""
    repo, _ = make_repo(tmp_path)
    calls = [
        ("read_range", {"path": "app\ud800.py"}, "does not exist"),
        ("list_dir", {"path": "a\ud800b"}, "does not exist"),
        ("repo_map", {"repository": "a" * 5000}, "nor a directory under"),
        ("find_symbol", {"repository": "\ud800", "name": "average"}, "neither a registered repository"),
        ("get_investigation", {"investigation_id": 2**64}, "less than or equal to 9223372036854775807"),
        ("list_investigations", {"offset": 2**64}, "less than or equal to 10000000"),
    ]
    async with session(tmp_path) as (client, _):
        for tool, args, reason in calls:
            args = {"repository": str(repo), **args} if tool != "list_investigations" and "investigation_id" not in args else args
            result = await client.call_tool(tool, args)
            text = result.content[0].text
            assert reason in text, (tool, text)
        listed = await client.call_tool("list_dir", {"repository": str(repo), "ref": "\ud800"})
        assert not listed.is_error and "not found; investigated the default branch head" in listed.content[0].text

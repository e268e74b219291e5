"""`bugsleuth mcp` over stdio, driven by the official SDK's own client: the command is spawned as a subprocess (this
worktree on PYTHONPATH, a temp data dir), a session investigates a small git repository with the offline explorer
end to end and receives progress per phase, and the read-only tools stay inside the sandbox."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.app._mcp_fixtures import BODY, SECRET, TITLE, ProgressLog, assert_diagnosis, make_repo

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"investigate", "get_investigation", "list_investigations", "list_repositories", "repo_map", "search",
         "read_range", "list_dir", "find_symbol"}  # fmt: skip


def bugsleuth_mcp(tmp: Path, *roots: Path, explorer: str = "offline") -> StdioServerParameters:
    """`bugsleuth mcp --root ...` with this worktree first on the path and its data under `tmp`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BUGSLEUTH_DATA_DIR": str(tmp / "data"),
           "BUGSLEUTH_CONFIG": str(tmp / "none.toml"), "BUGSLEUTH_LOG_LEVEL": "WARNING", "BUGSLEUTH_EXPLORER": explorer}  # fmt: skip
    env.pop("BUGSLEUTH_API_TOKEN", None)
    script = Path(sys.executable).with_name("bugsleuth")
    command, args = (str(script), []) if script.exists() else (sys.executable, ["-c", "from app.cli import main; main()"])
    return StdioServerParameters(command=command, args=[*args, "mcp", *(a for r in roots for a in ("--root", str(r)))],
                                 env=env, cwd=str(tmp))  # fmt: skip


def _text(result) -> str:  # noqa: ANN001
    return result.content[0].text


@pytest.mark.slow
async def test_a_stdio_session_investigates_a_local_repository_end_to_end_with_progress_per_phase(tmp_path):
    repo, commit = make_repo(tmp_path)
    progress = ProgressLog()
    async with Client(bugsleuth_mcp(tmp_path, tmp_path), read_timeout_seconds=120) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        result = await client.call_tool("investigate", {"repository": str(repo), "title": TITLE, "body": BODY},
                                        progress_callback=progress)  # fmt: skip
        data = assert_diagnosis(result)
        assert data["commit"] == commit
        assert f"Note: registered {repo} as 'calc-repo'" in _text(result)
        progress.assert_per_phase()

        # stored like any other investigation: listed, fetched, and the directory is now a registered repository
        listed = await client.call_tool("list_investigations", {"repository": "calc-repo"})
        assert listed.structured_content["total"] == 1 and f"#{data['id']} [done, crash" in _text(listed)
        fetched = await client.call_tool("get_investigation", {"investigation_id": data["id"]})
        assert fetched.structured_content["diagnosis"] == data["diagnosis"]
        again = await client.call_tool("investigate", {"repository": "calc-repo", "title": TITLE, "wait": False})
        assert not again.is_error and again.structured_content["status"] in ("queued", "running", "done")
        assert "Note: registered" not in _text(again)


@pytest.mark.slow
async def test_stdio_read_only_tools_read_the_tree_and_refuse_what_the_sandbox_refuses(tmp_path):
    repo, commit = make_repo(tmp_path / "allowed")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    async with Client(bugsleuth_mcp(tmp_path, tmp_path / "allowed"), read_timeout_seconds=60) as client:
        async def call(tool: str, **args):  # noqa: ANN202
            return await client.call_tool(tool, {"repository": str(repo), **args})

        read = await call("read_range", path="calc/stats.py", start=9, end=12)
        assert not read.is_error
        assert _text(read).startswith(f"[calc-repo @ {commit[:12]}]") and "12|     return total(values) / count" in _text(read)
        assert "calc/stats.py:9: def mean(values):" in _text(await call("search", pattern=r"def mean\("))
        assert "mean (function) calc/stats.py:9-12" in _text(await call("find_symbol", name="mean"))
        listing = _text(await call("list_dir"))
        assert "calc/" in listing and ".env  [withheld: secret file]" in listing
        unknown_ref = _text(await call("read_range", path="calc/stats.py", end=1, ref="no-such-branch"))
        assert "(ref 'no-such-branch' not found; investigated the default branch head instead)" in unknown_ref
        mapped = await call("repo_map", focus=BODY, tokens=256)
        assert "def mean(values)" in _text(mapped)

        for refused, reason in (
            (await call("read_range", path="../../../etc/passwd"), "leads outside the repository"),
            (await call("read_range", path="/etc/passwd"), "Refused"),
            (await call("read_range", path=".env"), "secret"),
            (await call("search", pattern="(unclosed"), "regex"),
            (await client.call_tool("list_dir", {"repository": str(outside)}), "outside the allowed roots"),
            (await client.call_tool("list_dir", {"repository": "/etc"}), "outside the allowed roots"),
            (await client.call_tool("list_dir", {"repository": "acme/nothing"}), "neither a registered repository"),
            (await client.call_tool("get_investigation", {"investigation_id": 424242}), "not found"),
        ):
            assert refused.is_error, _text(refused)
            assert reason in _text(refused), _text(refused)
        everything = [_text(r) for r in (await call("search", pattern="API_KEY"), await call("list_dir", depth=3))]
        assert not any("do-not-leak" in t or SECRET.strip() in t for t in everything), everything


@pytest.mark.slow
async def test_closing_the_stdio_session_cancels_the_runs_it_started_and_records_it(tmp_path):
    repo, _ = make_repo(tmp_path)
    async with Client(bugsleuth_mcp(tmp_path, tmp_path, explorer="command:sleep 60"), read_timeout_seconds=60) as client:
        started = await client.call_tool("investigate", {"repository": str(repo), "title": TITLE, "wait": False})
        assert not started.is_error, _text(started)
        assert started.structured_content["explorer"] == "command:sleep 60"
    with sqlite3.connect(tmp_path / "data" / "bugsleuth.db") as db:
        status, error = db.execute("select status, error from investigations where id = ?",
                                   (started.structured_content["id"],)).fetchone()  # fmt: skip
    assert status == "cancelled", error

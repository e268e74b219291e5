"""`/mcp` under the service over streamable HTTP, driven by the official SDK's own client: the service app served by
uvicorn on 127.0.0.1 (ephemeral port, its own thread and loop) with an API token; unauthenticated requests get 401,
an authenticated session investigates a registered repository end to end with progress per phase, and the
investigation is the service's own (REST API, dashboard)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from app.config import Settings
from app.main import create_app
from tests.app._mcp_fixtures import BODY, TITLE, ProgressLog, assert_diagnosis, make_repo

TOKEN = "mcp-test-token-7c1d"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@contextmanager
def serve(tmp: Path, **overrides) -> Iterator[str]:  # noqa: ANN003
    """The service (offline explorer, local pool, SQLite under `tmp`) on 127.0.0.1:<ephemeral>; yields its URL."""
    settings = Settings(data_dir=tmp / "data", register_self=False, explorer="offline", job_backend="local",
                        log_level="WARNING", **overrides)  # fmt: skip
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="uvicorn-mcp-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the service did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def authenticated(url: str, token: str = TOKEN) -> Client:
    """An MCP client session on `/mcp` that sends the bearer token."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=120))
    # mode="legacy": the initialize handshake today's clients (Claude Code, Cursor) speak; stdio tests use the newer era
    return Client(streamable_http_client(f"{url}/mcp", http_client=http), read_timeout_seconds=120, mode="legacy")


@pytest.mark.slow
async def test_mcp_over_http_needs_the_token_and_investigates_a_registered_repository_end_to_end(tmp_path):
    repo, commit = make_repo(tmp_path)
    with serve(tmp_path, api_token=TOKEN) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as api:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic eDp5"}):
                refused = await api.post("/mcp", json=INIT, headers={**MCP_HEADERS, **headers})
                assert refused.status_code == 401, refused.text
                assert refused.headers["www-authenticate"] == "Bearer"
            with pytest.raises(Exception):  # the SDK's client without the token cannot even start a session
                async with authenticated(url, token="wrong") as client:
                    await client.list_tools()
            registered = await api.post("/api/repos", json={"name": "acme/calc", "location": str(repo)},
                                        headers={"Authorization": f"Bearer {TOKEN}"})  # fmt: skip
            assert registered.status_code == 201, registered.text

            progress = ProgressLog()
            async with authenticated(url) as client:
                assert "investigate" in {t.name for t in (await client.list_tools()).tools}
                result = await client.call_tool("investigate", {"repository": "acme/calc", "title": TITLE, "body": BODY},
                                                progress_callback=progress)  # fmt: skip
                data = assert_diagnosis(result)
                progress.assert_per_phase()
                # over HTTP a caller names registered repositories only, never a path on the server
                by_path = await client.call_tool("read_range", {"repository": str(repo), "path": "calc/stats.py"})
                assert by_path.is_error and "registered repositories only" in by_path.content[0].text
                read = await client.call_tool("read_range", {"repository": "acme/calc", "path": "../.env"})
                assert read.is_error and "leads outside the repository" in read.content[0].text

            # the service's own investigation: the REST API and the dashboard show it
            detail = (await api.get(f"/api/investigations/{data['id']}")).json()
            assert detail["status"] == "done" and detail["report"]["source"] == "mcp" and detail["commit"] == commit
            page = await api.get(f"/investigations/{data['id']}")
            assert page.status_code == 200 and TITLE.split(" with ")[0] in page.text


@pytest.mark.slow
async def test_mcp_over_http_on_loopback_without_a_token_refuses_a_foreign_host(tmp_path):
    with serve(tmp_path) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as api:
            rebound = await api.post("/mcp", json=INIT, headers={**MCP_HEADERS, "host": "evil.example:8000"})
            assert rebound.status_code in (400, 421), rebound.text
        async with Client(f"{url}/mcp", read_timeout_seconds=60) as client:
            listed = await client.call_tool("list_repositories", {})
            assert not listed.is_error and "No repositories registered." in listed.content[0].text

"""`/mcp` under the service: the MCP server over streamable HTTP, on the service's runtime, behind the API's own
token check (`authorize`, the one hook point) and the service's access-policy middleware.

`create_app` calls `mount_mcp(app, settings)` once and `stop()` at the end of its lifespan. The SDK takes as long
to import as the rest of the service, so the server is built on the first authorized request (off the event loop),
and its session manager then runs in a task of its own until `stop()`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import FastAPI, HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from app.config import Settings
from app.deps import app_settings, check_writer
from app.security import is_loopback

PATH = "/mcp"
"""Where the MCP endpoint is served."""
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


async def authorize(request: Request) -> None:
    """Every MCP request passes the API's write guard: the bearer token when one is configured (or a logged-in
    dashboard session), open on a loopback bind without a token. Raises HTTPException (401) otherwise."""
    check_writer(request, await app_settings(request))


def _build(app: FastAPI, settings: Settings) -> tuple[Any, ASGIApp]:
    """The MCP server on the app's runtime (registered repositories only: the caller is remote) and its ASGI
    handler."""
    # lazy: imported here, in a worker thread on first use: the SDK's import would double the service's start-up.
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from mcp.server.transport_security import TransportSecuritySettings

    from app.mcp_server.backend import Backend  # lazy: as above, with the SDK they build on
    from app.mcp_server.server import build_server

    server = build_server(Backend(lambda: getattr(app.state, "runtime", None)))
    # DNS-rebinding protection (Host and Origin must be loopback) where it is the only guard: a loopback bind
    # without a token. With a token a rebound page cannot authenticate; off loopback the Host is the operator's.
    if is_loopback(settings.host) and settings.api_token is None:
        security = TransportSecuritySettings(allowed_hosts=_LOOPBACK_HOSTS, allowed_origins=_LOOPBACK_ORIGINS)
    else:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server.streamable_http_app(streamable_http_path=PATH, transport_security=security)  # sets up the session manager
    return server, StreamableHTTPASGIApp(server.session_manager)


class McpMount:
    """The ASGI endpoint at `/mcp`: authorizes, builds the server once, and hands requests to the SDK."""

    def __init__(self, app: FastAPI, settings: Settings) -> None:
        self._app = app
        self._settings = settings
        self._handler: ASGIApp | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._stopping = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await authorize(Request(scope, receive))
        except HTTPException as exc:
            await JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)(scope, receive, send)
            return
        handler = self._handler or await self._start()
        await handler(scope, receive, send)

    async def _start(self) -> ASGIApp:
        async with self._lock:
            if self._handler is None:
                server, handler = await asyncio.to_thread(_build, self._app, self._settings)
                ready = asyncio.Event()
                self._task = asyncio.create_task(self._serve(server, ready), name="bugsleuth-mcp-sessions")
                await ready.wait()
                if self._task.done():  # the session manager failed to start: say why
                    self._task.result()
                self._handler = handler
        return self._handler

    async def _serve(self, server: Any, ready: asyncio.Event) -> None:
        try:
            async with server.session_manager.run():
                ready.set()
                await self._stopping.wait()
        finally:
            ready.set()

    async def stop(self) -> None:
        """Close every MCP session (in the app's lifespan, before the database goes)."""
        self._stopping.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)


def mount_mcp(app: FastAPI, settings: Settings) -> McpMount:
    """Serve the MCP tools at `/mcp` (every method: POST messages, GET stream, DELETE session)."""
    mount = McpMount(app, settings)
    app.router.routes.append(Route(PATH, endpoint=mount))
    return mount

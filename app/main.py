"""The FastAPI application factory. Nothing happens at import time: `create_app()` builds the app and its
lifespan opens the database, runs migrations, registers this checkout and starts the job backend."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from app.batch import IntakeBatcher
from app.config import Settings, get_settings
from app.dashboard import routes as dashboard
from app.db import Database
from app.errors import install_error_handlers
from app.mcp_server.http import mount_mcp
from app.observability import Metrics, RequestContextMiddleware, configure_logging
from app.routes import docs, health, investigations, reports, repos, webhooks
from app.runtime import InvestigateFn, Runtime
from app.security import install_security
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("bugsleuth.service")


class BodySizeLimitMiddleware:
    """Refuses bodies over `max_bytes` with 413: by Content-Length up front, and by counting streamed bytes."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.max_bytes
                except ValueError:
                    too_big = False
                if too_big:
                    await self._refuse(send)
                    return
        seen = 0
        refused = False

        async def counting_receive() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # Answer now and tell the app the client went away: it stops reading and its own
                    # (error) response is dropped below.
                    refused = True
                    await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, counting_receive, guarded_send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"detail": f"request body larger than {self.max_bytes} bytes"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _build_jobs(runtime: Runtime) -> Any:
    backend = runtime.settings.resolved_job_backend
    if backend == "local":
        # lazy: only the chosen backend is imported (procrastinate and psycopg are heavy)
        from app.jobs.local import LocalPool

        return LocalPool(runtime)
    if backend == "procrastinate":
        from app.jobs.procrastinate_app import ProcrastinateJobs  # lazy: as above

        return ProcrastinateJobs(runtime)
    from app.jobs import NoJobs  # lazy: as above

    return NoJobs()


async def register_checkout(runtime: Runtime) -> None:
    """Register the checkout the service runs from, so a newcomer can post a report at once."""
    from app import store  # lazy: only a service that registers its own checkout needs these
    from app.repos import checkout_root, name_from_remote

    root = checkout_root()
    name = name_from_remote(root)
    async with runtime.db.session() as s:
        if await store.get_repository(s, name) is None:
            await store.add_repository(s, name, str(root))
            log.info("registered this checkout", extra={"repo": name, "location": str(root)})


def create_app(settings: Settings | None = None, *, investigate_fn: InvestigateFn | None = None) -> FastAPI:
    """Build the service. `settings` defaults to `get_settings()`; `investigate_fn` replaces the funnel
    (tests). The returned app's lifespan does all I/O."""
    settings = settings or get_settings()
    settings.check()
    # Routes read these settings from app.state (not through a dependency override: FastAPI re-analyses an
    # overridden dependency on every request, which costs more than the whole intake).
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_logging(settings.log_level, json_logs=settings.log_json)
        db = Database(settings.resolved_database_url)
        await db.migrate()
        runtime = Runtime(settings=settings, db=db, metrics=metrics, investigate_fn=investigate_fn)
        if settings.register_self:
            await register_checkout(runtime)
        runtime.jobs = _build_jobs(runtime)
        await runtime.jobs.start()
        runtime.intake = IntakeBatcher(runtime)
        runtime.intake.start()
        app.state.runtime = runtime
        log.info(
            "service ready",
            extra={"database": db.engine.dialect.name, "jobs": settings.resolved_job_backend, "explorer": settings.explorer},
        )
        try:
            yield
        finally:
            await mcp_http.stop()
            await runtime.intake.stop()
            await runtime.jobs.stop()
            await db.dispose()
            app.state.runtime = None

    app = FastAPI(
        title="bugsleuth",
        version="0.1.0",
        summary="Read-only bug investigation: bug report in, validated diagnosis out.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    install_error_handlers(app)
    app.state.settings = settings
    app.state.metrics = metrics

    for module in (reports, investigations, repos, webhooks, health, docs, dashboard):
        app.include_router(module.router)
    mcp_http = mount_mcp(app, settings)  # /mcp: the MCP tools over streamable HTTP, behind the API's token check

    # Middleware added last runs first: request id, metrics and access log, then size limit, then the access policy.
    install_security(app, settings)
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(RequestContextMiddleware, metrics=metrics, log_access=settings.access_log)
    return app

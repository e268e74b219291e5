"""`bugsleuth mcp`: the MCP server on stdin/stdout, on a runtime of its own over the service's settings and
database, running the investigations it submits in this process."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from collections.abc import Sequence
from pathlib import Path

from app.config import Settings
from app.db import Database
from app.mcp_server.backend import Backend
from app.mcp_server.server import build_server
from app.observability import configure_logging
from app.runtime import Runtime


async def serve_stdio(settings: Settings, roots: Sequence[Path]) -> None:
    """Serve until the client closes stdin (or SIGTERM); the runs still going are cancelled and recorded."""
    configure_logging(settings.log_level, json_logs=settings.log_json)  # stderr: stdout is the protocol's
    db = Database(settings.resolved_database_url)
    await db.migrate()
    runtime = Runtime(settings=settings, db=db, worker_name=f"mcp:{socket.gethostname()}:{os.getpid()}")
    backend = Backend(lambda: runtime, roots=roots, runs_jobs=True)
    server = build_server(backend, dashboard_url=f"http://{settings.host}:{settings.port}")
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        await server.run_stdio_async()
    except asyncio.CancelledError:
        pass  # SIGTERM: shut down like a closed stdin
    finally:
        # Clients send SIGTERM 2 s after closing stdin: it must not cut short recording the cancellations.
        loop.add_signal_handler(signal.SIGTERM, lambda: None)
        try:
            await backend.close()
            await db.dispose()
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

"""Server-sent events of one investigation, read from the trace-events table (so any process can stream
what any worker is doing)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from app import store
from app.db import run_to_completion
from app.runtime import Runtime
from app.views import TraceEventView
from schemas import Status

POLL_S = 0.3
"""How often the stream looks for new events."""
KEEPALIVE_S = 15.0
"""A comment line is sent when nothing happened for this long (keeps proxies from closing the stream)."""


def sse(event_id: int | None, event: str, data: object) -> str:
    """One server-sent event in wire format."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, default=str, separators=(',', ':'))}\n\n"


async def investigation_events(
    runtime: Runtime,
    investigation_id: int,
    *,
    after: int = 0,
    is_disconnected: Callable[[], Awaitable[bool]] | None = None,
    poll_s: float = POLL_S,
) -> AsyncIterator[str]:
    """Phase changes, tool calls and status changes as they are persisted; ends with an `end` event once
    the investigation is finished and every event was sent."""
    last = after
    quiet_since = time.monotonic()
    yield "retry: 1000\n\n"
    while True:
        events, status = await run_to_completion(poll_events(runtime, investigation_id, last))
        for ev in events:
            last = ev.id
            yield sse(ev.id, ev.kind, {"run": ev.run, **ev.data})
        if events:
            quiet_since = time.monotonic()
            continue
        if status is None or status in store.FINISHED:
            yield sse(None, "end", {"status": status.value if status else None})
            return
        if is_disconnected is not None and await is_disconnected():
            return
        if time.monotonic() - quiet_since > KEEPALIVE_S:
            quiet_since = time.monotonic()
            yield ": keepalive\n\n"
        await asyncio.sleep(poll_s)


async def poll_events(
    runtime: Runtime, investigation_id: int, after: int
) -> tuple[list[TraceEventView], Status | None]:
    """Up to 500 persisted events after id `after`, and the investigation's status (None: unknown), in one
    read transaction (callers that can be cancelled wrap it in `run_to_completion`)."""
    async with runtime.db.read_session() as s:
        events = await store.trace_events(s, investigation_id, after=after, limit=500)
        return events, await store.get_status(s, investigation_id)

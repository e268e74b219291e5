"""Cancellation of a running investigation from any thread: the run stops within a second, partial trace kept."""

from __future__ import annotations

import asyncio
import threading

__all__ = ("CancelToken",)


class CancelToken:
    """A cancellation flag shared by the caller, the harness and tool subprocesses.

    Wraps a `threading.Event` (passed to tools such as `search(cancel=...)`, which kill their subprocess
    when it is set) and can be awaited from asyncio code.
    """

    def __init__(self) -> None:
        self.event = threading.Event()
        """The underlying event; tools poll it and kill their subprocess when it is set."""
        self.reason: str = ""
        """Why the run was cancelled, for the termination detail."""

    def cancel(self, reason: str = "cancelled by request") -> None:
        """Ask the run to stop; safe to call from any thread, more than once (the first reason wins)."""
        if not self.event.is_set():
            self.reason = reason
        self.event.set()

    @property
    def cancelled(self) -> bool:
        """Whether cancellation was requested."""
        return self.event.is_set()

    async def wait(self, poll_s: float = 0.05) -> None:
        """Return once cancellation is requested (polls, so it works across threads and loops)."""
        while not self.event.is_set():
            await asyncio.sleep(poll_s)

"""The job body shared by the in-process pool and procrastinate workers: one run of one investigation.

Resolve the repository and ref to a read-only tree, call the funnel with a CancelToken, persist trace events
as they happen (so any process can stream them), store the diagnosis and the final status.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from app import store
from app.caches import enforce_caps
from app.db import run_to_completion
from app.observability import investigation_id_var, request_id_var
from app.repos import RepositoryError, prepare_tree
from app.runtime import InvestigateFn, Runtime
from funnel.cancel import CancelToken
from schemas import Status, StopReason

log = logging.getLogger("bugsleuth.jobs")

CANCEL_POLL_S = 0.25
"""How often a run checks the database for a cancel request (well under the 1 s promise)."""
FLUSH_S = 0.2
"""How often buffered trace events are written."""


def default_investigate_fn() -> InvestigateFn:
    """`funnel.run.loop.investigate`, imported when first needed."""
    from funnel import investigate  # lazy: a service that only queues never loads the pipeline

    return investigate


class _EventSink:
    """Collects trace events from the investigation thread; the job's loop writes them in batches."""

    def __init__(self, runtime: Runtime) -> None:
        self._lock = threading.Lock()
        self._pending: list[dict[str, Any]] = []
        self._metrics = runtime.metrics

    def __call__(self, event: Any) -> None:
        data = event.model_dump(mode="json") if hasattr(event, "model_dump") else dict(event)
        if data.get("kind") == "tool_call":
            self._metrics.run_tool_calls.labels(str(data.get("tool", "?"))).inc()
        with self._lock:
            self._pending.append(data)

    def add(self, data: dict[str, Any]) -> None:
        with self._lock:
            self._pending.append(data)

    def drain(self) -> list[dict[str, Any]]:
        with self._lock:
            out, self._pending = self._pending, []
        return out

    def requeue(self, batch: list[dict[str, Any]]) -> None:
        """Put back a drained batch that could not be written, ahead of newer events."""
        with self._lock:
            self._pending[:0] = batch


def _status_event(status: Status, **extra: Any) -> dict[str, Any]:
    return {"kind": "status", "status": status.value, "ts": datetime.now(timezone.utc).isoformat(), **extra}


async def _flush(runtime: Runtime, investigation_id: int, run: int, sink: _EventSink) -> None:
    batch = sink.drain()
    if batch:
        written = False

        async def write() -> None:
            nonlocal written
            await _append(runtime, investigation_id, run, batch)
            written = True

        try:
            await run_to_completion(write())
        except BaseException:
            if not written:
                sink.requeue(batch)  # a failed or interrupted write must not lose events
            raise


async def _append(runtime: Runtime, investigation_id: int, run: int, batch: list[dict[str, Any]]) -> None:
    async with runtime.db.session() as s:
        await store.append_trace_events(s, investigation_id, run, batch)


async def _cancel_requested(runtime: Runtime, investigation_id: int) -> bool:
    async with runtime.db.read_session() as s:
        return await store.cancel_requested(s, investigation_id)


async def _watch(
    runtime: Runtime,
    investigation_id: int,
    run: int,
    sink: _EventSink,
    cancel: CancelToken,
    should_abort: Callable[[], bool] | None,
    stop: asyncio.Event,
) -> None:
    last_check = 0.0
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), FLUSH_S)
        except TimeoutError:
            pass
        try:
            await _flush(runtime, investigation_id, run, sink)
            now = time.monotonic()
            if not cancel.cancelled and now - last_check >= CANCEL_POLL_S:
                last_check = now
                if should_abort is not None and should_abort():
                    cancel.cancel("cancelled by request")
                elif await run_to_completion(_cancel_requested(runtime, investigation_id)):
                    cancel.cancel("cancelled by request")
        except Exception:  # a DB hiccup must not kill the run; the next tick retries
            log.warning("event flush or cancel check failed", exc_info=True)


def _call_in_thread(fn: InvestigateFn, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # Own event loop in a worker thread: CPU-heavy map building and tool calls never stall the service loop.
    return asyncio.run(fn(*args, **kwargs))


async def run_investigation(
    runtime: Runtime,
    investigation_id: int,
    *,
    cancel: CancelToken | None = None,
    claimed: bool = False,
    should_abort: Callable[[], bool] | None = None,
) -> Status:
    """Run one investigation to its end and store the outcome; returns the final status.

    `claimed`: the caller already marked it running (the local pool claims before calling). Investigation
    failures (bad repository, explorer errors) end as `failed` here; database errors propagate so the job
    backend can retry.
    """
    token = investigation_id_var.set(investigation_id)
    request_token = request_id_var.set(None)
    try:
        return await _run(runtime, investigation_id, cancel or CancelToken(), claimed, should_abort)
    finally:
        request_id_var.reset(request_token)
        investigation_id_var.reset(token)


async def _run(
    runtime: Runtime,
    investigation_id: int,
    cancel: CancelToken,
    claimed: bool,
    should_abort: Callable[[], bool] | None,
) -> Status:
    async with runtime.db.session() as s:
        if not claimed and not await store.claim(s, investigation_id, worker=runtime.worker_name):
            return await store.get_status(s, investigation_id) or Status.failed
        run = await store.run_number(s, investigation_id)
        report, explorer, extra_context = await store.investigation_for_job(s, investigation_id)
        request_id_var.set(await store.request_id_of(s, investigation_id))
        repo = await store.get_repository(s, report.repo) if report.repo else None
        memory = await store.repo_memory(s, report.repo)
        if await store.cancel_requested(s, investigation_id):
            cancel.cancel("cancelled before start")
    log.info("investigation started", extra={"run": run, "repo": report.repo, "explorer": explorer})
    sink = _EventSink(runtime)
    sink.add(_status_event(Status.running, run=run, worker=runtime.worker_name))
    stop_watching = asyncio.Event()
    watcher = asyncio.create_task(_watch(runtime, investigation_id, run, sink, cancel, should_abort, stop_watching))
    started = time.monotonic()
    status, diagnosis, markdown, error = Status.failed, None, None, None
    validated: Any = None  # the Diagnosis object, for comment-back
    try:
        if cancel.cancelled:
            status, error = Status.cancelled, cancel.reason
        elif repo is None:
            error = f"repository {report.repo!r} is not registered (see /api/repos)"
        else:
            tree = await prepare_tree(runtime.settings, repo, report.ref)
            if tree.note:
                sink.add({"kind": "note", "detail": tree.note})
            fn = runtime.investigate_fn or default_investigate_fn()
            kwargs = dict(
                explorer=explorer, cancel=cancel, commit=tree.commit, git_dir=tree.git_dir,
                extra_context=extra_context, memory=memory, on_event=sink,
            )
            result = await asyncio.to_thread(_call_in_thread, fn, (report, tree.root), kwargs)
            validated = result.diagnosis
            diagnosis = validated.model_dump(mode="json")
            markdown = result.report_markdown
            reason = result.diagnosis.termination.reason
            if reason == StopReason.cancelled or cancel.cancelled:
                status = Status.cancelled
            elif reason == StopReason.error:
                status, error = Status.failed, result.diagnosis.termination.detail or "investigation error"
            else:
                status = Status.done
    except RepositoryError as exc:
        error = str(exc)
    except asyncio.CancelledError:
        # Shutdown: keep what was traced, leave the row `running` so the next start re-queues it.
        cancel.cancel("worker shutting down")
        watcher.cancel()
        await _record_interruption(runtime, investigation_id, run, sink)
        raise
    except Exception as exc:  # the explorer's or funnel's failure: the run fails, the service stays up
        log.exception("investigation failed")
        error = f"{type(exc).__name__}: {exc}"
    # Let the watcher finish its current flush: cancelling it mid-write would drop the batch it holds.
    stop_watching.set()
    await watcher
    sink.add(_status_event(status, run=run, error=error))
    await _flush(runtime, investigation_id, run, sink)
    async with runtime.db.session() as s:
        await store.finish(
            s, investigation_id, status=status, diagnosis=diagnosis, report_markdown=markdown, error=error
        )
    elapsed = time.monotonic() - started
    termination = (diagnosis or {}).get("termination", {}).get("reason") or ("cancelled" if status == Status.cancelled else "error")
    runtime.metrics.finished.labels(status.value, termination).inc()
    runtime.metrics.duration.observe(elapsed)
    log.info("investigation finished", extra={"status": status.value, "seconds": round(elapsed, 3), "error": error})
    if status == Status.done and runtime.settings.comment_back and validated is not None:
        await _comment_back(runtime, investigation_id, run, report, validated)
    await asyncio.to_thread(enforce_caps, runtime.settings)
    return status


async def _record_interruption(runtime: Runtime, investigation_id: int, run: int, sink: _EventSink) -> None:
    """Store what an interrupted run traced; a user's cancel (procrastinate aborts an async job by cancelling its
    task) also ends the investigation `cancelled`, a shutdown leaves it `running` for the next start."""
    try:
        await _flush(runtime, investigation_id, run, sink)
        async with runtime.db.session() as s:
            if await store.cancel_requested(s, investigation_id):
                await store.append_trace_events(
                    s, investigation_id, run, [_status_event(Status.cancelled, run=run, error=None)]
                )
                await store.finish(s, investigation_id, status=Status.cancelled)
                runtime.metrics.finished.labels(Status.cancelled.value, "cancelled").inc()
    except Exception:
        log.warning("could not record the interruption", exc_info=True)


async def _comment_back(runtime: Runtime, investigation_id: int, run: int, report: Any, diagnosis: Any) -> None:
    """Post or update the tracker comment after the investigation is stored `done`; its outcome is a trace note."""
    from app.comment import post_diagnosis_comment  # lazy: httpx and the export only when comment-back is on

    try:
        result = await post_diagnosis_comment(runtime.settings, report, diagnosis, investigation_id=investigation_id)
        async with runtime.db.session() as s:
            await store.append_trace_events(s, investigation_id, run, [{"kind": "note", "detail": f"comment-back: {result.detail}"}])
            if result.ok:
                await store.mark_commented(s, investigation_id)
        if not result.ok and result.action != "skipped":
            log.warning("comment-back failed", extra={"investigation_id": investigation_id, "detail": result.detail})
    except Exception:
        log.warning("comment-back failed", exc_info=True)

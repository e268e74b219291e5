"""Parsing files into cache rows, serially or in a process pool (both cores for cold builds)."""

from __future__ import annotations

import os
import threading
import time

from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from repomap.cache import encode
from repomap.languages import grammar
from repomap.names import index_rows
from repomap.tags import FileTags, extract_tags
from repomap.walk import MapCancelled

_CANCEL_POLL_S = 0.05
"""How often a pooled parse looks at the cancel event."""

Job = tuple[bytes, str, bytes]
"""(cache key, language, file bytes)."""
Row = tuple[bytes, bytes, bytes, "FileTags | None", list[tuple[str, bytes]]]
"""(cache key, core blob, refs blob, the tags themselves when parsed in this process, the name index rows)."""


def parse_batch(jobs: list[Job], max_signature_chars: int, keep: bool = False,
                cancel: threading.Event | None = None) -> list[Row]:
    """Extract and encode the tags of a batch of files; `keep` returns the tags too (no decoding needed).
    Raises `MapCancelled` once `cancel` is set (looked at between files)."""
    rows: list[Row] = []
    for key, language, data in jobs:
        if cancel is not None and cancel.is_set():
            raise MapCancelled("cancelled while parsing")
        tags = extract_tags(data, language, max_signature_chars=max_signature_chars)
        core, refs = encode(tags)
        rows.append((key, core, refs, tags if keep else None, index_rows(key, tags.defs)))
    return rows


def usable_workers(workers: int, *, adaptive: bool = True, busy: float | None = None) -> int:
    """How many parse processes are worth starting: no more than cores, nor (when `adaptive`) than idle cores.

    `busy` is how many cores other processes use now (default: the 1-minute load average). On a saturated
    machine a pool only adds start-up, copying and cache contention: measured 10-20% slower than parsing
    in-process at a load of 5 on 2 cores.
    """
    cores = os.cpu_count() or 1
    n = min(workers, cores)
    if adaptive:
        if busy is None and hasattr(os, "getloadavg"):
            busy = os.getloadavg()[0]
        if busy is not None:
            idle = cores - busy
            n = min(n, max(1, int(idle + 0.5)))
    return max(1, n)


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat", encoding="ascii") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    return sum(fields[:8]), fields[3] + fields[4]  # all time (guests are counted in user), idle + iowait


def busy_cores(sample_s: float = 0.1) -> float | None:
    """Cores in use by other processes right now, sampled from /proc/stat over `sample_s` (None off Linux).

    The load average is a minute-long memory: right after other (or our own earlier) jobs end it still
    counts them, and a cold build on an idle machine would then start a single process.
    """
    try:
        total0, idle0 = _cpu_times()
        time.sleep(sample_s)
        total1, idle1 = _cpu_times()
    except (OSError, ValueError, IndexError):
        return None
    if total1 <= total0:
        return None
    cores = os.cpu_count() or 1
    return cores * (1.0 - (idle1 - idle0) / (total1 - total0))


def parse_all(
    jobs: list[Job], *, max_signature_chars: int, workers: int, threshold: int, adaptive: bool = True,
    cancel: threading.Event | None = None,
) -> list[Row]:
    """Parse every job; a process pool splits the work when there are more than `threshold` jobs.

    Raises `MapCancelled` within about `_CANCEL_POLL_S` of `cancel` being set: the pool's queued batches are
    dropped and the running ones (each 1/16 of the work) finish in the background without being waited for.
    """
    if len(jobs) > threshold:
        workers = usable_workers(workers, adaptive=adaptive, busy=busy_cores() if adaptive and workers > 1 else None)
    if len(jobs) <= threshold or workers <= 1:
        return parse_batch(jobs, max_signature_chars, keep=True, cancel=cancel)
    # interleave big and small files so both workers finish together; many small batches balance the load
    ordered = sorted(jobs, key=lambda j: -len(j[2]))
    n_batches = workers * 8
    batches: list[list[Job]] = [ordered[i::n_batches] for i in range(n_batches)]
    rows: list[Row] = []
    try:
        import multiprocessing  # lazy: only cold builds of big trees start a pool

        # fork is fastest (workers inherit loaded grammars) but unsafe once other threads exist
        method = "fork" if threading.active_count() == 1 else "forkserver"
        if method == "fork":  # compile each grammar and query once, before the workers inherit them
            for language in sorted({j[1] for j in jobs}):
                grammar(language)
        context = multiprocessing.get_context(method)
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    except (OSError, RuntimeError):
        # no process pool here (sandbox, fork limits): do it ourselves
        return parse_batch(jobs, max_signature_chars, keep=True, cancel=cancel)
    try:
        pending = {pool.submit(parse_batch, batch, max_signature_chars) for batch in batches}
        while pending:
            done, pending = wait(pending, timeout=_CANCEL_POLL_S, return_when=FIRST_COMPLETED)
            for future in done:
                rows.extend(future.result())
            if cancel is not None and cancel.is_set():
                raise MapCancelled("cancelled while parsing")
    except (OSError, RuntimeError):  # a broken pool (a worker killed...): do the rest ourselves
        pool.shutdown(wait=False, cancel_futures=True)
        return parse_batch(jobs, max_signature_chars, keep=True, cancel=cancel)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return rows

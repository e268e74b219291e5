"""Parsing files into cache rows, serially or in a process pool (both cores for cold builds)."""

from __future__ import annotations

import os
import threading

from repomap.cache import encode
from repomap.tags import FileTags, extract_tags

Job = tuple[bytes, str, bytes]
"""(cache key, language, file bytes)."""
Row = tuple[bytes, bytes, bytes, "FileTags | None"]
"""(cache key, core blob, refs blob, the tags themselves when parsed in this process)."""


def parse_batch(jobs: list[Job], max_signature_chars: int, keep: bool = False) -> list[Row]:
    """Extract and encode the tags of a batch of files; `keep` returns the tags too (no decoding needed)."""
    rows: list[Row] = []
    for key, language, data in jobs:
        tags = extract_tags(data, language, max_signature_chars=max_signature_chars)
        core, refs = encode(tags)
        rows.append((key, core, refs, tags if keep else None))
    return rows


def usable_workers(workers: int, *, adaptive: bool = True) -> int:
    """How many parse processes are worth starting: no more than cores, nor (when `adaptive`) than idle cores.

    On a saturated machine a pool only adds start-up, copying and cache contention: measured 10-20% slower
    than parsing in-process at a load of 5 on 2 cores.
    """
    cores = os.cpu_count() or 1
    n = min(workers, cores)
    if adaptive and hasattr(os, "getloadavg"):
        idle = cores - os.getloadavg()[0]
        n = min(n, max(1, int(idle + 0.5)))
    return max(1, n)


def parse_all(
    jobs: list[Job], *, max_signature_chars: int, workers: int, threshold: int, adaptive: bool = True
) -> list[Row]:
    """Parse every job; a process pool splits the work when there are more than `threshold` jobs."""
    if len(jobs) > threshold:
        workers = usable_workers(workers, adaptive=adaptive)
    if len(jobs) <= threshold or workers <= 1:
        return parse_batch(jobs, max_signature_chars, keep=True)
    # interleave big and small files so both workers finish together; many small batches balance the load
    ordered = sorted(jobs, key=lambda j: -len(j[2]))
    n_batches = workers * 8
    batches: list[list[Job]] = [ordered[i::n_batches] for i in range(n_batches)]
    rows: list[Row] = []
    try:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork is fastest (workers inherit loaded grammars) but unsafe once other threads exist
        method = "fork" if threading.active_count() == 1 else "forkserver"
        context = multiprocessing.get_context(method)
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for part in pool.map(parse_batch, batches, [max_signature_chars] * len(batches)):
                rows.extend(part)
    except (OSError, RuntimeError):
        # no process pool here (sandbox, fork limits): do it ourselves
        return parse_batch(jobs, max_signature_chars, keep=True)
    return rows

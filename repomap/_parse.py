"""Parsing files into cache rows, serially or in a process pool (both cores for cold builds)."""

from __future__ import annotations

import os
import threading

from repomap.cache import encode
from repomap.tags import extract_tags

Job = tuple[bytes, str, bytes]
"""(cache key, language, file bytes)."""
Row = tuple[bytes, bytes, bytes, bool]
"""(cache key, core blob, refs blob, parse error)."""


def parse_batch(jobs: list[Job], max_signature_chars: int) -> list[Row]:
    """Extract and encode the tags of a batch of files."""
    rows: list[Row] = []
    for key, language, data in jobs:
        tags = extract_tags(data, language, max_signature_chars=max_signature_chars)
        core, refs = encode(tags)
        rows.append((key, core, refs, tags.parse_error))
    return rows


def parse_all(jobs: list[Job], *, max_signature_chars: int, workers: int, threshold: int) -> list[Row]:
    """Parse every job; a process pool splits the work when there are more than `threshold` jobs."""
    workers = min(workers, os.cpu_count() or 1)
    if len(jobs) <= threshold or workers <= 1:
        return parse_batch(jobs, max_signature_chars)
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
        return parse_batch(jobs, max_signature_chars)
    return rows

"""Parsing files into cache rows as they are read: in a pool of worker processes for cold builds, else here.

The caller feeds jobs as it reads files (`ParsePipeline.feed`) and gets rows back as they are done, so file bytes
are held only while in flight. Once more than `threshold` jobs are waiting, a pool of one process per usable core
is started; the calling process keeps its queue full (waiting for room: back-pressure on reading) while it reads,
hashes, stores and decodes, which overlaps with the parsing.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from repomap.cache import decode_core, encode
from repomap.languages import grammar
from repomap.names import index_rows
from repomap.tags import FileTags, extract_tags
from repomap.walk import MapCancelled

_CANCEL_POLL_S = 0.05
"""How often a pooled parse looks at the cancel event."""
_BATCH_FILES = 48
"""Files per batch sent to a worker process (at most) ..."""
_BATCH_BYTES = 512 * 1024
"""... or this many bytes of source, whichever comes first: small enough for both processes to finish together."""
_QUEUED_PER_PROCESS = 2
"""Batches kept queued per worker process: the next is ready when one ends, and little file data is held."""

Job = tuple[bytes, str, bytes]
"""(cache key, language, file bytes)."""
Row = tuple[bytes, bytes, bytes, FileTags, list[tuple[str, bytes]]]
"""(cache key, core blob, refs blob, the tags without per-line references, the name index rows)."""
_WireRow = tuple[bytes, bytes, bytes, list[tuple[str, bytes]]]
"""A row as a worker process sends it (the tags are decoded from the core blob by the receiver)."""


def _core_tags(tags: FileTags) -> FileTags:
    return FileTags(tags.defs, "", b"", b"", tags.agg_names, tags.agg_kinds, tags.agg_counts, tags.parse_error)


def parse_batch(jobs: list[Job], max_signature_chars: int, cancel: threading.Event | None = None) -> list[Row]:
    """Extract and encode the tags of a batch of files. Raises `MapCancelled` once `cancel` is set (looked at
    between files)."""
    rows: list[Row] = []
    for key, language, data in jobs:
        if cancel is not None and cancel.is_set():
            raise MapCancelled("cancelled while parsing")
        tags = extract_tags(data, language, max_signature_chars=max_signature_chars)
        core, refs = encode(tags)
        rows.append((key, core, refs, _core_tags(tags), index_rows(key, tags.defs)))
    return rows


def _parse_wire(jobs: list[Job], max_signature_chars: int) -> list[_WireRow]:
    """`parse_batch` in a worker process: the blobs and name rows only (the tags travel once, inside the core)."""
    return [(r[0], r[1], r[2], r[4]) for r in parse_batch(jobs, max_signature_chars)]


def usable_workers(workers: int, *, adaptive: bool = True, busy: float | None = None) -> int:
    """How many processes (this one included) are worth parsing in: no more than cores, nor (when `adaptive`)
    more than one when other processes leave less than half a core idle.

    `busy` is how many cores other processes use now (default: the 1-minute load average). The calling process
    parses too and file bytes are streamed in small batches, so a second process costs little more than its
    start; on a saturated machine it only adds start-up, copying and cache contention.
    """
    cores = os.cpu_count() or 1
    n = min(workers, cores)
    if adaptive:
        if busy is None and hasattr(os, "getloadavg"):
            busy = os.getloadavg()[0]
        if busy is not None and cores - busy < 0.5:
            n = 1
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


def _start_pool(processes: int, languages: set[str]) -> ProcessPoolExecutor | None:
    try:
        import multiprocessing  # lazy: only cold builds of big trees start a pool

        # fork is fastest (workers inherit loaded grammars) but unsafe once other threads exist
        method = "fork" if threading.active_count() == 1 else "forkserver"
        if method == "fork":  # compile the grammars seen so far once, before the workers inherit them
            for language in sorted(languages):
                grammar(language)
        return ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context(method))
    except (OSError, RuntimeError):  # no process pool here (sandbox, fork limits): do it ourselves
        return None


class ParsePipeline:
    """Parses the jobs fed to it, in a pool of up to `workers` processes, or in this one (see the module docstring).

    Raises `MapCancelled` (from `feed` or `finish`) within about `_CANCEL_POLL_S` of `cancel` being set: queued
    batches are dropped, running ones finish in the background without being waited for.
    """

    def __init__(self, *, max_signature_chars: int, workers: int, threshold: int, adaptive: bool = True,
                 cancel: threading.Event | None = None) -> None:
        self._max_sig = max_signature_chars
        self._workers = workers
        self._threshold = threshold
        self._adaptive = adaptive
        self._cancel = cancel
        self._waiting: list[Job] = []
        self._waiting_bytes = 0
        self._pool: ProcessPoolExecutor | None = None
        self._pool_tried = False
        self._futures: dict[Future, list[Job]] = {}
        self._fed = 0
        self.processes = 1
        """Processes parsing (this one included), known once the pool was decided on."""

    def feed(self, jobs: list[Job]) -> list[Row]:
        """Queue jobs; returns the rows finished since the last call (of these or earlier jobs)."""
        for job in jobs:
            self._waiting.append(job)
            self._waiting_bytes += len(job[2])
        self._fed += len(jobs)
        out: list[Row] = []
        if not self._pool_tried and self._fed > self._threshold:
            self._decide_pool()
        if self._pool_tried:
            while len(self._waiting) >= _BATCH_FILES or self._waiting_bytes >= _BATCH_BYTES:
                self._dispatch(self._take_batch(), out)
        self._collect(out, block=False)
        return out

    def finish(self) -> list[Row]:
        """Parse everything still queued and wait for the workers; the remaining rows."""
        out: list[Row] = []
        while self._waiting:
            self._dispatch(self._take_batch(), out)
        while self._futures:
            self._collect(out, block=True)
        self.close()
        return out

    def close(self, *, wait_for_workers: bool = True) -> None:
        """Stop the worker processes (queued batches are dropped)."""
        if self._pool is not None:
            self._pool.shutdown(wait=wait_for_workers, cancel_futures=True)
            self._pool = None
        self._futures.clear()

    def _decide_pool(self) -> None:
        self._pool_tried = True
        busy = busy_cores() if self._adaptive and self._workers > 1 else None
        n = usable_workers(self._workers, adaptive=self._adaptive, busy=busy)
        if n > 1:
            # one worker per core: this process reads, hashes, stores and decodes the rows, which is enough work
            # that a share of the parsing on top made it the bottleneck (a monorepo's cold map took 1.6x as long)
            self._pool = _start_pool(n, {j[1] for j in self._waiting})
        self.processes = n if self._pool is not None else 1

    def _take_batch(self) -> list[Job]:
        batch: list[Job] = []
        size = 0
        while self._waiting and len(batch) < _BATCH_FILES and size < _BATCH_BYTES:
            job = self._waiting.pop()
            batch.append(job)
            size += len(job[2])
        self._waiting_bytes -= size
        return batch

    def _dispatch(self, batch: list[Job], out: list[Row]) -> None:
        """Send `batch` to the pool (waiting for room in its queue), or parse it here when there is no pool."""
        self._check_cancel()
        while self._pool is not None and len(self._futures) >= _QUEUED_PER_PROCESS * self.processes:
            self._collect(out, block=True)
        if self._pool is not None:
            try:
                self._futures[self._pool.submit(_parse_wire, batch, self._max_sig)] = batch
                return
            except RuntimeError:  # a broken pool: do the rest ourselves
                self._drop_pool()
        out.extend(parse_batch(batch, self._max_sig, cancel=self._cancel))
        self._collect(out, block=False)

    def _collect(self, out: list[Row], *, block: bool) -> None:
        if not self._futures:
            return
        done, _ = wait(list(self._futures), timeout=_CANCEL_POLL_S if block else 0, return_when=FIRST_COMPLETED)
        for future in done:
            batch = self._futures.pop(future)
            try:
                wire = future.result()
            except Exception:  # a worker killed (the pool broken, its other batches cancelled): parse it here
                self._drop_pool()
                out.extend(parse_batch(batch, self._max_sig, cancel=self._cancel))
                continue
            out.extend((key, core, refs, decode_core(core), names) for key, core, refs, names in wire)
        self._check_cancel()

    def _drop_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        self.processes = 1

    def _check_cancel(self) -> None:
        if self._cancel is not None and self._cancel.is_set():
            self.close(wait_for_workers=False)
            raise MapCancelled("cancelled while parsing")


def parse_all(jobs: list[Job], *, max_signature_chars: int, workers: int, threshold: int, adaptive: bool = True,
              cancel: threading.Event | None = None) -> list[Row]:
    """Parse every job (a `ParsePipeline` fed all at once); rows in no particular order."""
    pipeline = ParsePipeline(max_signature_chars=max_signature_chars, workers=workers, threshold=threshold,
                             adaptive=adaptive, cancel=cancel)
    try:
        return pipeline.feed(jobs) + pipeline.finish()
    except BaseException:
        pipeline.close(wait_for_workers=False)
        raise

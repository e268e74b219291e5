"""Collecting a tree's tags for the map: read and hash the files through the gate, find their cached tags, parse
the rest (`_collect`), and the reference graph of the result (`_graph`: a snapshot, patched tables or a fresh build).
"""


from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repomap import cache as _cache
from repomap import graph as _graphs
from repomap import graph_tables as _tables
from repomap._parse import ParsePipeline
from repomap.config import MapConfig
from repomap.encoding import looks_binary
from repomap.gate import Gate, Refused
from repomap.graph import Graph
from repomap.languages import FAMILY, language_for
from repomap.tags import FileTags
from repomap.walk import MapCancelled, SkipReason, WalkResult

if TYPE_CHECKING:
    from repomap.repo_map import MapStats


_GRAPH_VERSION = 6
"""Bump when `repomap.graph` or `repomap.graph_tables` changes: stored graph snapshots are keyed by it."""
_SNAPSHOT_MIN_FILES = 200
"""Smaller trees rebuild their graph faster than a snapshot loads."""
_PATCH_MIN_FILES = 50
"""A stored graph of the same directory is patched when at most this many files changed, ..."""
_PATCH_FRACTION = 4
"""... or at most this fraction (1/n) of the files: beyond that a fresh build costs about the same."""


class LazyTags:
    """Tags per file, decoded from their cache rows on first use: a warm build reads only the files it renders
    (and those whose graph rows it patches)."""

    def __init__(self, keys: list[bytes], tags: list[FileTags | None], cache: _cache.TagCache) -> None:
        self._keys = keys
        self._tags = tags
        self._cache = cache
        self.decoded = 0
        """Files decoded from their cache rows so far."""

    def __len__(self) -> int:
        return len(self._tags)

    def __getitem__(self, i: int) -> FileTags:
        tags = self._tags[i]
        if tags is None:
            core = self._cache.load_core([self._keys[i]]).get(self._keys[i])
            # a row evicted by another process since the build saw it: the file maps as empty until rebuilt
            tags = self._tags[i] = _cache.decode_core(core) if core else FileTags()
            self.decoded += 1
        return tags

    def prefetch(self) -> None:
        """Decode every file not decoded yet, reading their rows in batches (a graph built from all tags)."""
        todo = [i for i, t in enumerate(self._tags) if t is None]
        cores = self._cache.load_core(dict.fromkeys(self._keys[i] for i in todo))
        for i in todo:
            core = cores.get(self._keys[i])
            self._tags[i] = _cache.decode_core(core) if core else FileTags()
        self.decoded += len(todo)

    def __iter__(self):
        return map(self.__getitem__, range(len(self._tags)))


_CHUNK_FILES = 512
"""Files read and hashed before their cache rows are looked up and the missing ones are fed to the parser."""
_STORE_ROWS = 2000
"""Parsed rows written to the cache per transaction (the blobs are not all held until the end)."""


@dataclass
class _Collected:
    """What `_collect` knows about the content keys of one build."""

    binary: dict[bytes, bool] = field(default_factory=dict)
    """Key → stored as binary, for every key whose row is in the cache (found there or written now)."""
    decoded: dict[bytes, FileTags] = field(default_factory=dict)
    """Tags (without per-line references) of the keys parsed in this build."""
    queued: set[bytes] = field(default_factory=set)
    """Keys sent to the parser or stored as binary in this build."""
    rows: list[tuple[bytes, bytes, bytes]] = field(default_factory=list)
    """Tag rows not written yet."""
    name_keys: list[bytes] = field(default_factory=list)
    """Keys of `rows` whose name index rows are in `name_rows`."""
    name_rows: list[tuple[str, bytes]] = field(default_factory=list)
    """Name index rows of `name_keys`, not written yet."""

    def add_parsed(self, rows: list) -> None:
        """Take the parser's rows `(key, core, refs, tags, names)`."""
        for key, core, refs, tags, names in rows:
            self.binary[key] = False
            self.decoded[key] = tags
            self.rows.append((key, core, refs))
            self.name_keys.append(key)
            self.name_rows.extend(names)

    def flush(self, cache: _cache.TagCache, stat_rows: list[tuple[str, int, int, bytes]] | None = None) -> None:
        """Write the rows held (and `stat_rows`) in one transaction."""
        cache.store(self.rows, stat_rows or [], (self.name_keys, self.name_rows))
        self.rows, self.name_keys, self.name_rows = [], [], []


def _read_chunk(gate: Gate, walked: WalkResult, files: list, config: MapConfig, real_root: str,
                known: dict[str, tuple[int, int, bytes]], out: tuple[dict, dict, list], stats: MapStats,
                cancel: threading.Event | None) -> list[tuple[str, bytes, bytes | None]]:
    """Pre-check or read and hash `files`: (path, key, bytes or `BINARY`, None when trusted to the pre-check)."""
    keys, langs, stat_rows = out
    chunk: list[tuple[str, bytes, bytes | None]] = []
    for f in files:
        if cancel is not None and cancel.is_set():
            raise MapCancelled("cancelled while reading files")
        if language_for(f.path) is None:
            walked.skip(SkipReason.unsupported)
            continue
        real = f"{real_root}/{f.path}"
        hit = known.get(real)
        if hit is not None and hit[0] == f.size and hit[1] == f.mtime_ns:
            keys[f.path] = hit[2]
            langs[f.path] = _cache.key_language(hit[2])
            chunk.append((f.path, hit[2], None))
            continue
        try:
            data = gate.read_bytes(f.path)
        except Refused as refused:
            walked.skip(SkipReason(refused.reason.value))
            continue
        spec = language_for(f.path, data)
        langs[f.path] = spec.name
        key = keys[f.path] = _cache.content_key(spec.name, data)
        stats.files_hashed += 1
        chunk.append((f.path, key, _cache.BINARY if looks_binary(data[: config.sniff_bytes]) else data))
        stat_rows.append((real, f.size, f.mtime_ns, key))
    return chunk


def _jobs_of(gate: Gate, chunk: list[tuple[str, bytes, bytes | None]], langs: dict[str, str], config: MapConfig,
             cache: _cache.TagCache, got: _Collected, timings: dict[str, float]) -> list[tuple[bytes, str, bytes]]:
    """The parse jobs of a chunk's keys that are neither cached nor queued (binary ones are stored as such)."""
    t = time.perf_counter()
    present = cache.present(dict.fromkeys(k for _, k, _ in chunk if k not in got.queued and k not in got.binary))
    got.binary.update(present)
    timings["load"] = timings.get("load", 0.0) + time.perf_counter() - t
    jobs: list[tuple[bytes, str, bytes]] = []
    for path, key, data in chunk:
        if key in got.binary or key in got.queued:
            continue
        if data is None:  # pre-check said known but the row is gone: read again
            try:
                data = gate.read_bytes(path)
            except Refused:
                continue
            if looks_binary(data[: config.sniff_bytes]):
                data = _cache.BINARY
        got.queued.add(key)
        if data is _cache.BINARY:
            got.rows.append((key, _cache.BINARY, b""))
            got.binary[key] = True
        else:
            jobs.append((key, langs[path], data))
    return jobs


def collect(
    gate: Gate, walked: WalkResult, config: MapConfig, cache: _cache.TagCache, stats: MapStats,
    cancel: threading.Event | None, known: dict[str, tuple[int, int, bytes]] | None = None,
) -> tuple[list[str], LazyTags, list[bytes], dict[str, int], dict[str, bytes]]:
    """Hash (or pre-check against `known`, else the cache's rows), find cached tags and parse the rest; skipped
    files are counted in `walked`. Every file is read through `gate`; raises `MapCancelled` once `cancel` is set.
    Also returns the content key of every supported file.

    Files are read in chunks and their missing keys fed to the parser at once, so reading overlaps parsing,
    file bytes are held only until parsed, and rows are written as they come."""
    started = time.perf_counter()
    real_root = os.path.realpath(gate.root)
    if known is None:
        known = cache.known_files(real_root) if cache.persistent else {}
        stats.precheck_rows = len(known)
    keys: dict[str, bytes] = {}
    langs: dict[str, str] = {}
    stat_rows: list[tuple[str, int, int, bytes]] = []
    got = _Collected()
    timings = {"hash": 0.0, "load": 0.0}
    pipeline = ParsePipeline(max_signature_chars=config.max_signature_chars, workers=config.workers,
                             threshold=config.parallel_threshold, adaptive=config.adaptive_workers, cancel=cancel)
    try:
        files = walked.files
        for i in range(0, len(files), _CHUNK_FILES):
            t = time.perf_counter()
            chunk = _read_chunk(gate, walked, files[i : i + _CHUNK_FILES], config, real_root, known,
                                (keys, langs, stat_rows), stats, cancel)
            timings["hash"] += time.perf_counter() - t
            got.add_parsed(pipeline.feed(_jobs_of(gate, chunk, langs, config, cache, got, timings)))
            if len(got.rows) >= _STORE_ROWS:
                got.flush(cache)
        got.add_parsed(pipeline.finish())
    except BaseException:
        pipeline.close(wait_for_workers=False)
        raise
    stats.cache_misses = len(got.decoded)
    stats.timings["hash"] = timings["hash"]
    stats.timings["load"] = timings["load"]
    stats.timings["parse"] = time.perf_counter() - started - timings["hash"] - timings["load"]
    got.flush(cache, stat_rows)

    paths: list[str] = []
    tags: list[FileTags | None] = []
    key_list: list[bytes] = []
    languages: dict[str, int] = {}
    for path in sorted(keys):
        key = keys[path]
        binary = got.binary.get(key)
        if binary is None:
            walked.skip(SkipReason.unreadable)
            continue
        if binary:
            walked.skip(SkipReason.binary)
            continue
        parsed = got.decoded.get(key)
        if parsed is None:
            stats.cache_hits += 1
        paths.append(path)
        tags.append(parsed)
        key_list.append(key)
        languages[langs[path]] = languages.get(langs[path], 0) + 1
    return paths, LazyTags(key_list, tags, cache), key_list, languages, keys


def reference_graph(root: Path, corpus_rows: tuple[list[str], LazyTags, list[bytes]], cache: _cache.TagCache,
           stats: MapStats) -> Graph:
    """The tree's reference graph: its snapshot when the exact same files were seen, else the stored tables of
    the same directory with the changed files' rows replaced (when few changed), else built from all tags."""
    paths, tags, keys = corpus_rows
    # a content key covers the file's language, hence its family: the paths and keys identify the graph
    digest = hashlib.blake2b(f"graph-v{_GRAPH_VERSION}".encode(), digest_size=16)
    digest.update(b"".join(path.encode("utf-8", "surrogateescape") + b"\0" + key for path, key in zip(paths, keys)))
    snapshot_key = digest.digest()
    use_snapshots = cache.persistent and len(paths) >= _SNAPSHOT_MIN_FILES

    def families_of() -> list[str]:
        return [FAMILY[_cache.key_language(key)] for key in keys]

    def rebuild() -> Graph:
        tags.prefetch()
        return _graphs.assemble(_tables.tables_from_tags(paths, tags, families_of(), keys))

    base_key = f"graph-v{_GRAPH_VERSION}:{os.path.realpath(root)}"  # the tables last fully built in this directory
    if use_snapshots:
        # a damaged or outdated snapshot is rebuilt, never fatal
        try:
            graph = _graphs.load_graph(paths, lambda part: cache.load_graph(snapshot_key, part), rebuild)
            graph.key = snapshot_key
            stats.graph = "snapshot"
            return graph
        except Exception:
            pass
        families = families_of()
        blob = cache.load_base(base_key)
        if blob is not None:
            try:
                base = _tables.loads(blob, _tables.Tables)
                changed = _tables.changed_files(base, paths, families, keys)
                if changed <= max(_PATCH_MIN_FILES, len(paths) // _PATCH_FRACTION):
                    tables, stats.graph_files = _tables.patch_tables(base, paths, families, keys, tags)
                    stats.graph = "patched"
                    graph = _graphs.assemble(tables)
                    graph.key = snapshot_key
                    return graph
            except Exception:
                pass
    else:
        families = families_of()
    tags.prefetch()
    tables = _tables.tables_from_tags(paths, tags, families, keys)
    graph = _graphs.assemble(tables)
    stats.graph, stats.graph_files = "built", len(paths)
    if use_snapshots:
        graph.key = snapshot_key
        cache.store_graph(snapshot_key, _graphs.graph_parts(graph), base=(base_key, _tables.dumps(tables)))
    return graph

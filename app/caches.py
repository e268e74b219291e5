"""The caches that grow with use, kept under their size caps: per-commit trees, repo-map tags, term counts and the
per-tree corpus indexes of large trees.

`enforce_caps` runs after every investigation (evicts the least recently used, never blocks or fails a run);
`bugsleuth cache show|prune` reports and prunes on demand (prune also deletes files of older cache versions and
gives the freed space back to the file system).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.config import Settings
from app.repos import cached_trees, evict_trees
from funnel.localize import corpus_index, term_cache
from repomap import cache as tags_cache
from repomap import lru

log = logging.getLogger("bugsleuth.caches")

CacheName = Literal["trees", "tags", "terms", "corpora"]
"""The prunable caches."""
CACHES: tuple[CacheName, ...] = ("trees", "tags", "terms", "corpora")


@dataclass(frozen=True)
class CacheReport:
    """What one cache holds."""

    name: CacheName
    location: Path
    entries: int
    bytes: int
    """Bytes of data held (what the cap is compared with)."""
    disk_bytes: int
    """Bytes on disk (a SQLite file keeps freed pages until it is vacuumed)."""
    cap: int
    oldest_use: float | None = None
    newest_use: float | None = None
    stale: list[Path] = field(default_factory=list)
    """Files of older cache versions (never read again)."""


@dataclass(frozen=True)
class PruneResult:
    """What pruning one cache did."""

    name: CacheName
    dropped: int
    """Entries evicted (trees, or cached rows)."""
    freed_bytes: int
    """Bytes given back to the file system (stale files included)."""
    kept_in_use: int = 0
    """Trees over the limit kept because they were used in the last hour (they may be under investigation)."""


def cap_of(settings: Settings, name: CacheName) -> int:
    """The size cap of a cache in bytes (0: none)."""
    return int({"trees": settings.trees_max_size, "tags": settings.tags_cache_max_size,
                "terms": settings.terms_cache_max_size, "corpora": settings.corpora_cache_max_size}[name])


def _tags_dir() -> Path:
    return tags_cache.default_cache_dir()


def _terms_dir() -> Path:
    return term_cache.default_cache_dir()


def _sqlite_report(name: CacheName, path: Path, usage: lru.Usage | None, cap: int, stale: list[Path]) -> CacheReport:
    if usage is None:
        return CacheReport(name, path, 0, 0, 0, cap, stale=stale)
    return CacheReport(name, path, usage.entries, usage.live_bytes, usage.file_bytes, cap,
                       usage.oldest_use, usage.newest_use, stale)


def _open_tags() -> tags_cache.TagCache | None:
    path = tags_cache.cache_file(_tags_dir())
    return tags_cache.TagCache(_tags_dir()) if path.exists() else None


def _open_terms() -> term_cache.TermCache | None:
    path = term_cache.cache_file(_terms_dir())
    return term_cache.TermCache(_terms_dir()) if path.exists() else None


def show(settings: Settings) -> list[CacheReport]:
    """A report of every cache (nothing is evicted; a tree seen for the first time gets its use record)."""
    trees = cached_trees(settings)
    size = sum(t.size for t in trees)
    reports = [CacheReport("trees", Path(settings.trees_dir), len(trees), size, size, cap_of(settings, "trees"),
                           min((t.used for t in trees), default=None), max((t.used for t in trees), default=None))]
    tags = _open_tags()
    try:
        reports.append(_sqlite_report("tags", tags_cache.cache_file(_tags_dir()), tags.usage() if tags else None,
                                      cap_of(settings, "tags"), tags_cache.stale_files(_tags_dir())))
    finally:
        if tags:
            tags.close()
    terms = _open_terms()
    reports.append(_sqlite_report("terms", term_cache.cache_file(_terms_dir()), terms.usage() if terms else None,
                                  cap_of(settings, "terms"), term_cache.stale_files(_terms_dir())))
    reports.append(_corpora_report(settings))
    return reports


def _corpora_report(settings: Settings) -> CacheReport:
    files = corpus_index.index_files(_terms_dir())
    size = sum(corpus_index.file_bytes(p) for p in files)
    uses = [p.stat().st_mtime for p in files]
    return CacheReport("corpora", _terms_dir() / "trees", len(files), size, size, cap_of(settings, "corpora"),
                       min(uses, default=None), max(uses, default=None), corpus_index.stale_index_files(_terms_dir()))


def _prune_corpora(max_bytes: int, vacuum: bool) -> PruneResult:
    freed = _delete(corpus_index.stale_index_files(_terms_dir())) if vacuum else 0
    deleted, dropped_bytes, kept = corpus_index.evict_indexes(_terms_dir(), max_bytes)
    return PruneResult("corpora", deleted, freed + dropped_bytes, kept)


def _delete(paths: list[Path]) -> int:
    freed = 0
    for path in paths:
        try:
            freed += path.stat().st_size
            path.unlink()
        except OSError:
            pass
    return freed


def _prune_trees(settings: Settings, max_bytes: int) -> PruneResult:
    removed = evict_trees(settings, max_bytes)
    left = cached_trees(settings)
    kept = len(left) if sum(t.size for t in left) > max_bytes else 0
    tags = _open_tags()
    if tags is not None:
        try:
            for tree in removed:
                tags.forget(os.path.realpath(tree.path))
        finally:
            tags.close()
    return PruneResult("trees", len(removed), sum(t.size for t in removed), kept)


def _prune_sqlite(name: CacheName, cache: tags_cache.TagCache | term_cache.TermCache | None, path: Path,
                  stale: list[Path], max_bytes: int, vacuum: bool) -> PruneResult:
    freed = _delete(stale) if vacuum else 0
    if cache is None:
        return PruneResult(name, 0, freed)
    before = lru.file_bytes(path)
    dropped = cache.evict(max_bytes)
    if vacuum:
        cache.vacuum()
    return PruneResult(name, dropped, freed + max(0, before - lru.file_bytes(path)))


def prune(settings: Settings, *, only: tuple[CacheName, ...] = CACHES, max_size: int | None = None,
          vacuum: bool = True) -> list[PruneResult]:
    """Evict least recently used entries of the caches in `only` until each is under `max_size` (default: its
    cap; 0 means no cap unless `max_size` is given); with `vacuum`, also delete stale cache files and give freed
    space back to the file system."""
    results = []
    for name in only:
        limit = cap_of(settings, name) if max_size is None else max_size
        if max_size is None and limit == 0:
            continue
        if name == "trees":
            results.append(_prune_trees(settings, limit))
        elif name == "tags":
            tags = _open_tags()
            try:
                results.append(_prune_sqlite(name, tags, tags_cache.cache_file(_tags_dir()),
                                             tags_cache.stale_files(_tags_dir()), limit, vacuum))
            finally:
                if tags:
                    tags.close()
        elif name == "terms":
            results.append(_prune_sqlite(name, _open_terms(), term_cache.cache_file(_terms_dir()),
                                         term_cache.stale_files(_terms_dir()), limit, vacuum))
        else:
            results.append(_prune_corpora(limit, vacuum))
    return results


def enforce_caps(settings: Settings) -> None:
    """Bring every cache under its cap (after a run; cheap when under). Failures are logged, never raised."""
    try:
        for result in prune(settings, vacuum=False):
            if result.dropped:
                log.info("cache over its cap: evicted the least recently used",
                         extra={"cache": result.name, "dropped": result.dropped})
    except Exception:
        log.warning("cache eviction failed", exc_info=True)

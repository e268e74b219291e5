"""Term counts of the offline investigator's ranking on disk: one SQLite file, one row per file version
(content hash).

Rows carry their last use, and a size cap evicts the least recently used (`repomap.lru`, shared with the
repo-map tags cache).
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import threading
import time
from pathlib import Path

from repomap import lru

CACHE_VERSION = "v4"
"""Bump when the stored counts change; files of other versions are then left unused (and pruned)."""
TABLE = lru.Table("terms", "key", "length(value)")
"""The evictable table."""


def default_cache_dir() -> Path:
    """Where term counts are cached: `$BUGSLEUTH_CACHE_DIR/offline` or `~/.cache/bugsleuth/offline`."""
    base = os.environ.get("BUGSLEUTH_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "bugsleuth") / "offline"


def cache_file(cache_dir: Path) -> Path:
    """The term cache file of this version in `cache_dir`."""
    return cache_dir / f"offline-terms-{CACHE_VERSION}.sqlite"


def stale_files(cache_dir: Path) -> list[Path]:
    """Term cache files of other versions in `cache_dir` (never read again), with their WAL."""
    current = cache_file(cache_dir).name
    return sorted(
        p for p in cache_dir.glob("offline-terms-*.sqlite*")
        if p.name.removesuffix("-wal").removesuffix("-shm") != current
    )


class TermCache:
    """Term counts keyed by content hash in `cache_dir` (a broken or unwritable cache is simply not used)."""

    _lock = threading.Lock()

    def __init__(self, cache_dir: Path) -> None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        self.path = cache_file(cache_dir)
        self.ok = True
        try:
            with self._connect() as db:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS terms (key TEXT PRIMARY KEY, value BLOB, used_s INTEGER NOT NULL DEFAULT 0)"
                )
                lru.add_used_column(db, "terms")
        except sqlite3.Error:
            self.ok = False

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def get_many(self, keys: list[str]) -> dict[str, tuple]:
        """The stored counts of the keys present (their last use is recorded)."""
        if not self.ok or not keys:
            return {}
        out: dict[str, tuple] = {}
        used: dict[object, int] = {}
        try:
            with self._connect() as db:
                for i in range(0, len(keys), 500):
                    chunk = keys[i: i + 500]
                    q = f"SELECT key, value, used_s FROM terms WHERE key IN ({','.join('?' * len(chunk))})"
                    for key, value, used_s in db.execute(q, chunk):
                        out[key] = marshal.loads(value)
                        used[key] = used_s
                lru.touch(db, TABLE, list(out), used)
        except (sqlite3.Error, ValueError, EOFError):
            return {}
        return out

    def put_many(self, items: dict[str, tuple]) -> None:
        """Store counts (a failure only costs a recount next time)."""
        if not self.ok:
            return
        now = int(time.time())
        try:
            with self._lock, self._connect() as db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany(
                    "INSERT OR REPLACE INTO terms (key, value, used_s) VALUES (?, ?, ?)",
                    [(k, marshal.dumps(v), now) for k, v in items.items()],
                )
                db.execute("COMMIT")
        except sqlite3.Error:
            pass

    def usage(self) -> lru.Usage:
        """Entries, sizes and last uses of the cache file."""
        with self._connect() as db:
            return lru.usage(db, self.path, (TABLE,))

    def evict(self, max_bytes: int) -> int:
        """Drop least recently used counts until the cache holds under `max_bytes`; entries dropped."""
        with self._connect() as db:
            return lru.evict(db, (TABLE,), max_bytes)

    def vacuum(self) -> None:
        """Give the space of dropped entries back to the file system."""
        with self._connect() as db:
            lru.vacuum(db)

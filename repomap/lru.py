"""Size caps with least-recently-used eviction for the SQLite caches (repo-map tags, offline term counts).

Each cached row carries `used_s`, the last time (Unix seconds) a build read it, refreshed at most once per
`USE_GRANULARITY_S` so that a warm build writes nothing. Eviction deletes the least recently used rows until the
live size (pages in use, not the file's high-water mark) is under the cap; freed pages are reused by later
inserts, so the file stops growing; `vacuum()` gives the space back to the file system.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

USE_GRANULARITY_S = 3600
"""A row's last use is refreshed when older than this: LRU order to the hour, no write on a warm build."""
EVICT_TO = 0.9
"""Eviction goes down to this fraction of the cap, so that the next few builds do not evict again."""


@dataclass(frozen=True)
class Table:
    """One evictable table: its name, key column and the SQL expression of a row's size in bytes."""

    name: str
    key: str
    size: str
    used: str = "used_s"
    """SQL expression of the row's last use in Unix seconds."""


@dataclass(frozen=True)
class Usage:
    """What a cache file holds."""

    path: Path
    entries: int
    live_bytes: int
    """Bytes in pages that hold data."""
    file_bytes: int
    """Bytes on disk (database, WAL and shared-memory files)."""
    oldest_use: float | None
    newest_use: float | None


def file_bytes(path: Path) -> int:
    """Bytes on disk of a SQLite database with its `-wal` and `-shm` files."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += Path(f"{path}{suffix}").stat().st_size
        except OSError:
            pass
    return total


def live_bytes(db: sqlite3.Connection) -> int:
    """Bytes in the pages of `db` that are not on the free list."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    free = db.execute("PRAGMA freelist_count").fetchone()[0]
    size = db.execute("PRAGMA page_size").fetchone()[0]
    return (pages - free) * size


def add_used_column(db: sqlite3.Connection, table: str) -> None:
    """Give `table` its `used_s` column when a cache file predates it (an in-place, constant-time change)."""
    columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    if "used_s" in columns:
        return
    try:
        db.execute(f"ALTER TABLE {table} ADD COLUMN used_s INTEGER NOT NULL DEFAULT 0")
    except sqlite3.OperationalError:
        # Another process added it first.
        if "used_s" not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
            raise


def touch(db: sqlite3.Connection, table: Table, keys: Sequence[object], used: dict[object, int]) -> None:
    """Record a use now of `keys` whose recorded use (`used`: key → used_s) is older than the granularity."""
    now = int(time.time())
    stale = [(now, k) for k in keys if used.get(k, 0) < now - USE_GRANULARITY_S]
    if not stale:
        return
    write(db, lambda: db.executemany(f"UPDATE {table.name} SET used_s = ? WHERE {table.key} = ?", stale))


def usage(db: sqlite3.Connection, path: Path, tables: Iterable[Table]) -> Usage:
    """Entries, sizes and the range of last uses of a cache file."""
    entries, oldest, newest = 0, None, None
    for table in tables:
        n, lo, hi = db.execute(f"SELECT count(*), min({table.used}), max({table.used}) FROM {table.name}").fetchone()
        entries += n
        if lo is not None:
            oldest = lo if oldest is None else min(oldest, lo)
            newest = hi if newest is None else max(newest, hi)
    return Usage(path, entries, live_bytes(db), file_bytes(path), oldest, newest)


def evict(db: sqlite3.Connection, tables: Sequence[Table], max_bytes: int) -> int:
    """Delete least recently used rows across `tables` until the live size is under `max_bytes`; rows deleted."""
    live = live_bytes(db)
    if live <= max_bytes:
        return 0
    over = live - int(max_bytes * EVICT_TO)
    union = " UNION ALL ".join(
        f"SELECT {i} AS t, {t.key} AS k, {t.size} AS n, {t.used} AS u FROM {t.name}" for i, t in enumerate(tables)
    )
    victims: list[tuple[int, object]] = []
    freed = 0
    for t, key, size, _ in db.execute(f"SELECT t, k, n, u FROM ({union}) ORDER BY u, n DESC"):
        victims.append((t, key))
        freed += size or 0
        if freed >= over:
            break
    try:
        db.execute("BEGIN IMMEDIATE")
        for i, table in enumerate(tables):
            keys = [(k,) for t, k in victims if t == i]
            db.executemany(f"DELETE FROM {table.name} WHERE {table.key} = ?", keys)
        db.execute("COMMIT")
    except sqlite3.Error:
        _rollback(db)
        return 0
    return len(victims)


def vacuum(db: sqlite3.Connection) -> None:
    """Give free pages back to the file system (rewrites the file: for an explicit prune, not a build)."""
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def write(db: sqlite3.Connection, statements: Callable[[], object]) -> bool:
    """Run `statements` in one immediate transaction; a SQLite error rolls it back and gives False (a cache write
    that fails only costs recomputing later)."""
    try:
        db.execute("BEGIN IMMEDIATE")
        statements()
        db.execute("COMMIT")
    except sqlite3.Error:
        _rollback(db)
        return False
    return True


def _rollback(db: sqlite3.Connection) -> None:
    try:
        db.execute("ROLLBACK")
    except sqlite3.Error:
        pass

"""The persisted name index behind `SymbolIndex`: which content keys define (or qualify) a name.

Rows live in the tags cache file, keyed by content key like the tags themselves, so a changed file adds rows for
its new key alone and identical files in other trees share them. A tree (its `RepoMap.tree_key`) is marked once
every one of its keys has rows; after that a lookup reads the rows of one name and decodes only the files they
name. The list of a tree's distinct names (for fuzzy suggestions) is stored per tree, built on first need.
"""

from __future__ import annotations

import pickle
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from repomap import lru

SCHEMA = """
CREATE TABLE IF NOT EXISTS sym_names (name TEXT NOT NULL, key BLOB NOT NULL, PRIMARY KEY (name, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sym_keys (key BLOB PRIMARY KEY, names TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sym_trees (tree BLOB PRIMARY KEY, names BLOB, used_ns INTEGER NOT NULL);
"""
"""Added to the tags cache file: name → key rows, the keys indexed with their names (`\\0`-joined: the other
direction, one row per file, which costs a fraction of an index on `sym_names (key)` to write), and the trees whose
keys all are."""

KEEP_TREES = 64
"""Trees whose completeness mark (and name list) is kept; older marks are dropped (their rows stay, shared)."""

_CHUNK = 900
"""Bound parameters per `IN (...)` query (SQLite's limit is 999 on old builds)."""


def index_rows(key: bytes, defs: Iterable[tuple]) -> list[tuple[str, bytes]]:
    """The `(name, key)` rows of one file's definition tuples `(name, qualname, ...)`: names and qualnames, distinct."""
    names: dict[str, None] = {}
    for d in defs:
        names[d[0]] = None
        names[d[1]] = None
    return [(name, key) for name in names]


def add_rows(db: sqlite3.Connection, keys: Sequence[bytes], rows: Sequence[tuple[str, bytes]]) -> None:
    """Record `rows` and mark `keys` indexed (every row's key is one of them), inside the caller's transaction."""
    by_key: dict[bytes, list[str]] = {k: [] for k in keys}
    for name, key in rows:
        by_key[key].append(name)
    # in primary-key order, each insert lands next to the one before
    db.executemany("INSERT OR IGNORE INTO sym_names (name, key) VALUES (?, ?)", sorted(rows))
    db.executemany("INSERT OR IGNORE INTO sym_keys (key, names) VALUES (?, ?)",
                   [(k, "\0".join(names)) for k, names in by_key.items()])


def forget_evicted(db: sqlite3.Connection) -> None:
    """Drop the rows of keys whose tags were evicted, and every tree mark (a tree may have lost a key)."""
    db.execute("DELETE FROM sym_keys WHERE key NOT IN (SELECT key FROM tags)")
    db.execute("DELETE FROM sym_names WHERE key NOT IN (SELECT key FROM sym_keys)")
    db.execute("DELETE FROM sym_trees")


@dataclass
class NameStats:
    """What the persisted name index did in this process (for tests and `--stats`)."""

    indexed_files: int = 0
    """Files whose definitions were decoded to add their names (0 when the tree was already marked)."""
    lookups: int = 0
    """Names looked up in the stored rows."""
    rows_read: int = 0
    """`(name, key)` rows read by those lookups."""
    files_decoded: int = 0
    """Files whose definitions lookups decoded."""
    tree_marked: bool = False
    """The tree was found marked complete (the index was built by an earlier map or process)."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Seconds spent per step (`ensure`, `names`)."""


class NameStore:
    """The name rows of one tree: `keys` per file, `tree` the tree's digest; `decode(key)` gives a file's
    definition tuples (used only for keys not yet indexed)."""

    def __init__(self, db: sqlite3.Connection, tree: Callable[[], bytes], keys: Sequence[bytes],
                 decode: Callable[[bytes], Iterable[tuple]]) -> None:
        self._db = db
        self._tree_fn = tree
        self._keys = keys
        self._decode = decode
        self._tree: bytes | None = None
        self._ready = False
        self.stats = NameStats()
        """What this store did."""

    def _tree_key(self) -> bytes:
        if self._tree is None:
            self._tree = self._tree_fn()
        return self._tree

    def ensure(self) -> None:
        """Make sure every key of the tree has its rows (a no-op once the tree is marked)."""
        if self._ready:
            return
        started = time.perf_counter()
        tree = self._tree_key()
        row = self._db.execute("SELECT 1 FROM sym_trees WHERE tree = ?", (tree,)).fetchone()
        if row is not None:
            self.stats.tree_marked = True
        else:
            distinct = list(dict.fromkeys(self._keys))
            have: set[bytes] = set()
            for i in range(0, len(distinct), _CHUNK):
                chunk = distinct[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                have.update(k for (k,) in self._db.execute(f"SELECT key FROM sym_keys WHERE key IN ({marks})", chunk))
            missing = [k for k in distinct if k not in have]
            rows = [r for k in missing for r in index_rows(k, self._decode(k))]
            self.stats.indexed_files = len(missing)
            self._write(lambda: (add_rows(self._db, missing, rows), self._mark(tree)))
        self._ready = True
        self.stats.seconds["ensure"] = time.perf_counter() - started

    def _mark(self, tree: bytes) -> None:
        self._db.execute("INSERT OR REPLACE INTO sym_trees (tree, names, used_ns) VALUES (?, NULL, ?)",
                         (tree, time.time_ns()))
        self._db.execute("DELETE FROM sym_trees WHERE tree NOT IN (SELECT tree FROM sym_trees ORDER BY used_ns DESC "
                         "LIMIT ?)", (KEEP_TREES,))

    def _write(self, action: Callable[[], object]) -> None:
        lru.write(self._db, action)

    def keys_of(self, name: str) -> list[bytes]:
        """Content keys (of any tree) whose file defines `name` as a name or qualified name."""
        self.ensure()
        keys = [k for (k,) in self._db.execute("SELECT key FROM sym_names WHERE name = ?", (name,))]
        self.stats.lookups += 1
        self.stats.rows_read += len(keys)
        return keys

    def names(self) -> list[str]:
        """Every distinct name and qualified name of the tree, sorted; stored per tree after the first call."""
        self.ensure()
        started = time.perf_counter()
        tree = self._tree_key()
        row = self._db.execute("SELECT names FROM sym_trees WHERE tree = ?", (tree,)).fetchone()
        if row is not None and row[0] is not None:
            names = pickle.loads(zlib.decompress(row[0]))
        else:
            distinct = list(dict.fromkeys(self._keys))
            found: set[str] = set()
            for i in range(0, len(distinct), _CHUNK):
                chunk = distinct[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for (joined,) in self._db.execute(f"SELECT names FROM sym_keys WHERE key IN ({marks})", chunk):
                    if joined:
                        found.update(joined.split("\0"))
            names = sorted(found)
            blob = zlib.compress(pickle.dumps(names, protocol=pickle.HIGHEST_PROTOCOL), 1)
            self._write(lambda: self._db.execute("UPDATE sym_trees SET names = ? WHERE tree = ?", (blob, tree)))
        self.stats.seconds["names"] = time.perf_counter() - started
        return names

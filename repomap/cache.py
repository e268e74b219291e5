"""On-disk tags cache: one SQLite file, one row per (language, content hash), shared by every checkout.

Identical files in different checkouts (or commits) of a repository share one entry; a changed file gets a
new hash and is parsed alone. A stat pre-check (real path, size, mtime_ns) → hash avoids re-hashing unchanged
files. WAL mode and a busy timeout let several worker processes use the cache at once.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from repomap import lru
from repomap import names as _names
from repomap import walk_snapshot as _walks
from repomap.languages import LANGUAGES, grammar_versions
from repomap.tags import FileTags
from repomap.walk import RACY_NS

CACHE_VERSION = 9
"""Bump when the stored format or the extraction changes; old cache files are then left unused."""

BINARY = b"binary"
"""Stored in place of tags for files found to be binary."""
_BINARY_SQL = f"x'{BINARY.hex()}'"
"""`BINARY` as an SQL literal (a partial index is used only for a query naming its literal, not a parameter)."""

_LANGUAGE_CODE = {spec.name: i for i, spec in enumerate(LANGUAGES)}
"""Language name → its code, the last byte of a content key."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tags (key BLOB PRIMARY KEY, core BLOB NOT NULL, refs BLOB NOT NULL,
                                 used_s INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                                  key BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS graphs (key BLOB PRIMARY KEY, data BLOB NOT NULL, used_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS bases (root TEXT PRIMARY KEY, data BLOB NOT NULL, used_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS graph_parts (key BLOB NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL,
                                        PRIMARY KEY (key, name));
CREATE TRIGGER IF NOT EXISTS graph_parts_follow AFTER DELETE ON graphs BEGIN
    DELETE FROM graph_parts WHERE key = old.key;
END;
CREATE TABLE IF NOT EXISTS results (key BLOB PRIMARY KEY, data BLOB NOT NULL, used_ns INTEGER NOT NULL);
"""
_INDEXES = f"""
CREATE INDEX IF NOT EXISTS tags_use ON tags (key, used_s);
CREATE INDEX IF NOT EXISTS tags_binary ON tags (key) WHERE core = {_BINARY_SQL};
"""
"""Made after the schema and its upgrades (a file from before `used_s` gets the column first). `tags_use` answers "which keys are stored, last used when" from the index alone (the rows are large: a look-up
that reads them costs three times as much); `tags_binary` lists the keys stored as binary (`BINARY`)."""

KEEP_GRAPHS = 12
"""Reference graphs of whole trees kept for instant warm builds (older ones are dropped: they are large)."""
KEEP_RESULTS = 256
"""Results computed from a graph kept (PageRank per personalization, a few hundred KB each on a monorepo)."""

TABLES = (
    lru.Table("tags", "key", "length(core) + length(refs)"),
    lru.Table("graphs", "key", "length(data) + coalesce((SELECT sum(length(p.data)) FROM graph_parts p "
                               "WHERE p.key = graphs.key), 0)", used="used_ns / 1000000000"),
    lru.Table("bases", "root", "length(data)", used="used_ns / 1000000000"),
    lru.Table("results", "key", "length(data)", used="used_ns / 1000000000"),
)
"""What a size cap evicts from, least recently used first (the stat pre-check rows follow their tags)."""


def default_cache_dir() -> Path:
    """`$BUGSLEUTH_CACHE_DIR/repomap`, else `~/.cache/bugsleuth/repomap`."""
    base = os.environ.get("BUGSLEUTH_CACHE_DIR")
    return Path(base) / "repomap" if base else Path.home() / ".cache" / "bugsleuth" / "repomap"


def content_key(language: str, data: bytes) -> bytes:
    """The cache key of a file: a blake2b digest of its bytes and language, then the language's one-byte code (so
    a stat pre-check hit knows the language of a file it does not read)."""
    h = hashlib.blake2b(data, digest_size=15)
    h.update(language.encode())
    return h.digest() + bytes((_LANGUAGE_CODE[language],))


def key_language(key: bytes) -> str:
    """The language a content key was made for."""
    return LANGUAGES[key[-1]].name


def encode(tags: FileTags) -> tuple[bytes, bytes]:
    """The two stored blobs of a file's tags: what ranking needs, and the full reference list."""
    core = pickle.dumps(
        (tags.defs, tags.agg_names, tags.agg_kinds, tags.agg_counts, tags.parse_error), protocol=pickle.HIGHEST_PROTOCOL
    )
    refs = pickle.dumps((tags.ref_names, tags.ref_kinds, tags.ref_lines), protocol=pickle.HIGHEST_PROTOCOL)
    return core, refs


def decode_core(core: bytes) -> FileTags:
    """Tags without the per-line reference list (loaded on demand)."""
    defs, agg_names, agg_kinds, agg_counts, parse_error = pickle.loads(core)
    return FileTags(defs, "", b"", b"", agg_names, agg_kinds, agg_counts, parse_error)


def tags_version() -> str:
    """What the tags of a file depend on besides its bytes: this cache version and a digest of the grammar and
    query versions (`v6-1a2b3c4d5e6f`). Anything stored from tags is keyed by it too."""
    digest = hashlib.blake2b(grammar_versions().encode(), digest_size=6).hexdigest()
    return f"v{CACHE_VERSION}-{digest}"


def cache_file(cache_dir: Path) -> Path:
    """The tags cache file of this cache version and these grammar versions in `cache_dir`."""
    return cache_dir / f"tags-{tags_version()}.sqlite"


def stale_files(cache_dir: Path) -> list[Path]:
    """Tags cache files of other cache or grammar versions in `cache_dir` (never read again), with their WAL."""
    current = cache_file(cache_dir).name
    return sorted(
        p for p in cache_dir.glob("tags-v*.sqlite*") if p.name.removesuffix("-wal").removesuffix("-shm") != current
    )


class TagCache:
    """The tags cache in `cache_dir`; `None` keeps it in memory only (nothing persists)."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.path: Path | None = None
        self.persistent = False
        if cache_dir is not None:
            try:
                cache_dir.mkdir(parents=True, exist_ok=True)
                self.path = cache_file(cache_dir)
                self._db = self._open(str(self.path))
                self.persistent = True
            except (OSError, sqlite3.Error):
                self.path = None
        if not self.persistent:
            self._db = self._open(":memory:")

    @staticmethod
    def _open(target: str) -> sqlite3.Connection:
        db = sqlite3.connect(target, timeout=60, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA busy_timeout = 60000")
        if target != ":memory:":
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
        db.executescript(_SCHEMA)
        db.executescript(_names.SCHEMA)
        db.executescript(_walks.SCHEMA)
        lru.add_used_column(db, "tags")
        db.executescript(_INDEXES)
        return db

    def close(self) -> None:
        """Release the database connection."""
        self._db.close()

    def known_files(self, real_root: str) -> dict[str, tuple[int, int, bytes]]:
        """Stat pre-check rows under a real directory path: real path → (size, mtime_ns, key)."""
        prefix = real_root.rstrip("/") + "/"
        rows = self._db.execute(
            "SELECT path, size, mtime_ns, key FROM files WHERE path >= ? AND path < ?", (prefix, prefix[:-1] + "0")
        )
        return {path: (size, mtime, key) for path, size, mtime, key in rows}

    def load_core(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """Stored core blobs of the given keys that are present (their last use is recorded)."""
        keys = list(keys)
        out: dict[bytes, bytes] = {}
        used: dict[object, int] = {}
        for i in range(0, len(keys), 900):
            chunk = keys[i : i + 900]
            marks = ",".join("?" * len(chunk))
            for key, core, used_s in self._db.execute(
                f"SELECT key, core, used_s FROM tags WHERE key IN ({marks})", chunk
            ):
                out[key] = core
                used[key] = used_s
        lru.touch(self._db, TABLES[0], list(out), used)
        return out

    def present(self, keys: Iterable[bytes]) -> dict[bytes, bool]:
        """Which of the keys have stored tags (→ True when stored as binary), without reading the blobs; their
        last use is recorded like `load_core`'s."""
        keys = list(keys)
        out: dict[bytes, bool] = {}
        used: dict[object, int] = {}
        for i in range(0, len(keys), 900):
            chunk = keys[i : i + 900]
            marks = ",".join("?" * len(chunk))
            for key, used_s in self._db.execute(
                f"SELECT key, used_s FROM tags INDEXED BY tags_use WHERE key IN ({marks})", chunk
            ):
                out[key] = False
                used[key] = used_s
        for (key,) in self._db.execute(f"SELECT key FROM tags INDEXED BY tags_binary WHERE core = {_BINARY_SQL}"):
            if key in out:
                out[key] = True
        lru.touch(self._db, TABLES[0], list(out), used)
        return out

    def load_refs(self, key: bytes) -> bytes | None:
        """The stored reference blob of one key."""
        row = self._db.execute("SELECT refs FROM tags WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (for the indexes kept beside the tags, such as `repomap.names`)."""
        return self._db

    def store(self, rows: list[tuple[bytes, bytes, bytes]], stats: list[tuple[str, int, int, bytes]],
              names: tuple[list[bytes], list[tuple[str, bytes]]] = ([], [])) -> None:
        """Add tag rows `(key, core, refs)`, pre-check rows `(real path, size, mtime_ns, key)` and the name index
        rows `(keys indexed, (name, key) rows)` of parsed files in one transaction."""
        if not rows and not stats:
            return
        now = time.time_ns()
        fresh = [s for s in stats if now - s[2] > RACY_NS]
        db = self._db

        def statements() -> None:
            db.executemany("INSERT OR IGNORE INTO tags (key, core, refs, used_s) VALUES (?, ?, ?, ?)",
                           [(*row, now // 1_000_000_000) for row in rows])
            db.executemany("INSERT OR REPLACE INTO files (path, size, mtime_ns, key) VALUES (?, ?, ?, ?)", fresh)
            _names.add_rows(db, *names)
        lru.write(db, statements)

    def load_graph(self, key: bytes, part: str = "header") -> bytes | None:
        """One stored part of the reference-graph snapshot of a whole tree (`repomap.graph_store`), or None."""
        try:
            row = self._db.execute("SELECT data FROM graph_parts WHERE key = ? AND name = ?", (key, part)).fetchone()
        except sqlite3.Error:
            return None
        return row[0] if row else None

    def load_base(self, name: str) -> bytes | None:
        """The graph tables last stored under `name` (a directory: the base to patch its trees from), or None."""
        try:
            row = self._db.execute("SELECT data FROM bases WHERE root = ?", (name,)).fetchone()
        except sqlite3.Error:
            return None
        return row[0] if row else None

    def store_graph(self, key: bytes, parts: dict[str, bytes], base: tuple[str, bytes] | None = None) -> None:
        """Keep a reference-graph snapshot (its parts by name) and, with `base` = (name of a directory, tables), the
        tables to patch that directory's trees from; all but the newest `KEEP_GRAPHS` of each are dropped."""
        db = self._db

        def statements() -> None:
            db.execute("DELETE FROM graphs WHERE key = ?", (key,))
            db.execute("INSERT INTO graphs (key, data, used_ns) VALUES (?, ?, ?)", (key, b"", time.time_ns()))
            db.executemany("INSERT INTO graph_parts (key, name, data) VALUES (?, ?, ?)",
                           [(key, name, data) for name, data in parts.items()])
            if base is not None:
                db.execute("INSERT OR REPLACE INTO bases (root, data, used_ns) VALUES (?, ?, ?)", (*base, time.time_ns()))
                db.execute("DELETE FROM bases WHERE root NOT IN (SELECT root FROM bases ORDER BY used_ns DESC LIMIT ?)",
                           (KEEP_GRAPHS,))
            db.execute("DELETE FROM graphs WHERE key NOT IN (SELECT key FROM graphs ORDER BY used_ns DESC LIMIT ?)",
                       (KEEP_GRAPHS,))
        lru.write(db, statements)

    def load_result(self, key: bytes) -> bytes | None:
        """A stored result computed from a graph (a PageRank of `repomap.rank`, a module tree), or None."""
        try:
            row = self._db.execute("SELECT data FROM results WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        return row[0] if row else None

    def store_result(self, key: bytes, data: bytes) -> None:
        """Keep a result computed from a graph; all but the newest `KEEP_RESULTS` are dropped."""
        db = self._db

        def statements() -> None:
            db.execute("INSERT OR REPLACE INTO results (key, data, used_ns) VALUES (?, ?, ?)", (key, data, time.time_ns()))
            db.execute("DELETE FROM results WHERE key NOT IN (SELECT key FROM results ORDER BY used_ns DESC LIMIT ?)",
                       (KEEP_RESULTS,))
        lru.write(db, statements)

    def usage(self) -> lru.Usage:
        """Entries, sizes and last uses of the cache file."""
        return lru.usage(self._db, self.path or Path(":memory:"), TABLES)

    def evict(self, max_bytes: int) -> int:
        """Drop least recently used entries until the cache holds under `max_bytes`; entries dropped."""
        dropped = lru.evict(self._db, TABLES, max_bytes)
        if dropped:
            try:
                self._db.execute("DELETE FROM files WHERE key NOT IN (SELECT key FROM tags)")
                _names.forget_evicted(self._db)
            except sqlite3.Error:
                pass
        return dropped

    def forget(self, real_root: str) -> None:
        """Drop the stat pre-check rows under a directory that is gone (a deleted tree)."""
        prefix = real_root.rstrip("/") + "/"
        try:
            self._db.execute("DELETE FROM files WHERE path >= ? AND path < ?", (prefix, prefix[:-1] + "0"))
        except sqlite3.Error:
            pass

    def vacuum(self) -> None:
        """Give the space of dropped entries back to the file system."""
        lru.vacuum(self._db)

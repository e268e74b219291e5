"""The lexical corpus of a large tree, persisted: one SQLite file per tree beside the term cache.

It holds per file its term counts and definitions (a record), its length and flags, and over the whole tree the
postings of every term and the definitions of every name. It is brought up to date from the files whose content
key changed (the repo map's keys, so no file is read to find out), and read lazily: a query reads the postings of
its own terms, the records of the files it scores in detail and the names it looks up. An unchanged tree costs
one row (`meta.tree`) and the list of documents.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sqlite3
import time
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from funnel.localize.terms import path_tokens
from repomap.cache import tags_version

__all__ = ("INDEX_MIN_FILES", "FileRecord", "IndexStats", "CorpusIndex", "index_path", "index_prefix", "index_files",
           "stale_index_files", "evict_indexes", "file_bytes")

INDEX_MIN_FILES = 5_000
"""Trees with fewer indexed files rank from memory: reading them whole is faster than opening an index."""
INDEX_VERSION = "v7"
"""Bump when a record or the tables change; files of other versions are never read."""
_PATCH_FRACTION = 4
"""A stored index is patched when at most this fraction (1/n) of the files changed, else rebuilt."""
PATH_TERM = "\0path:"
"""Prefix of the postings of path terms (`path_tokens`: the words of a file's name and directory), kept beside
the content terms (no content term starts with a NUL)."""
GENERATED, OWN_VERSION, SKIPPED = 1, 2, 4
"""Flag bits of a document: a generator's mark in its head, an `__init__.py` declaring `__version__`, and left out
of the corpus (too large, binary or refused by the gate)."""


@dataclass(frozen=True)
class FileRecord:
    """What the corpus knows of one file."""

    terms: dict[str, int]
    """Term counts of path and content."""
    length: int
    """Number of terms."""
    symbol_terms: list[dict[str, int]]
    """Term counts of each definition."""
    spans: list[tuple]
    """Each definition as the fields of `SymbolSpan`."""
    flags: int = 0
    """`GENERATED` | `OWN_VERSION` | `SKIPPED`."""


SKIPPED_RECORD = FileRecord({}, 0, [], [], SKIPPED)
"""The record of a file left out of the corpus."""


@dataclass
class IndexStats:
    """How the index was brought up to date."""

    files: int = 0
    """Documents in the index."""
    mode: str = ""
    """`unchanged` (the same tree as last time), `patched` (changed files replaced) or `built` (from scratch)."""
    counted: int = 0
    """Files read and counted in this update."""
    seconds: float = 0.0
    """Wall time of the update."""


def index_prefix() -> str:
    """How the names of this version's index files begin: the index version and the repo map's `tags_version`
    (a file's definitions come from its tags, so an index of other tags is stale even where no byte changed)."""
    return f"corpus-{INDEX_VERSION}-{tags_version()}-"


def index_path(cache_dir: Path, root: Path) -> Path:
    """The index file of the tree at `root` in `cache_dir`."""
    digest = hashlib.blake2b(os.path.realpath(root).encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()
    return cache_dir / "trees" / f"{index_prefix()}{digest}.sqlite"


def index_files(cache_dir: Path) -> list[Path]:
    """The index files of this version in `cache_dir`, least recently used first (their mtime is their last use)."""
    found = [p for p in (cache_dir / "trees").glob(f"{index_prefix()}*.sqlite")]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def stale_index_files(cache_dir: Path) -> list[Path]:
    """Index files of other versions in `cache_dir` (never read again), with their logs."""
    prefix = index_prefix()
    return sorted(p for p in (cache_dir / "trees").glob("corpus-*.sqlite*") if not p.name.startswith(prefix))


def file_bytes(index: Path) -> int:
    """Bytes of one index on disk, with its write-ahead log."""
    return sum(q.stat().st_size for q in (index, Path(f"{index}-wal"), Path(f"{index}-shm")) if q.exists())


def evict_indexes(cache_dir: Path, max_bytes: int, *, keep_used_within_s: float = 3600) -> tuple[int, int, int]:
    """Delete least recently used indexes until the rest hold under `max_bytes` (one used within
    `keep_used_within_s` is kept: an investigation may be reading it). (deleted, bytes freed, kept in use)."""
    files = index_files(cache_dir)
    total = sum(file_bytes(p) for p in files)
    deleted = freed = kept = 0
    now = time.time()
    for index in files:
        if total <= max_bytes:
            break
        if now - index.stat().st_mtime < keep_used_within_s:
            kept += 1
            continue
        size = file_bytes(index)
        for q in (index, Path(f"{index}-wal"), Path(f"{index}-shm")):
            q.unlink(missing_ok=True)
        deleted, freed, total = deleted + 1, freed + size, total - size
    return deleted, freed, kept


def _pairs(blob: bytes) -> list[tuple[int, int]]:
    flat = array("I")
    flat.frombytes(blob)
    return list(zip(flat[0::2], flat[1::2]))


def _blob(pairs: Iterable[tuple[int, int]]) -> bytes:
    flat = array("I")
    for a, b in pairs:
        flat.append(a)
        flat.append(b)
    return flat.tobytes()


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB)",
    "CREATE TABLE IF NOT EXISTS docs (id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, ckey BLOB NOT NULL,"
    " length INTEGER NOT NULL, flags INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS postings (term TEXT PRIMARY KEY, refs BLOB NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS names (name TEXT PRIMARY KEY, refs BLOB NOT NULL) WITHOUT ROWID",
)


class CorpusIndex:
    """The persisted corpus of one tree. `sync` brings it up to date; the rest reads it."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        """The SQLite file."""
        self._db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        os.utime(path)  # the last use, which eviction goes by
        self._db.execute("PRAGMA journal_mode=WAL")
        for statement in _SCHEMA:
            self._db.execute(statement)

    def close(self) -> None:
        """Close the connection (ending its read snapshot)."""
        self._db.close()

    def __del__(self) -> None:
        self._db.close()

    def begin_read(self) -> None:
        """Pin what this connection reads to the index as it is now: a later update by another investigation goes
        on in the log and is seen only by new connections (SQLite's snapshot isolation in WAL mode)."""
        self._db.execute("BEGIN")
        self._db.execute("SELECT COUNT(*) FROM meta").fetchone()

    def sync(self, entries: list[tuple[str, bytes]], tree_key: bytes,
             read: Callable[[list[str]], Iterable[FileRecord]]) -> IndexStats:
        """Bring the index to the tree given as (path, content key) pairs; `read` counts files (one record per path,
        in order)."""
        started = time.perf_counter()
        stats = IndexStats(files=len(entries))
        row = self._db.execute("SELECT value FROM meta WHERE key = 'tree'").fetchone()
        if row is not None and row[0] == tree_key:
            stats.mode = "unchanged"
        else:
            stored = {path: (doc, ckey) for doc, path, ckey in self._db.execute("SELECT id, path, ckey FROM docs")}
            wanted = dict(entries)
            gone = [doc for path, (doc, ckey) in stored.items() if wanted.get(path) != ckey]
            new = [path for path, ckey in entries if path not in stored or stored[path][1] != ckey]
            if stored and len(gone) + len(new) <= max(50, len(entries) // _PATCH_FRACTION):
                self._patch(gone, [(p, wanted[p]) for p in new], read)
                stats.mode = "patched"
            else:
                self._build(entries, read)
                stats.mode = "built"
            stats.counted = len(new)
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('tree', ?)", (tree_key,))
        stats.seconds = time.perf_counter() - started
        return stats

    def _build(self, entries: list[tuple[str, bytes]], read: Callable[[list[str]], Iterable[FileRecord]]) -> None:
        postings: dict[str, list[tuple[int, int]]] = {}
        names: dict[str, list[tuple[int, int]]] = {}
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        for table in ("meta", "docs", "records", "postings", "names"):
            db.execute(f"DELETE FROM {table}")
        for doc, ((path, ckey), record) in enumerate(zip(entries, read([p for p, _ in entries]), strict=True)):
            self._insert(doc, path, ckey, record)
            _add(postings, names, doc, path, record)
        db.executemany("INSERT INTO postings (term, refs) VALUES (?, ?)", ((t, _blob(r)) for t, r in postings.items()))
        db.executemany("INSERT INTO names (name, refs) VALUES (?, ?)", ((n, _blob(r)) for n, r in names.items()))
        db.execute("COMMIT")

    def _insert(self, doc: int, path: str, ckey: bytes, record: FileRecord) -> None:
        self._db.execute("INSERT INTO docs (id, path, ckey, length, flags) VALUES (?, ?, ?, ?, ?)",
                         (doc, path, ckey, record.length, record.flags))
        if not record.flags & SKIPPED:
            value = marshal.dumps((record.terms, record.symbol_terms, record.spans))
            self._db.execute("INSERT INTO records (id, value) VALUES (?, ?)", (doc, value))

    def _patch(self, gone: list[int], new: list[tuple[str, bytes]],
               read: Callable[[list[str]], Iterable[FileRecord]]) -> None:
        """Replace the documents of changed files: their postings and names rows are rewritten, the rest kept."""
        db = self._db
        old = self.records(gone)
        touched_terms = {t for terms, _, _ in old.values() for t in terms}
        for chunk in _chunks(gone):
            q = f"SELECT path FROM docs WHERE id IN ({','.join('?' * len(chunk))})"
            touched_terms.update(PATH_TERM + t for (path,) in db.execute(q, chunk) for t in path_tokens(path))
        touched_names = {s[0] for _, _, spans in old.values() for s in spans}
        # ids are never reused: a reader pinned to an older snapshot keeps meaning the same file by the same id
        row = db.execute("SELECT value FROM meta WHERE key = 'next_id'").fetchone()
        first = max(int(row[0]) if row else 0, db.execute("SELECT COALESCE(MAX(id), -1) FROM docs").fetchone()[0] + 1)
        records = read([path for path, _ in new])
        fresh = {first + k: (path, ckey, record) for k, ((path, ckey), record) in enumerate(zip(new, records, strict=True))}
        added_terms: dict[str, list[tuple[int, int]]] = {}
        added_names: dict[str, list[tuple[int, int]]] = {}
        for doc, (path, _, record) in fresh.items():
            _add(added_terms, added_names, doc, path, record)
        gone_set = set(gone)
        db.execute("BEGIN IMMEDIATE")
        for chunk in _chunks(gone):
            marks = ",".join("?" * len(chunk))
            db.execute(f"DELETE FROM docs WHERE id IN ({marks})", chunk)
            db.execute(f"DELETE FROM records WHERE id IN ({marks})", chunk)
        for doc, (path, ckey, record) in fresh.items():
            self._insert(doc, path, ckey, record)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('next_id', ?)", (first + len(fresh),))
        for table, column, touched, added in (("postings", "term", touched_terms, added_terms),
                                              ("names", "name", touched_names, added_names)):
            keys = sorted(touched | set(added))
            current = self._rows(table, column, keys)
            for key in keys:
                refs = [r for r in current.get(key, []) if r[0] not in gone_set] + added.get(key, [])
                if refs:
                    db.execute(f"INSERT OR REPLACE INTO {table} ({column}, refs) VALUES (?, ?)", (key, _blob(refs)))
                else:
                    db.execute(f"DELETE FROM {table} WHERE {column} = ?", (key,))
        db.execute("COMMIT")

    def _rows(self, table: str, column: str, keys: list[str]) -> dict[str, list[tuple[int, int]]]:
        out: dict[str, list[tuple[int, int]]] = {}
        for chunk in _chunks(keys):
            q = f"SELECT {column}, refs FROM {table} WHERE {column} IN ({','.join('?' * len(chunk))})"
            for key, refs in self._db.execute(q, chunk):
                out[key] = _pairs(refs)
        return out

    def documents(self) -> dict[str, tuple[int, int, int]]:
        """Path → (document id, length, flags) of every file of the index."""
        return {path: (doc, length, flags) for doc, path, length, flags in
                self._db.execute("SELECT id, path, length, flags FROM docs")}

    def records(self, docs: Iterable[int]) -> dict[int, tuple[dict[str, int], list[dict[str, int]], list[tuple]]]:
        """(term counts, definition term counts, definition fields) of each document asked for that has a record."""
        out = {}
        for chunk in _chunks(list(docs)):
            q = f"SELECT id, value FROM records WHERE id IN ({','.join('?' * len(chunk))})"
            for doc, value in self._db.execute(q, chunk):
                out[doc] = marshal.loads(value)
        return out

    def postings(self, terms: list[str]) -> dict[str, list[tuple[int, int]]]:
        """(document id, count) of every document holding each term (terms held by none are absent)."""
        return self._rows("postings", "term", terms)

    def names(self, names: list[str]) -> dict[str, list[tuple[int, int]]]:
        """(document id, definition index) of every definition of each name (names defined nowhere are absent)."""
        return self._rows("names", "name", names)

    def all_names(self) -> list[str]:
        """Every defined name."""
        return [name for (name,) in self._db.execute("SELECT name FROM names")]


def _add(postings: dict[str, list[tuple[int, int]]], names: dict[str, list[tuple[int, int]]], doc: int, path: str,
         record: FileRecord) -> None:
    if record.flags & SKIPPED:
        return
    for term, n in record.terms.items():
        postings.setdefault(term, []).append((doc, n))
    for term in path_tokens(path):
        postings.setdefault(PATH_TERM + term, []).append((doc, 1))
    for j, span in enumerate(record.spans):
        names.setdefault(span[0], []).append((doc, j))


def _chunks(items: list, size: int = 500) -> Iterable[list]:
    for i in range(0, len(items), size):
        yield items[i: i + size]

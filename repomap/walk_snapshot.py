"""What a walk found, kept per directory so that a warm build of an unchanged tree walks nothing.

A directory's listing (names, types) cannot change without its mtime or ctime changing, so when every directory
the last walk listed, every ignore file it consulted and every file it kept still stat the same, the walk's
result is the same: only each kept file's size and mtime are read again (the stat pre-check), and the content
key recorded for a file whose size and mtime are unchanged is reused, as the `files` pre-check table would.
Trees with symlinks or hard links, an unlisted directory, or anything modified in the last two seconds are not
snapshotted (their result depends on more than these stats, or the stats are not yet trustworthy).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
import stat as _stat
import time
import zlib

from repomap import lru
from repomap.config import MapConfig
from repomap.walk import RACY_NS, WalkedFile, WalkResult

SCHEMA = "CREATE TABLE IF NOT EXISTS walks (root TEXT PRIMARY KEY, data BLOB NOT NULL, used_ns INTEGER NOT NULL);"
"""Added to the tags cache file: one walk snapshot per (real root, configuration)."""

KEEP_WALKS = 64
"""Walk snapshots kept (the most recently used)."""

_VERSION = 5


def snapshot_name(root: str, config: MapConfig, extensions: frozenset[str]) -> str:
    """The name a walk of `root` with this configuration is stored under."""
    digest = hashlib.blake2b(f"{_VERSION}\0{config!r}\0{sorted(extensions)}".encode(), digest_size=12).hexdigest()
    return f"{os.path.realpath(root)}\0{digest}"


def _sig(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def store(db: sqlite3.Connection, name: str, walked: WalkResult, skipped: dict[str, int], consulted: list[str],
          keys: dict[str, bytes]) -> bool:
    """Keep the walk (its files with their content keys, its skip counts `skipped`) unless it is not safe to;
    True when stored."""
    now = time.time_ns()
    if walked.linked or any(now - m <= RACY_NS for _, m, _c in walked.dirs):
        return False
    ignores = [(p, _sig(p)) for p in dict.fromkeys(consulted)]
    if any(sig is not None and now - sig[1] <= RACY_NS for _, sig in ignores):
        return False
    files = [(f.path, f.size, f.mtime_ns, keys.get(f.path) if now - f.mtime_ns > RACY_NS else None)
             for f in walked.files]
    data = zlib.compress(pickle.dumps(
        (_VERSION, walked.dirs, ignores, files, walked.too_large, skipped, walked.attribute_dirs),
        protocol=pickle.HIGHEST_PROTOCOL), 1)

    def statements() -> None:
        db.execute("INSERT OR REPLACE INTO walks (root, data, used_ns) VALUES (?, ?, ?)", (name, data, now))
        db.execute("DELETE FROM walks WHERE root NOT IN (SELECT root FROM walks ORDER BY used_ns DESC LIMIT ?)",
                   (KEEP_WALKS,))
    return lru.write(db, statements)


def load(db: sqlite3.Connection, name: str, root: str, config: MapConfig
         ) -> tuple[WalkResult, dict[str, tuple[int, int, bytes]], list[str]] | None:
    """The stored walk of `root` with fresh sizes and mtimes, the pre-check rows (real path → size, mtime, key)
    of files unchanged since and the ignore files it depends on; None when there is none or anything it depends
    on changed."""
    try:
        row = db.execute("SELECT data FROM walks WHERE root = ?", (name,)).fetchone()
        if row is None:
            return None
        stored = pickle.loads(zlib.decompress(row[0]))
        if stored[0] != _VERSION:
            return None
        _version, dirs, ignores, files, too_large, skipped, attribute_dirs = stored
    except Exception:  # a damaged or outdated snapshot: walk again
        return None
    stat = os.stat
    for path, mtime, ctime in dirs:
        try:
            st = stat(path)
        except OSError:
            return None
        if st.st_mtime_ns != mtime or st.st_ctime_ns != ctime:
            return None
    if any(_sig(path) != sig for path, sig in ignores):
        return None
    real_root = os.path.realpath(root)
    prefix = str(root).rstrip("/") + "/"
    walked = WalkResult(skipped=dict(skipped), dirs=dirs, too_large=too_large, attribute_dirs=attribute_dirs)
    known: dict[str, tuple[int, int, bytes]] = {}
    limit = config.max_file_bytes
    for rel, size, mtime, key in files:
        try:
            st = stat(prefix + rel)
        except OSError:
            return None
        if not _stat.S_ISREG(st.st_mode) or st.st_nlink > 1 or st.st_size > limit:
            return None
        walked.files.append(WalkedFile(rel, st.st_size, st.st_mtime_ns))
        if key is not None and st.st_size == size and st.st_mtime_ns == mtime:
            known[f"{real_root}/{rel}"] = (size, mtime, key)
    for rel in too_large:
        try:
            if stat(prefix + rel).st_size <= limit:
                return None
        except OSError:
            return None
    return walked, known, [path for path, _ in ignores]

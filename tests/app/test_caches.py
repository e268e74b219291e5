"""Caches that stop growing: last use recorded, least recently used evicted under the caps, `bugsleuth cache`."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from pathlib import Path

from typer.testing import CliRunner

from app import caches
from app.cli import cli
from app.config import get_settings
from app.repos import cached_trees, evict_trees, prepare_tree_sync
from app.views import RepoView
from funnel.localize import corpus_index
from funnel.localize.term_cache import TermCache
from repomap import lru
from repomap.cache import TagCache, cache_file
from tests.app._service_fixtures import (  # noqa: F401 - fixtures
    base_settings,
    fixture_repo,
    register,
    running_service,
)

REPORT = {"repo": "acme/tiny", "title": "average crashes on empty list", "body": "ZeroDivisionError in average()"}

BLOB = b"x" * 20_000
HOUR = 3600


def _fill_tags(cache: TagCache, n: int) -> list[bytes]:
    keys = [bytes([i]) * 16 for i in range(n)]
    cache.store([(k, BLOB, BLOB) for k in keys], [(f"/t/{i}.py", 1, 1, k) for i, k in enumerate(keys)])
    return keys


def _age(db: sqlite3.Connection, table: str, key_column: str, keys, hours_ago: float) -> None:
    used = int(time.time() - hours_ago * HOUR)
    db.executemany(f"UPDATE {table} SET used_s = ? WHERE {key_column} = ?", [(used, k) for k in keys])


def test_the_tags_cache_evicts_the_least_recently_used_entries_down_to_its_cap(tmp_path):
    cache = TagCache(tmp_path)
    keys = _fill_tags(cache, 40)
    _age(cache._db, "tags", "key", keys[:20], hours_ago=48)
    _age(cache._db, "tags", "key", keys[20:], hours_ago=2)
    cache.load_core(keys[10:20])  # read again now: these are recent, whatever their age was
    cap = lru.live_bytes(cache._db) // 2

    dropped = cache.evict(cap)

    assert dropped > 0
    assert lru.live_bytes(cache._db) <= cap
    left = set(cache.load_core(keys))
    assert not left & set(keys[:10]), "the oldest go first"
    assert set(keys[10:20]) <= left, "the ones just read stay"
    assert len(cache.known_files("/t")) == len(left), "stat pre-check rows follow their tags"


def test_a_warm_build_records_its_use_without_writing_again_within_the_hour(tmp_path):
    cache = TagCache(tmp_path)
    keys = _fill_tags(cache, 5)
    _age(cache._db, "tags", "key", keys, hours_ago=5)
    before = cache._db.total_changes
    cache.load_core(keys)
    assert cache._db.total_changes == before + 5  # stale uses refreshed
    cache.load_core(keys)
    assert cache._db.total_changes == before + 5  # fresh: nothing written


def test_a_tags_cache_file_from_before_last_use_gets_the_column_and_keeps_its_entries(tmp_path):
    path = cache_file(tmp_path)
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE tags (key BLOB PRIMARY KEY, core BLOB NOT NULL, refs BLOB NOT NULL);"
        "INSERT INTO tags VALUES (x'01', x'02', x'03');"
    )
    db.commit()
    db.close()
    cache = TagCache(tmp_path)
    assert cache.persistent
    assert cache.load_core([b"\x01"]) == {b"\x01": b"\x02"}
    assert cache.usage().entries == 1


def test_the_term_cache_evicts_the_least_recently_used_counts(tmp_path):
    cache = TermCache(tmp_path)
    cache.put_many({f"k{i}": ("x" * 20_000,) for i in range(30)})
    with sqlite3.connect(cache.path) as db:
        _age(db, "terms", "key", [f"k{i}" for i in range(15)], hours_ago=30)
    cap = cache.usage().live_bytes // 2
    assert cache.evict(cap) > 0
    assert cache.usage().live_bytes <= cap
    left = cache.get_many([f"k{i}" for i in range(30)])
    assert "k0" not in left and "k29" in left


def _trees(settings, path, commits) -> list[Path]:
    repo = RepoView(name="acme/tiny", location=str(path), kind="path", default_ref=None,
                    created_at="2026-01-01T00:00:00Z")
    return [prepare_tree_sync(settings, repo, ref).root for ref in commits]


def _set_used(tree: Path, hours_ago: float) -> None:
    marker = tree.parent / f".{tree.name}.use"
    t = time.time() - hours_ago * HOUR
    os.utime(marker, (t, t))


def test_trees_over_the_cap_go_least_recently_used_first_but_never_one_in_use(base_settings, fixture_repo):
    path, commits = fixture_repo
    settings = base_settings()
    old, recent = _trees(settings, path, [commits["v1"], commits["head"]])
    listed = cached_trees(settings)
    assert {t.path for t in listed} == {old, recent} and all(t.size > 0 for t in listed)
    _set_used(old, hours_ago=5)

    removed = evict_trees(settings, max_bytes=0)

    assert [t.path for t in removed] == [old]  # the other was used a moment ago: it may be under investigation
    assert not old.exists() and recent.is_dir()
    assert not (old.parent / f".{old.name}.use").exists()
    _set_used(recent, hours_ago=2)
    assert [t.path for t in evict_trees(settings, max_bytes=0)] == [recent]


def test_preparing_a_tree_again_records_its_use(base_settings, fixture_repo):
    path, commits = fixture_repo
    settings = base_settings()
    (tree,) = _trees(settings, path, [commits["v1"]])
    _set_used(tree, hours_ago=5)
    _trees(settings, path, [commits["v1"]])
    assert time.time() - cached_trees(settings)[0].used < 60


async def test_an_investigation_brings_the_trees_under_their_cap(base_settings, fixture_repo):
    path, commits = fixture_repo
    async with running_service(base_settings(trees_max_size=1)) as svc:
        (old,) = _trees(svc.settings, path, [commits["v1"]])
        _set_used(old, hours_ago=3)
        await register(svc, "acme/tiny", path)
        inv = (await svc.client.post("/api/reports", json=REPORT)).json()["id"]
        await svc.wait_status(inv, ("done",))
        # the runner enforces the caps just after it stores the run as done: wait for that step (up to 5 s)
        for _ in range(100):
            if not old.exists():
                break
            await asyncio.sleep(0.05)
        assert not old.exists()
        assert [t.path.name for t in cached_trees(svc.settings)] == [f"{commits['head']}-exact"]


def test_cache_show_and_prune_from_the_command_line(monkeypatch, tmp_path, fixture_repo):
    cache_dir = Path(os.environ["BUGSLEUTH_CACHE_DIR"])
    tags = TagCache(cache_dir / "repomap")
    keys = _fill_tags(tags, 20)
    _age(tags._db, "tags", "key", keys, hours_ago=10)
    tags.close()
    stale = cache_dir / "repomap" / "tags-v1-000000000000.sqlite"
    stale.write_bytes(b"\0" * 50_000)
    get_settings.cache_clear()
    runner = CliRunner()
    try:
        shown = runner.invoke(cli, ["cache", "show"])
        assert shown.exit_code == 0, shown.output
        assert "tags" in shown.output and "20" in shown.output and "1 stale file(s)" in shown.output
        as_json = runner.invoke(cli, ["cache", "show", "--json"])
        assert '"cache": "trees"' in as_json.output and '"entries": 20' in as_json.output

        pruned = runner.invoke(cli, ["cache", "prune", "--only", "tags", "--max-size", "100KB"])
        assert pruned.exit_code == 0, pruned.output
        assert "tags: evicted" in pruned.output and not stale.exists()
        assert caches.show(get_settings())[1].bytes <= 100_000
        assert lru.file_bytes(cache_file(cache_dir / "repomap")) <= 150_000  # vacuumed: space given back

        bad = runner.invoke(cli, ["cache", "prune", "--only", "clones"])
        assert bad.exit_code == 2 and "unknown cache 'clones'" in bad.output
        bad_size = runner.invoke(cli, ["cache", "prune", "--max-size", "lots"])
        assert bad_size.exit_code == 2 and "is not a size" in bad_size.output
    finally:
        get_settings.cache_clear()


def test_corpus_indexes_of_large_trees_are_shown_and_evicted_least_recently_used_but_never_one_in_use(base_settings):
    trees = Path(os.environ["BUGSLEUTH_CACHE_DIR"]) / "offline" / "trees"
    trees.mkdir(parents=True, exist_ok=True)
    ages = {"a": 30, "b": 20, "c": 0.1}
    for name, hours in ages.items():
        index = trees / f"{corpus_index.index_prefix()}{name * 16}.sqlite"
        index.write_bytes(b"\0" * 40_000)
        used = time.time() - hours * HOUR
        os.utime(index, (used, used))
    stale = trees / "corpus-v0-0000000000000000.sqlite"
    stale.write_bytes(b"\0" * 10_000)
    settings = base_settings()
    report = [r for r in caches.show(settings) if r.name == "corpora"][0]
    assert (report.entries, report.bytes, report.stale) == (3, 120_000, [stale])
    result = caches.prune(settings, only=("corpora",), max_size=0)[0]
    assert (result.dropped, result.kept_in_use) == (2, 1) and result.freed_bytes == 90_000  # 2 old + stale
    assert [p.name[-23:-7] for p in corpus_index.index_files(trees.parent)] == ["c" * 16]

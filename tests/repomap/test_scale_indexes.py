"""The warm path and the persisted name index: an unchanged tree is not walked, hashed or decoded again, and
symbol lookups read the persisted rows yet answer exactly as a scan of every file does."""

from __future__ import annotations

import os
import time
from pathlib import Path

from repomap import SymbolIndex, build_repo_map

_NAMES = ("helper_7", "Widget_3", "Widget_3.render", "pkg.mod_5.Widget_5.render", "render", "widget_3",
          "helpr_7", "Widgit_3", "nothing_like_this_zz", "mod_9")


def _tree(root: Path, n: int = 210) -> Path:
    """A tree of `n` Python files (enough for a stored graph snapshot), all dated ten seconds ago."""
    for i in range(n):
        path = root / "pkg" / f"sub{i % 7}" / f"mod_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"class Widget_{i}:\n    def render(self):\n        return helper_{(i + 1) % n}()\n\n\n"
                        f"def helper_{i}():\n    return Widget_{i}()\n")
    _age(root)
    return root


def _age(root: Path) -> None:
    old = time.time() - 10
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.utime(Path(dirpath) / name, (old, old))
        os.utime(dirpath, (old, old))


def _scan(m) -> SymbolIndex:
    paths = [f.path for f in m.files]
    return SymbolIndex(m.definitions, sorted(paths), {p: i for i, p in enumerate(paths)})


def test_unchanged_second_map_walks_hashes_and_decodes_nothing(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    first = build_repo_map(root, cache_dir=tmp_path / "cache")
    second = build_repo_map(root, cache_dir=tmp_path / "cache")
    assert first.stats.walk == "walked" and first.stats.files_hashed == 210
    assert second.stats.walk == "snapshot"
    assert second.stats.files_hashed == 0
    assert second.stats.precheck_rows == 0
    assert second.stats.graph == "snapshot"
    assert second.stats.cores_decoded <= second.files_shown + 1
    assert second.text == first.text
    assert [(f.path, f.score) for f in second.files] == [(f.path, f.score) for f in first.files]


def test_added_file_is_seen_after_a_snapshot(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    build_repo_map(root, cache_dir=tmp_path / "cache")
    (root / "pkg" / "sub1" / "extra.py").write_text("def brand_new():\n    pass\n")
    m = build_repo_map(root, cache_dir=tmp_path / "cache")
    assert m.stats.walk == "walked"
    assert [d.path for d in m.index.lookup("brand_new")] == ["pkg/sub1/extra.py"]


def test_changed_file_updates_the_persisted_name_index(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    before = build_repo_map(root, cache_dir=tmp_path / "cache")
    assert not before.index.lookup("freshly_added", fuzzy=False)
    target = root / "pkg" / "sub3" / "mod_3.py"
    target.write_text(target.read_text() + "\n\ndef freshly_added():\n    pass\n")
    old = time.time() - 5
    os.utime(target, (old, old + 1))
    after = build_repo_map(root, cache_dir=tmp_path / "cache")
    assert after.stats.walk == "snapshot" and after.stats.files_hashed == 1
    hits = after.index.lookup("freshly_added", fuzzy=False)
    assert [(d.path, d.start_line) for d in hits] == [("pkg/sub3/mod_3.py", 10)]
    assert after.index.store is not None and after.index.store.stats.indexed_files == 0


def test_lookup_after_a_restart_uses_the_persisted_index(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    build_repo_map(root, cache_dir=tmp_path / "cache").index.lookup("helper_7")
    m = build_repo_map(root, cache_dir=tmp_path / "cache")  # a new map: nothing shared in memory
    hits = m.index.lookup("helper_7")
    store = m.index.store
    assert store is not None
    assert store.stats.tree_marked and store.stats.indexed_files == 0
    assert store.stats.files_decoded == 1  # the one file defining it, not every file
    assert [d.path for d in hits] == ["pkg/sub0/mod_7.py"]


def test_persisted_lookups_equal_the_scan(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    m = build_repo_map(root, cache_dir=tmp_path / "cache", focus="Widget_3.render fails")
    scan = _scan(m)
    for name in _NAMES:
        assert m.index.lookup(name) == scan.lookup(name), name
        assert m.index.suggest(name) == scan.suggest(name), name

"""The tags cache: content-hash keys, re-parsing only what changed, sharing across checkouts, concurrency."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

from repomap import build_repo_map
from repomap.cache import CACHE_VERSION, TagCache, default_cache_dir
from tests.repomap.conftest import POLYGLOT, write_tree


def _age(root, seconds=10):
    """Backdate every file so the stat pre-check trusts it (fresh mtimes are deliberately not trusted)."""
    past = time.time() - seconds
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(dirpath, name), (past, past))


def test_warm_build_parses_nothing(polyglot, cache_dir):
    cold = build_repo_map(polyglot, cache_dir=cache_dir)
    warm = build_repo_map(polyglot, cache_dir=cache_dir)
    assert (cold.stats.cache_misses, cold.stats.cache_hits) == (16, 0)
    assert (warm.stats.cache_misses, warm.stats.cache_hits) == (0, 16)
    assert warm.text == cold.text


def test_editing_one_file_reparses_only_that_file(polyglot, cache_dir):
    _age(polyglot)
    build_repo_map(polyglot, cache_dir=cache_dir)
    (polyglot / "app" / "service.py").write_text(
        (polyglot / "app" / "service.py").read_text() + "\n\ndef added():\n    pass\n"
    )
    after = build_repo_map(polyglot, cache_dir=cache_dir)
    assert (after.stats.cache_misses, after.stats.cache_hits) == (1, 15)
    assert "added" in [d.name for d in after.definitions("app/service.py")]


def test_same_size_edit_with_unchanged_mtime_is_still_seen_when_recent(polyglot, cache_dir):
    build_repo_map(polyglot, cache_dir=cache_dir)
    path = polyglot / "web" / "base.js"
    st = path.stat()
    path.write_text(path.read_text().replace("get(url)", "put(url)"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = build_repo_map(polyglot, cache_dir=cache_dir)
    assert [d.name for d in after.definitions("web/base.js")] == ["BaseClient", "put"]


def test_identical_files_in_another_checkout_share_entries(polyglot, cache_dir, tmp_path):
    build_repo_map(polyglot, cache_dir=cache_dir)
    other = tmp_path / "other-commit"
    shutil.copytree(polyglot, other)
    (other / "lib" / "greeter.rb").write_text("class Changed\nend\n")
    second = build_repo_map(other, cache_dir=cache_dir)
    assert (second.stats.cache_misses, second.stats.cache_hits) == (1, 15)


def test_cache_file_is_versioned_and_defaults_to_the_env_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c" / "repomap"
    cache = TagCache(default_cache_dir())
    assert cache.path.name.startswith(f"tags-v{CACHE_VERSION}-")
    cache.close()


def test_default_cache_dir_is_used_when_none_is_given(polyglot, monkeypatch, tmp_path):
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(tmp_path / "env-cache"))
    repo_map = build_repo_map(polyglot)
    assert repo_map.stats.cache_path.startswith(str(tmp_path / "env-cache" / "repomap"))


def test_unwritable_cache_dir_falls_back_to_memory(polyglot, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a dir")
    repo_map = build_repo_map(polyglot, cache_dir=blocker / "sub")
    assert repo_map.stats.cache_path is None and repo_map.stats.files_indexed == 16


_WORKER = """
import sys
from repomap import build_repo_map
m = build_repo_map(sys.argv[1], cache_dir=sys.argv[2])
print(m.stats.files_indexed)
"""


def test_two_processes_share_one_cache_at_once(tmp_path):
    roots = [write_tree(tmp_path / f"r{i}", POLYGLOT) for i in range(2)]
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(r), str(tmp_path / "cache")], stdout=subprocess.PIPE, env=env, text=True
        )
        for r in roots
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == ["16", "16"]
    assert build_repo_map(roots[0], cache_dir=tmp_path / "cache").stats.cache_misses == 0


def test_a_warm_build_still_knows_a_binary_file_from_the_index_of_stored_keys(tmp_path):
    root = write_tree(tmp_path / "r", {"ok.py": "def f():\n    return 1\n", "blob.py": b"\x00\x01binary\x00"})
    old = time.time() - 3600
    for path in [root, *root.iterdir()]:
        os.utime(path, (old, old))
    cold = build_repo_map(root, cache_dir=tmp_path / "c")
    cache = TagCache(tmp_path / "c")
    keys = [k for (k,) in cache._db.execute("SELECT key FROM tags")]
    assert sorted(cache.present(keys).values()) == [False, True]
    warm = build_repo_map(root, cache_dir=tmp_path / "c")
    assert cold.stats.skipped.get("binary") == warm.stats.skipped.get("binary") == 1
    assert [f.path for f in warm.files] == ["ok.py"] and warm.stats.files_hashed == 0

"""The warm map: a graph snapshot stored as array parts, PageRank results and the module tree kept beside it,
all giving exactly what a fresh build gives."""

from __future__ import annotations

import numpy as np
import pytest

from repomap import _collect as _collect_module
from repomap import build_repo_map
from repomap import graph as _graphs
from repomap import rank as _rank
from repomap.render import module_tree
from repomap.tags import extract_tags
from tests.repomap.conftest import write_tree
from tests.repomap.test_incremental import FOCUS, _fingerprint, _tree

_ARRAYS = ("src", "dst", "weight", "sym_src", "sym_weight", "sym_keys", "sym_starts", "def_rank", "def_file",
           "def_member", "file_defs", "file_errors")


def _reference_pagerank(n, src, dst, weight, personal):
    """PageRank as it was before the buffered iteration (the floats the eval's figures were made with)."""
    p = personal / personal.sum()
    out = np.bincount(src, weights=weight, minlength=n)
    share = weight / np.where(out[src] > 0, out[src], 1.0)
    dangling = out == 0
    r = p.copy()
    for _ in range(60):
        flow = np.bincount(dst, weights=r[src] * share, minlength=n)
        new = 0.85 * (flow + r[dangling].sum() * p) + (1.0 - 0.85) * p
        delta = np.abs(new - r).sum()
        r = new
        if delta < 1e-7:
            break
    return r


@pytest.fixture(autouse=True)
def _snapshot_small_trees(monkeypatch):
    monkeypatch.setattr(_collect_module, "_SNAPSHOT_MIN_FILES", 1)


def _small_graph():
    files = {
        "a/core.py": "import b.util\n\nclass Base:\n    def save(self):\n        return _hidden()\n\ndef _hidden():\n    pass\n",
        "b/util.py": "from a.core import Base\n\nclass Größe(Base):\n    def save(self):\n        return helper()\n",
        "b/more.py": "def helper():\n    return Größe().save()\n",
        "c/x.go": "package c\n\nfunc Helper() int { return Other() }\n\nfunc Other() int { return 1 }\n",
        "c/y.go": "package c\n\nfunc Use() int { return Helper() + Other() }\n",
    }
    paths = sorted(files)
    families = ["go" if p.endswith(".go") else "python" for p in paths]
    tags = [extract_tags(files[p].encode(), "go" if p.endswith(".go") else "python") for p in paths]
    return _graphs.build_graph(paths, tags, families)


def test_a_snapshot_stored_as_parts_loads_to_an_equal_graph():
    graph = _small_graph()
    parts = _graphs.graph_parts(graph)
    loaded = _graphs.load_graph(graph.paths, parts.get, fallback=lambda: pytest.fail("no part is missing"))
    for name in _ARRAYS:
        assert np.array_equal(getattr(loaded, name), getattr(graph, name)), name
        assert getattr(loaded, name).dtype.kind == getattr(graph, name).dtype.kind
    assert loaded.families == graph.families
    names = {"Base", "save", "_hidden", "helper", "Größe", "Helper", "Other", "Use", "nowhere", "util", ""}
    for name in names:
        assert loaded.definers(name) == graph.definers(name)
        assert loaded.definers(name, top_level=True) == graph.definers(name, top_level=True)
    for file in range(len(graph.paths)):
        assert np.array_equal(loaded.symbol_keys(file, sorted(names)), graph.symbol_keys(file, sorted(names)))
    for index in ("module_files", "suffixes"):
        stored, built = getattr(loaded, index), getattr(graph, index)
        assert all(stored.get(key) == value for key, value in built.items())
        assert stored.get("no/such/key") is None


def test_a_part_gone_after_loading_is_taken_from_the_rebuilt_graph():
    graph = _small_graph()
    parts = _graphs.graph_parts(graph)
    loaded = _graphs.load_graph(graph.paths, parts.get, fallback=lambda: graph)
    del parts["src"]
    assert np.array_equal(loaded.src, graph.src)


def test_a_snapshot_of_another_format_or_size_is_refused():
    graph = _small_graph()
    parts = _graphs.graph_parts(graph)
    with pytest.raises(ValueError):
        _graphs.load_graph(graph.paths[:-1], parts.get, fallback=lambda: graph)
    parts["header"] = parts["header"].replace(b'"version": 2', b'"version": 1')
    with pytest.raises(ValueError):
        _graphs.load_graph(graph.paths, parts.get, fallback=lambda: graph)


@pytest.mark.parametrize("seed", range(40))
def test_pagerank_equals_the_previous_implementation_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    pairs = np.unique(rng.integers(0, n, int(rng.integers(0, 6 * n))) * n + rng.integers(0, n, 1))
    pairs = np.unique(np.concatenate([pairs, rng.integers(0, n * n, int(rng.integers(0, 8 * n)))]))
    src, dst = pairs // n, pairs % n
    weight = rng.random(len(src)) * rng.choice([0.1, 1.0, 7.0], len(src))
    personal = np.ones(n) if seed % 3 == 0 else np.where(rng.random(n) < 0.05, rng.random(n), 0.0) + (seed % 2) * 1e-3
    if personal.sum() == 0:
        personal[0] = 1.0
    assert np.array_equal(_rank.pagerank(n, src, dst, weight, personal),
                          _reference_pagerank(n, src, dst, weight, personal))


class _Store:
    def __init__(self) -> None:
        self.rows: dict[bytes, bytes] = {}

    def load_result(self, key: bytes) -> bytes | None:
        return self.rows.get(key)

    def store_result(self, key: bytes, data: bytes) -> None:
        self.rows[key] = data


@pytest.mark.parametrize("focus", [None, "Base.save calls helper() in b/util.py", "Helper returns Other()"])
def test_a_stored_pagerank_is_read_back_without_iterating_and_ranks_the_same(monkeypatch, focus):
    from repomap.focus import Focus

    graph = _small_graph()
    focus = Focus.from_text(focus) if focus else None
    fresh = _rank.rank(graph, focus)
    store = _Store()
    first = _rank.rank(graph, focus, store, b"tree")
    monkeypatch.setattr(_rank, "pagerank", lambda *a, **k: pytest.fail("PageRank ran again"))
    again = _rank.rank(graph, focus, store, b"tree")
    for r in (first, again):
        assert np.array_equal(r.file_scores, fresh.file_scores)
        assert np.array_equal(r.symbol_keys, fresh.symbol_keys)
        assert np.array_equal(r.symbol_values, fresh.symbol_values)
        assert r.mentioned == fresh.mentioned
    assert len(store.rows) == 1


def test_a_warm_map_in_a_new_cache_connection_equals_the_cold_map(tmp_path):
    tree = _tree(tmp_path / "tree")
    cold = build_repo_map(tree, focus=FOCUS, cache_dir=tmp_path / "cache", token_budget=500)
    fresh = build_repo_map(tree, focus=FOCUS, cache_dir=tmp_path / "other", token_budget=500)
    warm = [build_repo_map(tree, focus=FOCUS, cache_dir=tmp_path / "cache", token_budget=500) for _ in range(2)]
    assert cold.stats.graph == "built" and [w.stats.graph for w in warm] == ["snapshot", "snapshot"]
    for m in warm:
        assert m.text == cold.text == fresh.text
        assert [(f.path, f.score) for f in m.files] == [(f.path, f.score) for f in cold.files]
        assert [(s.definition, s.score) for s in m.symbols] == [(s.definition, s.score) for s in cold.symbols]
        assert _fingerprint(m) == _fingerprint(cold)


def test_the_kept_module_tree_is_the_tree_of_the_paths(tmp_path):
    tree = _tree(tmp_path / "tree")
    build_repo_map(tree, cache_dir=tmp_path / "cache")
    warm = build_repo_map(tree, cache_dir=tmp_path / "cache")
    corpus = warm._corpus
    assert corpus.module_tree == module_tree(corpus.paths, corpus.languages)
    assert warm.text.startswith(corpus.module_tree)


def test_evicted_snapshot_parts_go_with_their_graph(tmp_path):
    root = write_tree(tmp_path / "r", {f"m{i}.py": f"def f{i}():\n    return f{(i + 1) % 5}()\n" for i in range(5)})
    m = build_repo_map(root, cache_dir=tmp_path / "cache")
    db = m._corpus.cache.db
    assert db.execute("SELECT count(*) FROM graph_parts").fetchone()[0] > 0
    db.execute("DELETE FROM graphs")
    assert db.execute("SELECT count(*) FROM graph_parts").fetchone()[0] == 0

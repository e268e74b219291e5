"""Patching the stored graph of a directory after edits gives exactly the map of a full rebuild."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from repomap import _collect as _collect_module
from repomap import build_repo_map
from tests.repomap.conftest import POLYGLOT, write_tree

FOCUS = "Widget7.render fails in pkg/mod3.py: helper_2() returns None; see _cache_5 and Base.save"


def _module(i: int, n: int) -> str:
    j, k = (i + 1) % n, (i * 7 + 3) % n
    return f'''\
import pkg.mod{j}
from pkg.mod{k} import helper_{k}, Widget{k}


def helper_{i}(x):
    return helper_{j}(x) + helper_{k}(x)


def _cache_{i}():
    return Widget{k}().render()


class Widget{i}(Widget{j}):
    def render(self):
        return self.save() + helper_{i}(1)

    def save(self):
        return pkg.mod{j}.helper_{j}(2)
'''


def _tree(root: Path, n: int = 24) -> Path:
    files: dict[str, str | bytes] = dict(POLYGLOT)
    files["pkg/__init__.py"] = ""
    for i in range(n):
        files[f"pkg/mod{i}.py"] = _module(i, n)
    return write_tree(root, files)


def _edit(root: Path) -> None:
    path = root / "pkg" / "mod3.py"
    text = path.read_text().replace("def _cache_3", "def _renamed_cache_3").replace("helper_4(x)", "brand_new_name(x)")
    path.write_text(text + "\n\ndef brand_new_name(y):\n    return Widget5().save()\n\n\nclass Base:\n    pass\n")


def _add(root: Path) -> None:
    (root / "pkg" / "extra").mkdir()
    (root / "pkg" / "extra" / "tools.py").write_text(
        "import pkg.mod1\nfrom app.models import User\n\n\ndef helper_9(x):\n    return User(x).greet(x)\n\n\n"
        "class Widget11(pkg.mod1.Widget1):\n    def render(self):\n        return helper_3(self)\n"
    )
    (root / "pkg" / "mod2.py").write_text((root / "pkg" / "mod2.py").read_text() + "\nimport pkg.extra.tools\n")


def _delete(root: Path) -> None:
    (root / "pkg" / "mod5.py").unlink()
    (root / "app" / "models.py").unlink()


def _fingerprint(m) -> tuple:
    """Everything a map shows or returns, scores compared exactly."""
    focused = m.refocus(FOCUS, token_budget=400)
    return (
        (m.stats.files_indexed, m.stats.definitions, m.stats.parse_errors),
        m.text,
        [(f.path, f.score) for f in m.files],
        [(s.definition, s.score) for s in m.symbols],
        focused.text,
        [(f.path, f.score) for f in focused.files],
        [(s.definition, s.score) for s in focused.symbols],
    )


def _edges(m) -> dict[tuple[str, str], float]:
    g = m._corpus.graph
    return {(g.paths[s], g.paths[d]): w for s, d, w in zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist())}


@pytest.fixture(autouse=True)
def _snapshot_small_trees(monkeypatch):
    monkeypatch.setattr(_collect_module, "_SNAPSHOT_MIN_FILES", 1)


@pytest.mark.parametrize("change", [_edit, _add, _delete, lambda root: (_edit(root), _add(root), _delete(root))],
                         ids=["edit", "add", "delete", "all"])
def test_a_patched_graph_gives_the_map_of_a_full_rebuild(tmp_path, change):
    tree = _tree(tmp_path / "tree")
    before = build_repo_map(tree, cache_dir=tmp_path / "cache", token_budget=600)
    assert before.stats.graph == "built"
    change(tree)
    patched = build_repo_map(tree, cache_dir=tmp_path / "cache", token_budget=600)
    cold = build_repo_map(tree, cache_dir=tmp_path / "cold", token_budget=600)
    assert patched.stats.graph == "patched" and cold.stats.graph == "built"
    assert 1 <= patched.stats.graph_files <= 5
    assert _fingerprint(patched) == _fingerprint(cold)
    assert _edges(patched) == _edges(cold)
    assert _fingerprint(patched) != _fingerprint(before)


def test_successive_edits_patch_the_same_base_and_stay_exact(tmp_path):
    tree = _tree(tmp_path / "tree")
    build_repo_map(tree, cache_dir=tmp_path / "cache")
    for step, change in enumerate((_edit, _add, _delete)):
        change(tree)
        patched = build_repo_map(tree, cache_dir=tmp_path / "cache")
        assert patched.stats.graph == "patched"
        cold = build_repo_map(tree, cache_dir=tmp_path / f"cold-{step}")
        assert _fingerprint(patched) == _fingerprint(cold)


def test_an_unchanged_tree_loads_its_snapshot(tmp_path):
    tree = _tree(tmp_path / "tree")
    cold = build_repo_map(tree, cache_dir=tmp_path / "cache")
    warm = build_repo_map(tree, cache_dir=tmp_path / "cache")
    assert (cold.stats.graph, warm.stats.graph, warm.stats.graph_files) == ("built", "snapshot", 0)
    assert _fingerprint(warm) == _fingerprint(cold)


def test_another_directory_or_many_changes_build_afresh(tmp_path, monkeypatch):
    tree = _tree(tmp_path / "tree")
    build_repo_map(tree, cache_dir=tmp_path / "cache")
    other = shutil.copytree(tree, tmp_path / "other")
    _edit(other)
    assert build_repo_map(other, cache_dir=tmp_path / "cache").stats.graph == "built"
    monkeypatch.setattr(_collect_module, "_PATCH_MIN_FILES", 0)
    for i in range(0, 24, 2):  # half the modules
        path = tree / "pkg" / f"mod{i}.py"
        path.write_text(path.read_text() + f"\n\ndef more_{i}():\n    return helper_{i}(0)\n")
    rebuilt = build_repo_map(tree, cache_dir=tmp_path / "cache")
    assert rebuilt.stats.graph == "built"
    _edit(tree)
    assert build_repo_map(tree, cache_dir=tmp_path / "cache").stats.graph == "patched"  # the new base


def test_a_damaged_base_is_rebuilt(tmp_path):
    tree = _tree(tmp_path / "tree")
    first = build_repo_map(tree, cache_dir=tmp_path / "cache")
    first._corpus.cache._db.execute("UPDATE bases SET data = x'00'")
    _edit(tree)
    after = build_repo_map(tree, cache_dir=tmp_path / "cache")
    assert after.stats.graph == "built"
    assert _fingerprint(after) == _fingerprint(build_repo_map(tree, cache_dir=tmp_path / "cold"))


def test_graph_ids_are_a_detail_but_definers_are_not(tmp_path):
    tree = _tree(tmp_path / "tree")
    build_repo_map(tree, cache_dir=tmp_path / "cache")
    _edit(tree)
    patched = build_repo_map(tree, cache_dir=tmp_path / "cache")._corpus.graph
    cold = build_repo_map(tree, cache_dir=tmp_path / "cold")._corpus.graph
    for name in ("Base", "brand_new_name", "helper_4", "_cache_3", "render", "nowhere"):
        assert patched.definers(name) == cold.definers(name)
        assert patched.definers(name, top_level=True) == cold.definers(name, top_level=True)
    assert np.array_equal(np.sort(patched.sym_weight), np.sort(cold.sym_weight))

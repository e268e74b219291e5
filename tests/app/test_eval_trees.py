"""The tree cache: the right commit, read-only files, atomic publication, and tolerance of missing blobs."""

from __future__ import annotations

import os
import shutil
import stat

import pytest

from app.evaluation.errors import EvalInputError
from app.evaluation.trees import TreeCache, default_cache_dir
from bench import _trees as bench_trees
from tests.app import _eval_repo as fx


@pytest.fixture
def repo(tmp_path):
    return fx.make_repo(tmp_path)


def test_tree_holds_the_files_of_its_commit(tmp_path, repo):
    repo_dir, commits = repo
    cache = TreeCache(tmp_path / "trees")
    old = cache.materialize("acme/calc", repo_dir, commits[0])
    new = cache.materialize("acme/calc", repo_dir, commits[2])
    assert old.path == tmp_path / "trees" / "acme__calc" / f"{commits[0]}-exact"
    assert (old.path / "pkg" / "core.py").read_text() == fx.CORE_V1
    assert not (old.path / "pkg" / "util.py").exists()
    assert (new.path / "pkg" / "core.py").read_text() == fx.CORE_V2
    assert not old.cached and cache.materialize("acme/calc", repo_dir, commits[0]).cached
    assert not [p for p in old.path.parent.iterdir() if p.name.startswith(".tmp")]


def test_tree_files_are_read_only(tmp_path, repo):
    repo_dir, commits = repo
    tree = TreeCache(tmp_path / "trees").materialize("acme/calc", repo_dir, commits[0])
    mode = (tree.path / "pkg" / "core.py").stat().st_mode
    assert not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    assert tree.path.stat().st_mode & 0o755 == 0o755


def test_missing_blobs_are_left_out_and_the_rest_arrives(tmp_path, repo):
    repo_dir, commits = repo
    bare = tmp_path / "bare.git"
    shutil.copytree(repo_dir / ".git", bare)  # loose objects: one blob can be removed by hand
    sha = fx.git(repo_dir, "rev-parse", f"{commits[1]}:data.txt")
    os.remove(bare / "objects" / sha[:2] / sha[2:])
    cache = TreeCache(tmp_path / "trees")
    assert cache.missing_blobs(bare, commits[1]) == ["data.txt"]
    tree = cache.materialize("acme/calc", bare, commits[1])
    assert tree.missing == ("data.txt",)
    assert not (tree.path / "data.txt").exists()
    assert (tree.path / "pkg" / "util.py").read_text() == fx.UTIL


def test_unknown_commit_is_the_callers_error(tmp_path, repo):
    repo_dir, _ = repo
    with pytest.raises(EvalInputError, match="is not in"):
        TreeCache(tmp_path / "trees").materialize("acme/calc", repo_dir, "f" * 40)


def test_repo_name_must_be_owner_slash_name(tmp_path):
    with pytest.raises(EvalInputError, match="owner/name"):
        TreeCache(tmp_path).path_for("../evil", "abc")


def test_default_cache_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path / "trees"


def test_the_bench_scripts_take_a_tree_whose_snapshot_left_a_blob_out(tmp_path, repo, monkeypatch):
    repo_dir, commits = repo
    mirror = tmp_path / "mirrors" / "acme+calc" / "repo"
    shutil.copytree(repo_dir / ".git", mirror)
    sha = fx.git(repo_dir, "rev-parse", f"{commits[1]}:data.txt")
    os.remove(mirror / "objects" / sha[:2] / sha[2:])
    monkeypatch.setattr(bench_trees, "MIRRORS", tmp_path / "mirrors")
    monkeypatch.setattr(bench_trees, "TREES", tmp_path / "trees")
    root = bench_trees.ensure_tree("acme/calc", commits[1])
    assert root == tmp_path / "trees" / "acme__calc" / f"{commits[1]}-exact"
    assert not (root / "data.txt").exists()
    assert (root / "pkg" / "util.py").read_text() == fx.UTIL
    assert (root / "pkg" / "util.py").stat().st_mode & stat.S_IWUSR  # bench_repomap edits a copy of a tree
    assert bench_trees.ensure_tree("acme/calc", commits[1]) == root == bench_trees.tree_path("acme/calc", commits[1])

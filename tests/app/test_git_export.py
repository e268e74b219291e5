"""A commit's tree is written whole: export attributes meant for release tarballs leave nothing out."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app.config import Settings
from app.evaluation.errors import EvalSetupError
from app.evaluation.trees import TreeCache
from app.git_export import ExportError, extract_commit
from app.repos import prepare_tree_sync
from app.views import RepoView
from tests.app import _eval_repo as fx

ATTRIBUTES = ".gitattributes export-ignore\ntests/ export-ignore\ntests/** export-ignore\nversion.txt export-subst\n"


@pytest.fixture
def exported(tmp_path) -> tuple[Path, str]:
    """A repository whose `.gitattributes` hides its tests and itself from `git archive` and substitutes a file."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_core.py").write_text(fx.TEST)
    (repo / "core.py").write_text(fx.CORE_V1)
    (repo / "version.txt").write_text("commit $Format:%H$\n")
    (repo / ".gitattributes").write_text(ATTRIBUTES)
    fx.git(repo, "init", "-q", "-b", "main")
    fx.git(repo, "add", "-A")
    fx.git(repo, "commit", "-q", "-m", "first")
    return repo, fx.git(repo, "rev-parse", "HEAD")


def _plain_archive_names(repo: Path, commit: str) -> list[str]:
    listing = subprocess.run(f"git archive --format=tar {commit} | tar t", shell=True, cwd=repo,
                             capture_output=True, text=True, check=True).stdout
    return listing.split()


def _assert_whole(root: Path) -> None:
    assert (root / "tests" / "test_core.py").read_text() == fx.TEST
    assert (root / ".gitattributes").read_text() == ATTRIBUTES
    assert (root / "version.txt").read_text() == "commit $Format:%H$\n"


def test_plain_git_archive_would_leave_the_tests_out(exported):
    repo, commit = exported
    names = _plain_archive_names(repo, commit)
    assert "core.py" in names and not any(n.startswith("tests") for n in names)


def test_the_eval_tree_holds_the_files_export_attributes_hide(tmp_path, exported):
    repo, commit = exported
    tree = TreeCache(tmp_path / "trees").materialize("acme/exp", repo / ".git", commit)
    _assert_whole(tree.path)
    assert not list((repo / ".git").glob("info/attributes"))  # nothing written into the repository


def test_the_service_tree_holds_the_files_export_attributes_hide(tmp_path, exported):
    repo, commit = exported
    view = RepoView(name="acme/exp", location=str(repo), kind="path", default_ref=None,
                    created_at="2026-01-01T00:00:00Z")
    prepared = prepare_tree_sync(Settings(data_dir=tmp_path / "data", register_self=False), view, None)
    assert prepared.commit == commit and prepared.root.name == f"{commit}-exact"
    _assert_whole(prepared.root)


def test_a_repository_whose_path_holds_a_colon_is_read_whole(tmp_path, exported):
    repo, commit = exported
    odd = tmp_path / "a:b" / "repo"
    odd.parent.mkdir()
    repo.rename(odd)
    tree = TreeCache(tmp_path / "trees").materialize("acme/exp", odd / ".git", commit)
    _assert_whole(tree.path)


def test_a_repository_named_by_a_relative_path_is_read_whole(tmp_path, exported, monkeypatch):
    repo, commit = exported
    monkeypatch.chdir(tmp_path)
    tree = TreeCache(tmp_path / "trees").materialize("acme/exp", Path("repo") / ".git", commit)
    _assert_whole(tree.path)


def test_a_linked_worktree_is_read_whole_from_its_common_objects(tmp_path, exported):
    repo, commit = exported
    fx.git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "linked"), commit)
    git_dir = repo / ".git" / "worktrees" / "linked"
    tree = TreeCache(tmp_path / "trees").materialize("acme/exp", git_dir, commit)
    _assert_whole(tree.path)


def test_a_partial_clone_fetches_the_blobs_it_never_had_as_plain_git_archive_would(tmp_path, exported):
    repo, commit = exported
    fx.git(repo, "config", "uploadpack.allowfilter", "true")
    partial = tmp_path / "partial.git"
    fx.git(tmp_path, "clone", "-q", "--bare", "--filter=blob:none", f"file://{repo}", str(partial))
    view = RepoView(name="acme/partial", location=str(partial), kind="path", default_ref=None,
                    created_at="2026-01-01T00:00:00Z")
    prepared = prepare_tree_sync(Settings(data_dir=tmp_path / "data", register_self=False), view, None)
    _assert_whole(prepared.root)


def test_a_commit_git_does_not_have_fails_with_gits_own_words_in_both_trees(tmp_path, exported):
    repo, _commit = exported
    missing = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(ExportError, match=r"git archive 0123456789ab.* failed: fatal: not a tree object"):
        extract_commit(repo / ".git", missing, tmp_path / "out")
    with pytest.raises(EvalSetupError, match="not a tree object"):
        TreeCache(tmp_path / "trees")._extract(repo / ".git", missing, [], tmp_path / "eval-out")


def test_a_link_out_of_the_tree_is_left_out_and_the_rest_arrives(tmp_path, exported):
    repo, _ = exported
    (repo / "escape").symlink_to("/etc/passwd")
    (repo / "up").symlink_to("../../outside")
    (repo / "inside").symlink_to("core.py")
    fx.git(repo, "add", "-A")
    fx.git(repo, "commit", "-q", "-m", "links")
    commit = fx.git(repo, "rev-parse", "HEAD")
    tree = TreeCache(tmp_path / "trees").materialize("acme/exp", repo / ".git", commit)
    _assert_whole(tree.path)
    assert (tree.path / "inside").is_symlink() and (tree.path / "inside").read_text() == fx.CORE_V1
    assert not (tree.path / "escape").is_symlink() and not (tree.path / "up").is_symlink()


def _git_whose_archive(tmp_path: Path, does: str) -> str:
    """A `git` that runs the shell command `does` in place of `git archive` (`"$@"` its arguments) and is git for
    every other command."""
    fake = tmp_path / "fake-git"
    fake.write_text(f'#!/bin/sh\ncase "$*" in *archive*) {does};; esac\nexec git "$@"\n')
    fake.chmod(0o755)
    return str(fake)


def test_git_outlasting_the_timeout_is_killed_and_named(tmp_path, exported):
    repo, commit = exported
    slow = _git_whose_archive(tmp_path, "exec sleep 30")
    with pytest.raises(ExportError, match="did not finish within 0.5 s"):
        extract_commit(repo / ".git", commit, tmp_path / "out", git=slow, timeout=0.5)


def test_the_padding_git_writes_after_the_archives_end_is_read_not_cut_off(tmp_path, exported):
    """`git archive` pads the tar to a whole record after its end marker; a reader that stopped at the marker and
    closed the pipe killed git with SIGPIPE mid-padding, an intermittent failure with no message from git."""
    repo, commit = exported
    late = _git_whose_archive(tmp_path, 'git "$@"; sleep 0.5; exec head -c 10240 /dev/zero')
    extract_commit(repo / ".git", commit, tmp_path / "out", git=late)
    _assert_whole(tmp_path / "out")


def test_git_killed_by_a_signal_is_named_by_the_signal(tmp_path, exported):
    repo, commit = exported
    with pytest.raises(ExportError, match="failed: git was killed by signal 9"):
        extract_commit(repo / ".git", commit, tmp_path / "out", git=_git_whose_archive(tmp_path, "kill -9 $$"))

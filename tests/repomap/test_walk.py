"""The walker: gitignore semantics without git, default excludes, size and binary limits, symlinks."""

from __future__ import annotations

import os
import sys

import pytest

from repomap import IgnoreRules, MapConfig, SkipReason, build_repo_map, walk_files
from tests.repomap.conftest import write_tree


def _paths(root, config=None):
    return [f.path for f in walk_files(root, config).files]


def test_gitignore_is_honoured_outside_a_git_work_tree(tmp_path):
    root = write_tree(
        tmp_path / "r",
        {
            ".gitignore": "# comment\n*.log\n!keep.log\n/generated/\ndocs/**/draft.md\ncache/\n",
            "a.py": "",
            "debug.log": "",
            "keep.log": "",
            "generated/x.py": "",
            "sub/generated/y.py": "",
            "docs/a/b/draft.md": "",
            "docs/final.md": "",
            "deep/cache/z.py": "",
            "sub/.gitignore": "*.tmp\n/only_here.py\n",
            "sub/t.tmp": "",
            "sub/only_here.py": "",
            "sub/inner/only_here.py": "",
            "other/t.tmp": "",
        },
    )
    assert not (root / ".git").exists()
    assert _paths(root) == [
        ".gitignore",
        "a.py",
        "docs/final.md",
        "keep.log",
        "other/t.tmp",
        "sub/.gitignore",
        "sub/generated/y.py",
        "sub/inner/only_here.py",
    ]


def test_ignore_rules_answer_for_single_paths(tmp_path):
    root = write_tree(tmp_path / "r", {".gitignore": "build_out/\n*.pyc\n", "pkg/.gitignore": "local.cfg\n"})
    rules = IgnoreRules(root)
    assert rules.is_ignored("build_out", is_dir=True)
    assert rules.is_ignored("build_out/x.py", is_dir=False)
    assert not rules.is_ignored("build_out", is_dir=False)
    assert rules.is_ignored("pkg/mod.pyc", is_dir=False)
    assert rules.is_ignored("pkg/local.cfg", is_dir=False)
    assert not rules.is_ignored("local.cfg", is_dir=False)
    assert rules.is_ignored(".git", is_dir=True)
    assert rules.is_ignored("node_modules/x/index.js", is_dir=False)
    assert not rules.is_ignored("src/app.py", is_dir=False)


def test_a_gitignore_starting_with_a_byte_order_mark_ignores_its_first_pattern_as_git_does(tmp_path):
    root = write_tree(tmp_path / "r", {"secret.py": "", "a.py": "", "sub/b.py": "", "sub/c.py": ""})
    (root / ".gitignore").write_bytes(b"\xef\xbb\xbfsecret.py\r\n")
    (root / "sub" / ".gitignore").write_bytes(b"\xef\xbb\xbfb.py\n")
    assert sorted(p for p in _paths(root) if p.endswith(".py")) == ["a.py", "sub/c.py"]



@pytest.mark.parametrize(
    "pattern,path,is_dir,ignored",
    [
        ("*.py", "a/b/c.py", False, True),
        ("/top.py", "top.py", False, True),
        ("/top.py", "a/top.py", False, False),
        ("a/*.py", "a/x.py", False, True),
        ("a/*.py", "a/b/x.py", False, False),
        ("**/logs", "x/y/logs", True, True),
        ("logs/**", "logs/a/b.txt", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("a/**/b", "a/b", False, True),
        ("file?.txt", "file1.txt", False, True),
        ("file[0-9].txt", "filex.txt", False, False),
        ("\\#hash", "#hash", False, True),
        ("dir/", "dir", False, False),
    ],
)
def test_gitignore_pattern_semantics(tmp_path, pattern, path, is_dir, ignored):
    root = write_tree(tmp_path / "r", {".gitignore": pattern + "\n"})
    assert IgnoreRules(root, MapConfig(exclude_dirs=(), exclude_files=())).is_ignored(path, is_dir) is ignored


def test_default_excludes_skip_vendored_generated_and_lock_files(tmp_path):
    root = write_tree(
        tmp_path / "r",
        {
            "src/app.js": "",
            "node_modules/lib/index.js": "",
            "vendor/x.go": "",
            ".venv/lib/site.py": "",
            "dist/bundle.js": "",
            "web/app.min.js": "",
            "web/app.js.map": "",
            "proto/msg_pb2.py": "",
            "api/client.generated.ts": "",
            "package-lock.json": "",
            "Cargo.lock": "",
            ".git/config": "",
        },
    )
    result = walk_files(root)
    assert [f.path for f in result.files] == ["src/app.js"]
    assert result.skipped[SkipReason.excluded] == 11


def test_large_and_binary_files_are_skipped_and_counted(tmp_path):
    root = write_tree(tmp_path / "r", {"big.py": "x = 1\n" * 300_000, "bin.py": b"\x00\x01\x02", "ok.py": "x = 1\n"})
    result = walk_files(root, MapConfig(max_file_bytes=1_000_000))
    assert [f.path for f in result.files] == ["ok.py"]
    assert result.skipped == {"too_large": 1, "binary": 1}
    stats = build_repo_map(root, cache_dir=tmp_path / "cache").stats
    assert stats.files_indexed == 1 and stats.skipped == {"binary": 1, "too_large": 1}


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_symlink_loops_are_skipped_and_counted(tmp_path):
    root = write_tree(tmp_path / "r", {"pkg/mod.py": "def f():\n    pass\n"})
    os.symlink("..", root / "pkg" / "loop")
    os.symlink("self", root / "self")  # a link to itself: ELOOP
    os.symlink(tmp_path, root / "escape")
    os.symlink("missing.py", root / "dangling.py")
    result = walk_files(root)
    assert [f.path for f in result.files] == ["pkg/mod.py"]
    assert result.skipped == {"symlink_loop": 2, "symlink_escape": 1, "broken_symlink": 1}
    repo_map = build_repo_map(root, cache_dir=tmp_path / "cache")
    assert repo_map.stats.skipped["symlink_loop"] == 2
    assert [f.path for f in repo_map.files] == ["pkg/mod.py"]


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads everything")
def test_unreadable_directories_are_counted_not_fatal(tmp_path):
    root = write_tree(tmp_path / "r", {"ok.py": "", "secret/x.py": ""})
    (root / "secret").chmod(0)
    try:
        result = walk_files(root)
    finally:
        (root / "secret").chmod(0o755)
    assert [f.path for f in result.files] == ["ok.py"]
    assert result.skipped == {"unreadable": 1}


def test_extra_excludes_add_to_the_defaults(tmp_path):
    root = write_tree(tmp_path / "r", {"a.py": "", "tests/test_a.py": "", "node_modules/x.js": ""})
    assert _paths(root, MapConfig(extra_excludes=("tests/",))) == ["a.py"]

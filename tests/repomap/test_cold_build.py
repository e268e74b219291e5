"""The cold build's mechanisms give what the simple ones gave: the parse pipeline, the streamed cache writes,
the name-only gitignore matching and the gate's no-symlink shortcut."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from repomap import MapConfig, build_repo_map
from repomap import _collect as _collect_module
from repomap._parse import ParsePipeline, parse_batch
from repomap.cache import cache_file, content_key
from repomap.gate import Gate, Refused
from repomap.gitignore import compile_patterns
from tests.repomap.conftest import POLYGLOT, write_tree


def _jobs(root: Path) -> list[tuple[bytes, str, bytes]]:
    from repomap.languages import language_for

    jobs = []
    for path in sorted(POLYGLOT):
        data = (root / path).read_bytes()
        spec = language_for(path, data)
        if spec is not None and isinstance(POLYGLOT[path], str):
            jobs.append((content_key(spec.name, data), spec.name, data))
    return jobs


def test_the_pipeline_with_a_worker_process_gives_the_serial_tags(tmp_path):
    jobs = _jobs(write_tree(tmp_path / "r", POLYGLOT)) * 3  # enough batches for the pool to take some
    serial = {row[0]: row[1:] for row in parse_batch(jobs, 200)}
    pipeline = ParsePipeline(max_signature_chars=200, workers=2, threshold=1, adaptive=False)
    rows = []
    for i in range(0, len(jobs), 5):  # fed in pieces, as files are read
        rows.extend(pipeline.feed(jobs[i : i + 5]))
    rows.extend(pipeline.finish())
    assert pipeline.processes == 2
    assert len(rows) == len(jobs)
    assert {row[0]: row[1:] for row in rows} == serial


def _cache_rows(cache_dir: Path) -> dict[str, set]:
    db = sqlite3.connect(cache_file(cache_dir))
    out = {t: set(db.execute(f"SELECT * FROM {t}")) for t in ("sym_names", "sym_keys")}
    out["tags"] = set(db.execute("SELECT key, core, refs FROM tags"))
    out["files"] = set(db.execute("SELECT path, size, key FROM files"))
    db.close()
    return out


def test_rows_written_in_many_small_transactions_equal_one_write(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "r", POLYGLOT)
    old = os.path.getmtime(root) - 10
    for dirpath, _, names in os.walk(root):  # old enough for the stat pre-check rows to be written
        for name in names:
            os.utime(os.path.join(dirpath, name), (old, old))
    one = build_repo_map(root, cache_dir=tmp_path / "one", config=MapConfig(parallel_threshold=10_000))
    monkeypatch.setattr(_collect_module, "_CHUNK_FILES", 3)
    monkeypatch.setattr(_collect_module, "_STORE_ROWS", 2)
    many = build_repo_map(root, cache_dir=tmp_path / "many", config=MapConfig(parallel_threshold=10_000))
    assert many.text == one.text
    assert many.stats.cache_misses == one.stats.cache_misses > 0
    rows = _cache_rows(tmp_path / "one")
    assert rows["files"] and rows["sym_names"]
    assert _cache_rows(tmp_path / "many") == rows


PATTERNS = ["*.log", "build", "doc/", "!keep.log", "a?c", "\\#x", "*.min.*", "[ab].py", "**/gen", "x/**", "**",
            "deep/*.py", "/top", "trailing\\ ", "b*/"]
PATHS = ["a.log", "x/a.log", "x/y/keep.log", "build", "src/build", "doc", "a/doc", "abc", "q/abc", "#x", "p/#x",
         "m.min.js", "z/m.min.js", "a.py", "c/b.py", "gen", "r/s/gen", "x/y", "deep/z.py", "w/deep/z.py", "top",
         "u/top", "trailing ", "bin", "x\ny/a.log", "x\ny/abc", "a\nb.log"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_name_only_gitignore_matching_gives_the_full_regex_verdict(pattern):
    (group,) = compile_patterns([pattern])
    for path in PATHS:
        for is_dir in (False, True):
            full = bool(group.any_re and group.any_re.match(path)) or (
                is_dir and bool(group.dir_re and group.dir_re.match(path)))
            assert group.matches(path, is_dir) == full, (pattern, path, is_dir)


def test_the_gate_shortcut_spells_and_judges_paths_as_the_full_check(tmp_path):
    root = write_tree(tmp_path / "r", {"a/b.py": "x", "a/.env": "S=1", "c.py": "y"})
    (root / "link").symlink_to(root / "a")
    (root / "secret.py").symlink_to(root / "a" / ".env")
    gate = Gate(root)
    for rel in ("a/b.py", "./a/b.py", "a//b.py", "a/./b.py", "link/b.py", "c.py", "a"):
        got = gate.resolve(rel)
        assert got.real_rel == gate.relative(str(got.real)), rel
    for rel in ("secret.py", "link/.env", "a/.env", "./a/.env"):
        with pytest.raises(Refused):
            gate.resolve(rel)

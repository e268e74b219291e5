"""`bugsleuth map --stats` says where a build's time went and what it had to do again."""

from __future__ import annotations

import os
import time

from typer.testing import CliRunner

from app.cli import cli
from tests.repomap.conftest import write_tree

runner = CliRunner()


def test_map_stats_name_the_phases_and_show_a_warm_build_redoing_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(tmp_path / "cache"))
    root = write_tree(tmp_path / "r", {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(5)})
    old = time.time() - 3600  # a file changed in the last seconds is always hashed again (its mtime may lie)
    for path in [root, *root.iterdir()]:
        os.utime(path, (old, old))
    cold = runner.invoke(cli, ["map", str(root), "--stats"])
    warm = runner.invoke(cli, ["map", str(root), "--stats"])
    assert cold.exit_code == warm.exit_code == 0
    assert "phases: walk" in cold.stderr and "parse" in cold.stderr and "5 hashed" in cold.stderr
    assert "cache 5 hits / 0 misses" in warm.stderr and "0 hashed" in warm.stderr

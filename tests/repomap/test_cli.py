"""`bugsleuth map`: output contract, determinism across hash seeds, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from app.cli import cli
from tests.cli_output import said
from tests.repomap.conftest import write_tree

runner = CliRunner()


def _run_cli(args: list[str], seed: str, cache: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "BUGSLEUTH_CACHE_DIR": cache, "PYTHONPATH": os.getcwd()}
    return subprocess.run(
        [sys.executable, "-c", "from app.cli import main; main()", "map", *args],
        capture_output=True,
        env=env,
        timeout=120,
    )


def test_map_is_byte_identical_whatever_the_hash_seed(polyglot, tmp_path):
    args = [str(polyglot), "--tokens", "600", "--focus", "User.greet breaks Admin.promote in app/service.py"]
    first = _run_cli(args, "1", str(tmp_path / "c1"))
    second = _run_cli(args, "2", str(tmp_path / "c2"))
    assert first.returncode == second.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert b"app/service.py:" in first.stdout
    js1 = json.loads(_run_cli([*args, "--json"], "3", str(tmp_path / "c1")).stdout)
    js2 = json.loads(_run_cli([*args, "--json"], "4", str(tmp_path / "c2")).stdout)
    for doc in (js1, js2):
        doc.pop("stats")
        doc.pop("root")
    assert js1 == js2


def test_json_lists_ranked_files_symbols_and_stats(polyglot):
    result = runner.invoke(cli, ["map", str(polyglot), "--json", "--symbols", "5"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert len(doc["files"]) == 16 and {"path", "score"} <= set(doc["files"][0])
    assert len(doc["symbols"]) == 5
    assert {"name", "qualname", "kind", "path", "start_line", "end_line", "signature", "score"} == set(doc["symbols"][0])
    assert doc["stats"]["files_indexed"] == 16
    assert doc["text"].startswith("# Repository map: 16 files indexed")


def test_text_output_is_the_rendered_map(polyglot):
    result = runner.invoke(cli, ["map", str(polyglot), "--tokens", "200"])
    assert result.exit_code == 0
    assert result.stdout.startswith("# Repository map: 16 files indexed")


def test_focus_file_is_read(polyglot, tmp_path):
    report = tmp_path / "report.txt"
    report.write_bytes(b"Crash in lib/greeter.rb \xff\n")
    result = runner.invoke(cli, ["map", str(polyglot), "--json", "--focus-file", str(report)])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["files"][0]["path"] == "lib/greeter.rb"


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_bad_paths_exit_2_with_a_message_and_no_traceback(tmp_path, kind):
    target = tmp_path / "nope"
    if kind == "file":
        target.write_text("x")
    result = runner.invoke(cli, ["map", str(target)])
    assert result.exit_code == 2
    assert ("no such directory" if kind == "missing" else "not a directory") in result.stderr
    assert "Traceback" not in result.output


def test_missing_focus_file_exits_2(polyglot, tmp_path):
    result = runner.invoke(cli, ["map", str(polyglot), "--focus-file", str(tmp_path / "absent.txt")])
    assert result.exit_code == 2 and "no focus file at" in said(result, "stderr")


def test_a_binary_focus_file_is_refused_with_its_reason(polyglot, tmp_path):
    (tmp_path / "core").write_bytes(b"\x7fELF\x00\x00")
    result = runner.invoke(cli, ["map", str(polyglot), "--focus-file", str(tmp_path / "core")])
    assert result.exit_code == 2 and "is not text: it holds a NUL byte at offset 4" in said(result, "stderr")


def test_empty_and_unsupported_repositories_print_an_empty_map(tmp_path):
    (tmp_path / "empty").mkdir()
    docs = write_tree(tmp_path / "docs", {"README.md": "# hi\n", "notes.txt": "x"})
    for root in (tmp_path / "empty", docs):
        result = runner.invoke(cli, ["map", str(root), "--json"])
        assert result.exit_code == 0
        doc = json.loads(result.stdout)
        assert doc["files"] == [] and doc["symbols"] == []


def test_syntax_errors_and_invalid_utf8_do_not_fail_the_map(tmp_path):
    root = write_tree(tmp_path / "r", {"bad.py": b"def f(:\n  \xff\xfe\nclass Ok:\n    pass\n"})
    result = runner.invoke(cli, ["map", str(root), "--stats"])
    assert result.exit_code == 0
    assert "class Ok" in result.stdout
    assert "1 with syntax errors" in result.stderr

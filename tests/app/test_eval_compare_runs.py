"""`bench/compare_runs.py`: two eval runs compared instance by instance, a run still writing read as it stands."""

from __future__ import annotations

import json

import pytest

from bench.compare_runs import load, main


def _record(iid: str, files: list[str]) -> str:
    return json.dumps({"instance_id": iid, "ranked_files": files, "ranked_functions": [], "termination": "done"})


def test_a_run_still_writing_is_compared_without_its_torn_last_line_and_left_as_it_is(tmp_path, capsys):
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text(_record("a", ["x.py"]) + "\n" + _record("b", ["y.py"]) + "\n")
    torn = _record("a", ["z.py"]) + "\n" + '{"instance_id": "b", "ranked_fi'
    after.write_text(torn)
    assert list(load(after)) == ["a"]
    assert main([str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("a:") and "1 instance(s) compared, 1 differ" in out
    assert after.read_text() == torn, "the comparer never writes to a run's results"


def test_a_line_that_is_not_json_inside_the_file_stops_the_comparison_with_its_place(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(_record("a", ["x.py"]) + "\nnot json\n")
    with pytest.raises(SystemExit, match=r":2: not JSON"):
        load(path)

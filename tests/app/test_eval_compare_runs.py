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


def test_whole_diagnoses_differing_only_in_ignored_fields_compare_equal(tmp_path, capsys):
    def run(name: str, version: str, claims: int, summary: str = "s") -> str:
        record = json.loads(_record("a", ["x.py"])) | {"diagnosis": {
            "schema_version": version, "summary": summary, "stats": {"claims_total": claims, "duration_s": 1.0}}}
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps(record) + "\n")
        return str(path)

    before, after = run("before", "1.0.0", 4), run("after", "1.1.0", 9)
    assert main([before, after, "--whole"]) == 1
    assert main([before, after, "--whole", "--ignore", "schema_version", "--ignore", "stats.claims_total"]) == 0
    assert main([before, run("other", "1.1.0", 9, summary="t"), "--whole", "--ignore", "schema_version",
                 "--ignore", "stats.claims_total"]) == 1
    assert "diagnosis.summary: 's' -> 't'" in capsys.readouterr().out

"""`bugsleuth eval` end to end on a synthetic benchmark: a temporary git repository and a stub investigation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.evaluation import runner
from app.evaluation.data import load_repo_table, parse_instance
from app.evaluation.records import describe_result
from funnel.localize.citations import RankedLocations
from tests.app import _eval_repo as fx

STUB = "tests.app._eval_stub:investigate"


@pytest.fixture
def bench(tmp_path, monkeypatch):
    """Repository, dataset, REPOS.toml, a private tree cache and the stub's call log."""
    repo, commits = fx.make_repo(tmp_path)
    rows = fx.write_dataset(tmp_path, commits)
    log = tmp_path / "stub-log"
    log.mkdir()
    monkeypatch.setenv("EVAL_STUB_LOG", str(log))
    return {
        "dir": tmp_path, "repo": repo, "commits": commits, "rows": rows, "log": log,
        "data": tmp_path / "data.jsonl", "repos": fx.write_repos_toml(tmp_path, repo),
        "cache": tmp_path / "trees", "out": tmp_path / "out",
    }


def run_eval(bench, *extra: str, data: Path | None = None, repos: Path | None = None):
    args = ["eval", str(data or bench["data"]), "--repos", str(repos or bench["repos"]), "--cache",
            str(bench["cache"]), "--out", str(bench["out"]), "--investigate", STUB, *extra]
    return CliRunner().invoke(cli, args)


def stub_calls(bench) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(bench["log"].glob("*.json"))]


def results(bench) -> dict[str, dict]:
    lines = (bench["out"] / "results.jsonl").read_text().splitlines()
    return {r["instance_id"]: r for r in map(json.loads, lines)}


def test_eval_scores_a_synthetic_benchmark_as_hand_computed(bench):
    done = run_eval(bench)
    assert done.exit_code == 0, done.output
    summary = json.loads((bench["out"] / "summary.json").read_text())
    assert summary["n"] == 3
    assert summary["file_acc_at_1"] == pytest.approx(1 / 3, abs=1e-3)
    assert summary["file_acc_at_3"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["file_acc_at_5"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["mrr"] == pytest.approx(0.5)
    assert summary["function_acc_at_5"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["line_overlap"] == pytest.approx(1 / 3, abs=1e-3)
    assert summary["tool_calls_median"] == 4 and summary["tool_calls_max"] == 4
    assert summary["terminations"] == {"done": 3}
    assert set(summary["baseline"]) >= {"file_acc_at_1", "file_acc_at_5", "mrr"}
    assert summary["per_repo"]["acme/calc"]["n"] == 3
    first = results(bench)["acme__calc-1"]
    assert first["ranked_files"] == ["pkg/core.py", "pkg/util.py"]
    assert first["ranked_functions"] == ["pkg/core.py:Calculator.divide"]
    assert first["line_ranges"] == {"pkg/core.py": [[10, 11]], "pkg/util.py": [[1, 1]]}
    assert first["diagnosis"]["affected_files"][0]["path"] == "pkg/core.py"
    assert first["error"] is None and first["seconds"] >= 0
    assert "| file_acc_at_1 |" in (bench["out"] / "summary.md").read_text()
    assert (bench["out"] / "summary.svg").read_text().startswith("<svg")
    assert "file_acc_at_5" in done.stdout


def test_scoring_fields_never_reach_the_investigation(bench):
    assert run_eval(bench).exit_code == 0
    calls = stub_calls(bench)
    assert len(calls) == 3
    for call in calls:
        report = call["report"]
        dumped = json.dumps(call)
        assert fx.SECRET not in dumped  # hints, patch, gold_* all carry it
        assert "Calculator.divide" not in report["title"]
        assert report["source"] == "eval"
        assert report["repo"] is None and report["ref"] is None and report["labels"] == []
        assert "acme__calc-" not in json.dumps(report)  # no instance id
    by_title = {c["report"]["title"]: c for c in calls}
    first = by_title["Division by zero is not caught"]
    assert first["report"]["body"].startswith("Calling divide(1, 0) crashes.")
    assert first["kwargs"] == {"explorer": "offline", "commit": bench["commits"][1], "git_dir": str(bench["repo"]),
                               "trace_path": str(bench["out"] / "traces" / "acme__calc-1.jsonl")}
    tree = Path(first["root"])
    assert (tree / "pkg" / "core.py").read_text() == fx.CORE_V1  # the tree at base_commit, not at HEAD


def test_eval_resumes_and_skips_recorded_instances(bench):
    assert run_eval(bench, "--limit", "1").exit_code == 0
    assert list(results(bench)) == ["acme__calc-1"]
    assert json.loads((bench["out"] / "summary.json").read_text())["n"] == 1
    done = run_eval(bench)
    assert done.exit_code == 0, done.output
    assert sorted(results(bench)) == ["acme__calc-1", "acme__calc-2", "acme__calc-3"]
    assert len(stub_calls(bench)) == 3  # instance 1 was not run twice
    assert "resuming: 1 of 3" in done.stderr


def test_eval_resume_cuts_a_torn_last_line(bench):
    assert run_eval(bench, "--limit", "2").exit_code == 0
    path = bench["out"] / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + lines[1][:40])  # killed while writing the second record
    assert run_eval(bench).exit_code == 0
    assert sorted(results(bench)) == ["acme__calc-1", "acme__calc-2", "acme__calc-3"]


@pytest.mark.slow
def test_eval_jobs_2_runs_in_worker_processes_with_the_same_figures(bench):
    done = run_eval(bench, "--jobs", "2")
    assert done.exit_code == 0, done.output
    summary = json.loads((bench["out"] / "summary.json").read_text())
    assert summary["n"] == 3 and summary["mrr"] == pytest.approx(0.5)
    import os

    assert {c["pid"] for c in stub_calls(bench)} - {os.getpid()}  # ran in spawned workers


def test_a_crashing_instance_is_recorded_and_the_run_goes_on(bench):
    rows = bench["rows"]
    rows[1]["problem_statement"] = "Boom\nSTUB-CRASH"
    bench["data"].write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run_eval(bench)
    assert done.exit_code == 0, done.output
    crashed = results(bench)["acme__calc-2"]
    assert crashed["termination"] == "crashed"
    assert "stub investigation exploded" in crashed["error"]
    summary = json.loads((bench["out"] / "summary.json").read_text())
    assert summary["n"] == 3 and summary["errors"] == 1
    assert summary["terminations"] == {"crashed": 1, "done": 2}
    assert run_eval(bench, "--retry-errors").exit_code == 0
    assert len(stub_calls(bench)) == 4  # only the crashed one ran again


def test_bad_jsonl_line_is_named(bench):
    lines = bench["data"].read_text().splitlines()
    lines.insert(1, "{not json")
    bench["data"].write_text("\n".join(lines) + "\n")
    done = run_eval(bench)
    assert done.exit_code == 2
    assert f"{bench['data']}:2: not valid JSON" in done.stderr
    assert "Traceback" not in done.output


def test_instance_missing_a_field_is_named(bench):
    row = fx.instance("x-1", bench["commits"][0], "t")
    del row["base_commit"]
    bench["data"].write_text(json.dumps(row) + "\n")
    done = run_eval(bench)
    assert done.exit_code == 2
    assert ":1: invalid instance (base_commit: Field required)" in done.stderr


def test_missing_data_file_is_a_clear_error(bench):
    done = run_eval(bench, data=bench["dir"] / "nope.jsonl")
    assert done.exit_code == 2
    assert "nope.jsonl does not exist" in done.stderr


def test_repo_not_in_the_table_is_a_clear_error(bench):
    rows = [fx.instance("other-1", bench["commits"][0], "t", repo="acme/other")]
    bench["data"].write_text(json.dumps(rows[0]) + "\n")
    done = run_eval(bench)
    assert done.exit_code == 2
    assert "no entry in [repos]" in done.stderr and "acme/other" in done.stderr
    assert not stub_calls(bench)


def test_commit_absent_from_the_repository_is_recorded(bench):
    rows = [fx.instance("ghost-1", "0123456789abcdef0123456789abcdef01234567", "Ghost\nSTUB-RANK: pkg/core.py")]
    bench["data"].write_text(json.dumps(rows[0]) + "\n")
    done = run_eval(bench)
    assert done.exit_code == 0, done.output
    record = results(bench)["ghost-1"]
    assert record["termination"] == "crashed" and "is not in" in record["error"]


def test_unknown_ids_and_ids_file_selection(bench):
    ids = bench["dir"] / "ids.txt"
    ids.write_text("# pick one\nacme__calc-3\n")
    assert run_eval(bench, "--ids", str(ids)).exit_code == 0
    assert list(results(bench)) == ["acme__calc-3"]
    ids.write_text("acme__calc-9\n")
    done = run_eval(bench, "--ids", str(ids))
    assert done.exit_code == 2 and "acme__calc-9" in done.stderr


def test_missing_investigate_callable_is_a_clear_error(bench):
    done = CliRunner().invoke(cli, ["eval", str(bench["data"]), "--repos", str(bench["repos"]), "--cache",
                                    str(bench["cache"]), "--out", str(bench["out"]), "--investigate",
                                    "tests.app._eval_stub:nope"])
    assert done.exit_code == 2
    assert "has no 'nope'" in done.stderr


def test_prepare_only_materializes_trees_without_investigating(bench):
    done = run_eval(bench, "--prepare-only")
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in (bench["cache"] / "acme__calc").iterdir()) == sorted(f"{c}-exact" for c in bench["commits"][1:])
    assert not stub_calls(bench)
    assert not (bench["out"] / "results.jsonl").exists()


def test_bad_repos_toml_is_a_clear_error(bench):
    bad = bench["dir"] / "bad.toml"
    bad.write_text("[repos\n")
    done = run_eval(bench, repos=bad)
    assert done.exit_code == 2 and "not valid TOML" in done.stderr
    bad.write_text('[other]\n"acme/calc" = "x"\n')
    done = run_eval(bench, repos=bad)
    assert done.exit_code == 2 and "needs a [repos] table" in done.stderr


def test_repos_toml_paths_are_relative_to_the_file(bench):
    (bench["dir"] / "repos.toml").write_text('[repos]\n"acme/calc" = "calc"\n')
    done = run_eval(bench, "--limit", "1")
    assert done.exit_code == 0, done.output
    assert results(bench)["acme__calc-1"]["error"] is None


@pytest.mark.slow
def test_a_worker_killed_outright_is_recorded_and_the_others_finish(bench):
    rows = bench["rows"]
    rows[0]["problem_statement"] = "Dies\nSTUB-DIE"
    bench["data"].write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run_eval(bench, "--jobs", "2")
    assert done.exit_code == 0, done.output
    records = results(bench)
    assert sorted(records) == ["acme__calc-1", "acme__calc-2", "acme__calc-3"]
    assert records["acme__calc-1"]["termination"] == "crashed"
    assert "worker" in records["acme__calc-1"]["error"]
    assert records["acme__calc-2"]["error"] is None  # a bystander of the broken pool runs again alone
    assert records["acme__calc-3"]["error"] is None  # ran in a fresh pool
    assert records["acme__calc-3"]["ranked_files"] == ["pkg/util.py"]


@pytest.mark.slow
def test_a_pool_broken_while_a_record_is_written_does_not_lose_the_next_instance(bench):
    # The culprit dies only while the parent writes the bystander's record, so the next submit finds the
    # pool already broken: that instance was never started and must run in the fresh pool.
    flag = bench["dir"] / "die-now"
    rows = bench["rows"]
    rows[0]["problem_statement"] = f"Dies\nSTUB-DIE-ON: {flag}"
    instances = [parse_instance(row) for row in rows]
    table = load_repo_table(bench["repos"])

    def on_record(record: dict) -> None:
        if flag.exists():
            return
        flag.touch()
        _wait_until_dead(_pid_of(bench, "STUB-DIE-ON"))
        time.sleep(1.0)  # the pool's manager thread marks the pool broken

    options = runner.RunOptions(out_dir=bench["out"], cache_dir=bench["cache"], jobs=2, investigate=STUB,
                                on_record=on_record)
    records = runner.run(instances, table, options)
    assert sorted(records) == ["acme__calc-1", "acme__calc-2", "acme__calc-3"]
    assert records["acme__calc-1"]["termination"] == "crashed"
    assert records["acme__calc-2"]["error"] is None and records["acme__calc-3"]["error"] is None


@pytest.mark.slow
def test_the_workers_end_with_an_eval_killed_outright(bench):
    # SIGKILL, as a CI timeout may send it: the parent can not stop its workers, they have to notice.
    never = bench["dir"] / "never"
    for row in bench["rows"]:
        row["problem_statement"] = f"Blocks\nSTUB-DIE-ON: {never}"
    bench["data"].write_text("".join(json.dumps(r) + "\n" for r in bench["rows"]))
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, "-c", "from app.cli import main; main()", "eval", str(bench["data"]), "--repos",
           str(bench["repos"]), "--cache", str(bench["cache"]), "--out", str(bench["out"]), "--investigate", STUB,
           "--jobs", "2"]
    parent = subprocess.Popen(cmd, cwd=root, env=os.environ | {"PYTHONPATH": str(root)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        worker = _pid_of(bench, "STUB-DIE-ON")
        parent.kill()
        parent.wait(timeout=60)
        _wait_until_dead(worker)  # the stub alone would block for two minutes
    finally:
        never.touch()
        parent.kill()


def _pid_of(bench, marker: str) -> int:
    for _ in range(1200):
        for call in stub_calls(bench):
            if marker in call["report"]["body"] + call["report"]["title"]:
                return call["pid"]
        time.sleep(0.05)
    raise AssertionError(f"no stub call with {marker}")


def _wait_until_dead(pid: int) -> None:
    stat = Path(f"/proc/{pid}/stat")
    for _ in range(1200):
        if not stat.exists() or stat.read_text().split(") ")[-1].startswith("Z"):
            return
        time.sleep(0.05)
    raise AssertionError(f"worker {pid} still alive")


def test_results_carry_the_deeper_ranking_and_report_only_rescoring_needs_no_repos(bench):
    assert run_eval(bench).exit_code == 0
    first = results(bench)["acme__calc-1"]
    # the stub has no ranking of its own: the diagnosis' lists stand in, and say so
    assert first["ranking"] == {"files": ["pkg/core.py", "pkg/util.py"],
                                "functions": ["pkg/core.py:Calculator.divide"], "source": "diagnosis"}
    assert first["baseline_ranking"]["files"] == first["baseline_files"][:10]
    assert isinstance(first["baseline_ranking"]["functions"], list)
    assert first["scores"]["ours"]["line_hit_at_1"] == 1.0 and first["scores"]["ours"]["first_range_width"] == 2
    (bench["out"] / "summary.json").unlink()
    done = CliRunner().invoke(cli, ["eval", str(bench["data"]), "--report-only", "--out", str(bench["out"]),
                                    "--investigate", "no.such:module"])
    assert done.exit_code == 0, done.output
    summary = json.loads((bench["out"] / "summary.json").read_text())
    assert summary["n"] == 3 and summary["line_hit_at_1"] == pytest.approx(1 / 3, abs=1e-3)
    assert summary["calibration"]["n"] == 3 and len(summary["calibration"]["bins"]) == 5
    assert len(stub_calls(bench)) == 3  # nothing ran again


def test_a_record_keeps_the_ranking_s_raw_confidence_and_its_features_for_the_calibration_fit():
    diagnosis = SimpleNamespace(affected_files=[], stats=SimpleNamespace(tool_calls=1, input_tokens=0, output_tokens=0),
                                ranked_files=lambda: ["calc.py"], model_dump_json=lambda: "{}",
                                termination=SimpleNamespace(reason="done", detail=""))
    located = RankedLocations(["calc.py"], ["calc.py:divide"], "offline", 0.47, {"margin": 0.3, "stem": 1.0})
    assert describe_result(SimpleNamespace(diagnosis=diagnosis, ranking=located, events=[]))["ranking"] == {
        "files": ["calc.py"], "functions": ["calc.py:divide"], "source": "offline", "raw_confidence": 0.47,
        "confidence_features": {"margin": 0.3, "stem": 1.0}}


def test_report_only_without_results_and_a_run_without_repos_are_clear_errors(bench):
    done = CliRunner().invoke(cli, ["eval", str(bench["data"]), "--report-only", "--out", str(bench["out"])])
    assert done.exit_code == 2 and "no records" in done.output
    done = CliRunner().invoke(cli, ["eval", str(bench["data"]), "--out", str(bench["out"])])
    assert done.exit_code == 2 and "--repos is required" in done.output


def test_the_locagent_protocol_refuses_data_that_is_not_swe_bench_lite(bench):
    done = run_eval(bench, "--protocol", "locagent")
    assert done.exit_code == 2 and "SWE-bench Lite" in done.output
    assert not (bench["out"] / "results.jsonl").exists()
    assert run_eval(bench, "--protocol", "nope").exit_code == 2


def test_a_tree_failure_whose_text_reads_like_markup_is_printed_as_written(bench):
    mirror = bench["dir"] / "mirrors[" / "x]"
    mirror.parent.mkdir()
    mirror.symlink_to(bench["repo"])
    rows = [fx.instance("ghost-1", "0123456789abcdef0123456789abcdef01234567", "Ghost\nSTUB-RANK: pkg/core.py")]
    bench["data"].write_text(json.dumps(rows[0]) + "\n")
    done = run_eval(bench, "--prepare-only", repos=fx.write_repos_toml(bench["dir"], mirror))
    assert done.exit_code == 0, done.output
    assert "is not in" in done.stderr and "mirrors[/x]" in done.stderr

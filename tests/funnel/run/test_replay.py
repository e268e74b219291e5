"""Replay: stored transcripts re-run through today's tools and policy; the stored traces are a regression suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from funnel.errors import UserError
from funnel.run.loop import investigate, investigate_sync
from funnel.limits import Limits
from funnel.run.replay import find_traces, render_table, replay, replay_all
from tests.funnel.harness_support import FIXTURE_REPO, HAPPY_STEPS, REPORT, Script, ScriptExplorer

TRACES = Path(__file__).parent.parent / "traces"


async def _record(tmp_path: Path, limits: Limits | None = None) -> Path:
    trace = tmp_path / "run.jsonl"
    await investigate(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(Script(HAPPY_STEPS)), trace_path=trace,
                      limits=limits)  # fmt: skip
    return trace


async def test_replaying_a_fresh_trace_changes_nothing(tmp_path):
    trace = await _record(tmp_path)
    result = await replay(trace, root=FIXTURE_REPO)
    assert result.changed == []
    assert result.replayed.termination == "done"
    assert result.replayed.suspects == ["shop/pricing.py"]
    assert result.replayed.tool_calls[0].startswith("search(")


async def test_a_policy_change_shows_up_as_changed_outcomes(tmp_path):
    trace = await _record(tmp_path)
    result = await replay(trace, root=FIXTURE_REPO, limits=Limits(explore_calls=1, max_repeats=1))
    assert "tool_calls" in result.changed
    assert any(c.endswith("!") for c in result.replayed.tool_calls)  # the second explore call is now refused


async def test_a_tool_change_shows_up_as_changed_outcomes(tmp_path):
    import shutil

    trace = await _record(tmp_path)
    repo = tmp_path / "changed"
    shutil.copytree(FIXTURE_REPO, repo)
    (repo / "shop" / "pricing.py").write_text("# moved\n")
    result = await replay(trace, root=repo)
    assert set(result.changed) >= {"tool_calls", "suspects"}


def test_the_stored_traces_replay_unchanged():
    results = replay_all(TRACES)
    assert len(results) >= 7
    assert not [r for r in results if r.changed], render_table(results)


def test_the_stored_traces_cover_every_interesting_outcome():
    results = replay_all(TRACES)
    reasons = {r.recorded.termination for r in results}
    assert {"done", "needs_info", "step_budget"} <= reasons
    assert any(c.endswith("!") for r in results for c in r.recorded.tool_calls)


def test_find_traces_skips_fixture_repositories_and_refuses_missing_paths(tmp_path):
    found = find_traces(TRACES)
    assert all("repo" not in p.relative_to(TRACES).parts[:-1] for p in found)
    with pytest.raises(UserError):
        find_traces(tmp_path / "nothing")


def test_cli_replay_prints_a_table_and_exits_zero_when_nothing_changed():
    out = CliRunner().invoke(cli, ["replay", str(TRACES)])
    assert out.exit_code == 0, out.output
    assert "happy.jsonl" in out.output and "changed" in out.output.splitlines()[0]


def test_cli_replay_exits_non_zero_when_an_outcome_changed(tmp_path):
    trace = tmp_path / "run.jsonl"
    investigate_sync(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(Script(HAPPY_STEPS)), trace_path=trace)
    lines = trace.read_text().splitlines()
    stop = json.loads(lines[-1])
    stop["reason"] = "needs_info"
    trace.write_text("\n".join([*lines[:-1], json.dumps(stop)]) + "\n")
    out = CliRunner().invoke(cli, ["replay", str(trace), "--root", str(FIXTURE_REPO), "--json"])
    assert out.exit_code == 1
    assert json.loads(out.stdout)[0]["changed"] == ["termination"]


def test_cli_replay_of_garbage_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "start", "explorer": "x"}\n')
    out = CliRunner().invoke(cli, ["replay", str(bad)])
    assert out.exit_code == 2 and "not a complete trace" in out.output

"""A model explorer gets the offline ranking as a pre-pass, and the offline investigator as its fallback."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai import exceptions as pai_exc
from pydantic_ai.messages import ModelMessage, ModelRequest, SystemPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from typer.testing import CliRunner

from app.cli import cli
from funnel.cancel import CancelToken
from funnel.explorers.agent import ModelExplorer
from funnel.run.loop import investigate
from funnel.limits import Limits
from funnel.run.trace import read_trace
from schemas.enums import StopReason
from schemas.report import BugReport
from schemas.trace import PrepassEvent, StartEvent, StopEvent, ToolCallEvent
from tests.funnel.harness_support import FIXTURE_REPO, GOOD_REPORT, REPORT, Script, call, text
from tests.funnel.explorers.test_providers import HAPPY, FakeOpenAI, _model

HEADING = "Candidate locations from a lexical pre-pass (may be wrong)"

FAST = Limits(model_retries=0, retry_backoff_s=0.01)
"""No retries: a dead endpoint fails at once."""

PARSER = '''\
"""Configuration file parsing."""


def parse_config(text):
    """Parse `key=value` lines into a dict."""
    result = {}
    for line in text.splitlines():
        key, value = line.split("=")
        result[key.strip()] = value.strip()
    return result
'''

MAIN = '''\
"""Command-line entry point."""

from app.parser import parse_config


def main(path):
    """Load the configuration file and print it."""
    with open(path) as fh:
        config = parse_config(fh.read())
    print(config)
'''

UTIL = '''\
"""Small helpers."""


def slugify(name):
    """Lower-case a name and join its words with dashes."""
    return "-".join(name.lower().split())
'''

TRACEBACK_REPORT = BugReport(
    title="Crash when the config file has a comment line",
    body=(
        "Running the tool on a config with a `# comment` line crashes:\n\n"
        "```\n"
        "Traceback (most recent call last):\n"
        '  File "/home/me/proj/src/app/main.py", line 9, in main\n'
        "    config = parse_config(fh.read())\n"
        '  File "/home/me/proj/src/app/parser.py", line 8, in parse_config\n'
        '    key, value = line.split("=")\n'
        "ValueError: not enough values to unpack (expected 2, got 1)\n"
        "```\n"
    ),
)


def _tree(tmp_path: Path) -> Path:
    """A small repository whose bug the report's stack trace points at (`src/app/parser.py`)."""
    root = tmp_path / "proj"
    (root / "src" / "app").mkdir(parents=True)
    (root / "src" / "app" / "__init__.py").write_text("")
    (root / "src" / "app" / "parser.py").write_text(PARSER)
    (root / "src" / "app" / "main.py").write_text(MAIN)
    (root / "src" / "app" / "util.py").write_text(UTIL)
    return root


def _dead_base_url() -> str:
    """An OpenAI-compatible base URL on a local port where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _system_prompt(messages: list[ModelMessage]) -> str:
    return "\n".join(p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts
                     if isinstance(p, SystemPromptPart))  # fmt: skip


async def test_prepass_candidates_reach_the_system_prompt_the_model_receives_over_http():
    with FakeOpenAI(HAPPY) as fake:
        result = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(_model(fake)))
    assert result.diagnosis.termination.reason == StopReason.done
    system = fake.requests[0]["messages"][0]
    assert system["role"] == "system"
    assert HEADING in system["content"]
    section = system["content"].split(HEADING, 1)[1].split("\n---\n", 1)[0]
    assert "`shop/pricing.py`" in section and "`apply_discount:4-8`" in section
    prepass = [e for e in result.events if isinstance(e, PrepassEvent)]
    assert len(prepass) == 1 and "shop/pricing.py" in [c.path for c in prepass[0].candidates]
    assert [e.kind for e in result.events][:2] == ["start", "prepass"]
    start = result.events[0]
    assert isinstance(start, StartEvent) and start.limits["prepass"] is True


async def test_prepass_refocuses_the_repo_map_on_its_candidates():
    script = Script(HAPPY_FUNCTION_STEPS)
    result = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(script.model()))
    system = _system_prompt(script.seen[0])
    repo_map = system.split("Repository map (files and definitions ranked by relevance to the report):", 1)[1]
    first = [c.path for c in next(e for e in result.events if isinstance(e, PrepassEvent)).candidates][0]
    assert first in repo_map.split("\n---\n", 1)[0]
    assert system.index(HEADING) < system.index("Repository map")


async def test_no_prepass_when_turned_off_or_for_the_offline_and_scripted_explorers():
    script = Script(HAPPY_FUNCTION_STEPS)
    off = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(script.model()), limits=Limits(prepass=False))
    assert HEADING not in _system_prompt(script.seen[0])
    assert off.diagnosis.termination.reason == StopReason.done
    for result in (off, await investigate(REPORT, FIXTURE_REPO, explorer="scripted")):
        assert not any(isinstance(e, PrepassEvent) for e in result.events)


async def test_a_dead_endpoint_falls_back_to_the_offline_investigator(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", _dead_base_url())
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    trace = tmp_path / "run.jsonl"
    result = await investigate(TRACEBACK_REPORT, _tree(tmp_path), explorer="openai:gpt-4o", limits=FAST,
                               trace_path=trace)  # fmt: skip
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.done
    assert dx.affected_files[0].path == "src/app/parser.py"
    assert dx.stats.explorer.startswith("offline (fallback from openai:gpt-4o: ")
    assert "Connection error" in dx.stats.explorer
    assert "offline fallback" in dx.termination.detail and "openai:gpt-4o" in dx.termination.detail
    assert "Offline fallback" in dx.summary
    for events in (result.events, read_trace(trace)):  # both runs, live and on disk
        starts = [e.explorer for e in events if isinstance(e, StartEvent)]
        stops = [e.reason for e in events if isinstance(e, StopEvent)]
        assert starts == ["openai:gpt-4o", dx.stats.explorer]
        assert stops == [StopReason.error, StopReason.done]
        assert any(isinstance(e, ToolCallEvent) for e in events)
    assert json.loads(trace.with_suffix(".diagnosis.json").read_text())["stats"]["explorer"] == dx.stats.explorer


async def test_fallback_disabled_ends_with_termination_error(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", _dead_base_url())
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    result = await investigate(TRACEBACK_REPORT, _tree(tmp_path), explorer="openai:gpt-4o",
                               limits=FAST.with_(fallback_to_offline=False))  # fmt: skip
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.error and "kept failing" in dx.termination.detail
    assert dx.stats.explorer == "openai:gpt-4o"
    assert [e.kind for e in result.events].count("start") == 1


async def test_a_refused_request_falls_back_but_a_context_overflow_does_not():
    with FakeOpenAI(status=401) as fake:
        refused = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(_model(fake)))
    assert refused.diagnosis.termination.reason == StopReason.done
    assert refused.diagnosis.stats.explorer.startswith("offline (fallback from openai:fake: the model endpoint refused")
    with FakeOpenAI(status=400, error_code="context_length_exceeded") as fake:
        overflow = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(_model(fake)))
    assert overflow.diagnosis.termination.reason == StopReason.error
    assert overflow.diagnosis.stats.explorer == "openai:fake"


async def test_a_cancelled_run_does_not_fall_back(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", _dead_base_url())
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    cancel = CancelToken()
    cancel.cancel("stop now")
    result = await investigate(TRACEBACK_REPORT, _tree(tmp_path), explorer="openai:gpt-4o", limits=FAST, cancel=cancel)
    assert result.diagnosis.termination.reason == StopReason.cancelled
    assert [e.kind for e in result.events].count("start") == 1


async def test_a_model_failing_mid_run_falls_back_and_its_usage_still_counts(tmp_path):
    def flaky(messages: list[ModelMessage], info: AgentInfo):
        if len([m for m in messages if isinstance(m, ModelRequest)]) > 1:
            raise pai_exc.ModelConnectionError("flaky", "connection reset by peer")
        return call("list_dir", path=".")

    result = await investigate(TRACEBACK_REPORT, _tree(tmp_path), explorer=ModelExplorer(FunctionModel(flaky)), limits=FAST)
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.done and dx.affected_files[0].path == "src/app/parser.py"
    assert "connection reset by peer" in dx.termination.detail
    first_run = result.events[: [e.kind for e in result.events].index("stop")]
    assert [e.tool for e in first_run if isinstance(e, ToolCallEvent)] == ["list_dir"]
    requests = [e for e in result.events if e.kind == "request"]
    model_tokens = sum(e.input_tokens for e in first_run if e.kind == "request")
    assert model_tokens > 0 and dx.stats.input_tokens == sum(e.input_tokens for e in requests)
    assert dx.stats.per_phase["explore"].requests >= 2


@dataclass(frozen=True, kw_only=True)
class _NoRetryLimits(Limits):
    model_retries: int = 0
    retry_backoff_s: float = 0.01


def test_cli_flags_turn_off_the_prepass_and_the_fallback(tmp_path, monkeypatch):
    monkeypatch.setattr("funnel.limits.Limits", _NoRetryLimits)  # the CLI has no retry flag; keep the test fast
    monkeypatch.setenv("OPENAI_BASE_URL", _dead_base_url())
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    root = _tree(tmp_path)
    report = tmp_path / "report.txt"
    report.write_text(TRACEBACK_REPORT.title + "\n" + TRACEBACK_REPORT.body)
    base = ["investigate", str(root), "--report", str(report), "--explorer", "openai:gpt-4o", "--json"]
    fell_back = CliRunner().invoke(cli, base)
    assert fell_back.exit_code == 0, fell_back.output
    assert json.loads(fell_back.stdout)["stats"]["explorer"].startswith("offline (fallback from openai:gpt-4o")
    assert "pre-pass" in fell_back.stderr and "src/app/parser.py" in fell_back.stderr
    no_fallback = CliRunner().invoke(cli, [*base, "--no-fallback", "--no-prepass"])
    assert no_fallback.exit_code == 1, no_fallback.output
    assert json.loads(no_fallback.stdout)["termination"]["reason"] == "error"
    assert "pre-pass" not in no_fallback.stderr


HAPPY_FUNCTION_STEPS = [
    call("search", pattern="apply_discount", fixed_strings=True),
    call("begin_deep_dive", suspects=["shop/pricing.py"]),
    call("read_range", path="shop/pricing.py", start=4, end=8),
    call("finish_deep_dive"),
    text(GOOD_REPORT),
]
"""A short happy path as FunctionModel steps."""

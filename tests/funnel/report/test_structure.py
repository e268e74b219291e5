"""Structuring: the parser path and the structurer-model path (FunctionModel / TestModel, no real LLM)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from funnel.report.template import render_report
from funnel.report.structure import StructureOptions, structure, structure_async
from schemas import Diagnosis, RunStats, Termination
from schemas.enums import Classification, Complexity, Risk, Role, StopReason
from tests.funnel.diagnosis_support import make_index, make_repo



@pytest.fixture(autouse=True)
def _no_real_models(monkeypatch):
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", False)

REPORT = """\
## Summary
An empty settings file makes `Config.load` raise `KeyError`.

## Root cause
`Config.load` indexes `data["section"]` unconditionally.

- `src/app/config.py:15` indexes the key.

## Affected files
1. `src/app/config.py:12-15` — `Config.load` (cause)
   ```python
   def load(self):
       with open(self.path) as f:
           data = json.load(f)
       return data["section"]
   ```
2. `src/app/main.py:6-7` — `main` (symptom)
   ```python
   section = cfg.load()
   print(section["name"])
   ```
3. `src/app/ghost.py:3` — `haunt` (related)

## Proposed changes
- `src/app/config.py` — `Config.load`: return `data.get("section", {})`.

## Complexity
trivial — one line.

## Risk
low — local.

## Confidence
0.8

## Open questions
- Does an empty file mean "use defaults"?
"""

FREE_FORM = """I looked around. The loader in src/app/config.py (Config.load, lines 12 to 15) does
`return data["section"]` which raises for an empty file; main() at src/app/main.py line 6 just calls it.
Fix: use .get with a default. Pretty sure (80%)."""


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo")


def _draft_args(path: str = "src/app/config.py", evidence: str = 'return data["section"]') -> dict:
    return {
        "summary": "An empty settings file crashes the loader.",
        "root_cause": {"explanation": "Config.load indexes a missing key.", "evidence": []},
        "affected_files": [
            {"path": path, "line_start": 12, "line_end": 15, "symbol": "Config.load", "role": "cause",
             "evidence": evidence},
            {"path": "src/app/main.py", "line_start": 6, "line_end": 6, "symbol": "main", "role": "symptom",
             "evidence": "section = cfg.load()"},
        ],
        "proposed_changes": [{"path": "src/app/config.py", "symbol": "Config.load", "description": "use .get"}],
        "complexity": {"level": "trivial", "reason": "one line"},
        "risk": {"level": "low", "reason": "local"},
        "confidence": 0.8,
        "open_questions": [],
    }  # fmt: skip


def _scripted(*answers: dict) -> tuple[FunctionModel, list[list[ModelMessage]]]:
    """A structurer model that answers with the given drafts in turn, recording what it was sent."""
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        args = answers[min(len(seen), len(answers)) - 1]
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    return FunctionModel(respond, model_name="structurer"), seen


def test_parser_path_builds_a_validated_diagnosis(repo):
    d = structure(REPORT, repo, index=make_index(repo))
    assert isinstance(d, Diagnosis)
    assert [(a.path, a.line_start, a.line_end, a.role) for a in d.affected_files] == [
        ("src/app/config.py", 12, 15, Role.cause), ("src/app/main.py", 6, 7, Role.symptom),
    ]  # fmt: skip
    assert d.root_cause and d.root_cause.evidence == ["`src/app/config.py:15` indexes the key."]
    assert d.complexity and d.complexity.level is Complexity.trivial
    assert d.risk and d.risk.level is Risk.low
    assert d.confidence == 0.8
    assert d.open_questions == ['Does an empty file mean "use defaults"?']
    assert [r.claim["path"] for r in d.rejected] == ["src/app/ghost.py"]
    assert (d.stats.structurer, d.stats.claims_total, d.stats.claims_rejected) == ("parser", 5, 1)  # the evidence cites config.py:15 too
    assert d.stats.rejection_rate == 0.2


def test_structure_keeps_caller_classification_termination_and_stats(repo):
    d = structure(
        REPORT, repo, classification=Classification.crash,
        termination=Termination(reason=StopReason.step_budget, detail="40 >= 40"),
        stats=RunStats(tool_calls=12, explorer="offline", commit="abc123"),
    )  # fmt: skip
    assert d.classification is Classification.crash
    assert d.termination.reason is StopReason.step_budget
    assert (d.stats.tool_calls, d.stats.explorer, d.stats.commit) == (12, "offline", "abc123")


def test_diagnosis_round_trips_markdown_to_diagnosis_to_markdown(repo):
    first = structure(REPORT, repo)
    again = structure(render_report(first), repo)
    assert render_report(again) == render_report(first)
    assert again.affected_files == first.affected_files


def test_confidence_is_capped_when_every_suspect_is_refused(repo):
    d = structure("## Summary\nS\n## Affected files\n1. `nope.py:1` (cause)\n## Confidence\n0.95\n", repo)
    assert d.affected_files == []
    assert d.confidence <= 0.2


def test_garbage_markdown_gives_an_empty_diagnosis_not_an_error(repo):
    d = structure("\x00 ``` ### ", repo)
    assert d.affected_files == [] and d.summary == ""


def test_model_path_turns_free_form_markdown_into_the_schema(repo):
    model, seen = _scripted(_draft_args())
    d = structure(FREE_FORM, repo, index=make_index(repo), model=model)
    assert d.stats.structurer == "function:structurer"
    assert [a.path for a in d.affected_files] == ["src/app/config.py", "src/app/main.py"]
    assert d.affected_files[0].symbol == "Config.load"
    assert d.confidence == 0.8
    assert len(seen) == 1


def test_model_that_invents_a_path_is_asked_to_retry(repo):
    model, seen = _scripted(_draft_args(path="src/config_loader.py", evidence="x"), _draft_args())
    d = structure(FREE_FORM, repo, model=model, options=StructureOptions(max_retries=2))
    assert len(seen) == 2
    feedback = [str(p.content) for m in seen[1][1:] if isinstance(m, ModelRequest) for p in m.parts]
    assert any("Fix these" in f and "src/config_loader.py" in f for f in feedback)
    assert d.affected_files[0].path == "src/app/config.py"
    assert d.rejected == []


def test_model_retries_are_bounded_and_bad_claims_are_dropped(repo):
    model, seen = _scripted(_draft_args(path="src/invented.py", evidence="x"))
    d = structure(FREE_FORM, repo, model=model, options=StructureOptions(max_retries=1))
    assert len(seen) == 2
    assert [a.path for a in d.affected_files] == ["src/app/main.py"]
    assert d.rejected[0].claim["path"] == "src/invented.py"


def test_model_and_parser_share_the_validators(repo):
    from_parser = structure(REPORT, repo)
    model, _ = _scripted(_draft_args(path="src/app/ghost.py", evidence="boo"))
    from_model = structure(REPORT, repo, model=model, options=StructureOptions(prefer_parser=False, max_retries=0))
    assert from_parser.rejected[0].reason == from_model.rejected[0].reason


def test_model_is_not_called_when_the_parser_reads_the_template(repo):
    model, seen = _scripted(_draft_args())
    d = structure(REPORT, repo, model=model)
    assert seen == []
    assert d.stats.structurer == "parser"


def test_failing_model_falls_back_to_the_parser(repo):
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("provider down")

    d = structure(REPORT, repo, model=FunctionModel(broken), options=StructureOptions(prefer_parser=False))
    assert d.stats.structurer == "parser"
    assert len(d.affected_files) == 2


def test_test_model_output_is_validated_like_any_other(repo):
    d = structure(FREE_FORM, repo, model=TestModel())
    assert isinstance(d, Diagnosis)
    assert all(a.path for a in d.affected_files)  # whatever TestModel made up was checked, not trusted


async def test_structure_can_be_called_from_a_running_event_loop(repo):
    model, _ = _scripted(_draft_args())
    d = structure(FREE_FORM, repo, model=model)
    assert d.affected_files
    d2 = await structure_async(FREE_FORM, repo, model=_scripted(_draft_args())[0])
    assert d2.affected_files == d.affected_files
    assert asyncio.get_running_loop() is not None

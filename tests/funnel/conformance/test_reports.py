"""Behaviours 7 and 10 over real HTTP: reports that ignore the template, and a misbehaving structurer model."""

from __future__ import annotations

import pytest

from tests.funnel.conformance._checks import run_checked
from tests.funnel.conformance._run import Outcome
from tests.funnel.conformance.scenarios import cases


def _read_in_attempt_1(out: Outcome) -> None:
    dx = out.result.diagnosis
    assert dx.stats.attempts == 1 and not out.result.verify_findings
    assert [f.path for f in dx.affected_files] == ["shop/pricing.py"]


def _read_as_the_bare_report(out: Outcome) -> None:
    _read_in_attempt_1(out)
    assert out.result.diagnosis.summary == "A 10% discount removes the whole price."


def _cited_by_address(out: Outcome) -> None:
    _read_in_attempt_1(out)
    dx = out.result.diagnosis
    assert (dx.affected_files[0].line_start, dx.affected_files[0].line_end) == (8, 8)
    assert [c.path for c in dx.proposed_changes] == ["shop/pricing.py"]


def _labelled_and_located(out: Outcome) -> None:
    dx = out.result.diagnosis
    assert "verification failed after 2 attempt(s)" in dx.termination.detail
    assert [f.path for f in dx.affected_files] == ["shop/pricing.py"]


def _structured_by_the_model(out: Outcome) -> None:
    dx = out.result.diagnosis
    assert dx.stats.structurer.endswith("cheap-model") or "haiku" in dx.stats.structurer
    assert [f.path for f in dx.affected_files] == ["shop/pricing.py"]


def _inventions_are_rejected(out: Outcome) -> None:
    dx = out.result.diagnosis
    assert dx.affected_files == [] and {r.claim.get("path") for r in dx.rejected} == {"shop/x.py"}
    assert len(out.of("structurer")) == 3  # the first answer and two corrections asked for


def _parser_takes_over(out: Outcome) -> None:
    dx = out.result.diagnosis
    assert dx.stats.structurer == "parser" and [f.path for f in dx.affected_files] == ["shop/pricing.py"]
    assert len(out.of("structurer")) == 1 + out.limits.model_retries  # one policy: no SDK retries underneath


EXTRA = {
    "renamed_sections": _read_in_attempt_1,
    "setext_headings": _read_in_attempt_1,
    "fenced_markdown": _read_in_attempt_1,
    "json_report": _read_in_attempt_1,
    "answer_tags": _read_as_the_bare_report,
    "other_language": _labelled_and_located,
    "permalinks": _cited_by_address,
    "structurer_hallucinates": _structured_by_the_model,
    "structurer_malformed": _structured_by_the_model,
    "structurer_text": _structured_by_the_model,
    "structurer_always_wrong": _inventions_are_rejected,
    "structurer_down": _parser_takes_over,
}


@pytest.mark.parametrize(("scenario", "protocol"), cases(7, 10), ids=lambda v: getattr(v, "name", v))
async def test_reports_off_template_and_bad_structuring_never_let_an_invention_through(scenario, protocol):
    await run_checked(scenario, protocol, EXTRA)

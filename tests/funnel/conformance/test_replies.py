"""Behaviours 5, 6 and 9 over real HTTP: text where tools were expected, empty replies, cut-off replies, context
overflow, refusals and content filters, reasoning fields and reasoning written into the text."""

from __future__ import annotations

import pytest

from tests.funnel.conformance._checks import run_checked
from tests.funnel.conformance._run import Outcome
from tests.funnel.conformance.scenarios import cases
from tests.funnel.harness_support import GOOD_REPORT


def _the_whole_report_is_kept(out: Outcome) -> None:
    assert out.result.report_markdown == GOOD_REPORT


def _overflow_is_not_retried(out: Outcome) -> None:
    assert "context overflow" in out.result.diagnosis.termination.detail
    assert len(out.requests) == 3  # search, begin_deep_dive, then the one refused request: no retry of it


def _reasoning_is_not_the_report(out: Outcome) -> None:
    assert out.result.report_markdown == GOOD_REPORT and len(out.requests) == 6


def _thought_is_not_the_report(out: Outcome) -> None:
    assert out.result.report_markdown == GOOD_REPORT.strip()
    assert [f.path for f in out.result.diagnosis.affected_files] == ["shop/pricing.py"]
    assert out.result.diagnosis.summary == "A 10% discount removes the whole price."


def _degenerate_reply_is_prose_and_its_call_refused(out: Outcome) -> None:
    refused = [e.error for e in out.result.events if getattr(e, "tool", None) == "read_range" and e.error]
    assert len(refused) == 1 and "invalid arguments" in refused[0] and len(out.requests) == 7


def _cut_off_arguments_are_traced_as_refused(out: Outcome) -> None:
    refused = [e for e in out.result.events if getattr(e, "tool", None) == "search" and e.error]
    assert refused and "invalid arguments" in refused[0].error


def _refusal_ends_the_run_in_its_words_without_asking_again(out: Outcome) -> None:
    detail = out.result.diagnosis.termination.detail
    assert "the model refused: \u201cI'm sorry, but I can't help with that.\u201d" in detail
    assert "\n" not in detail and "body" not in detail
    assert len(out.requests) == 3  # search, begin_deep_dive, the refused request: not asked again


def _fallback_says_the_model_refused(out: Outcome) -> None:
    assert out.result.diagnosis.termination.detail.startswith("offline fallback")
    assert "the model refused" in out.result.diagnosis.termination.detail


def _filtered_report_is_asked_again_within_the_attempt(out: Outcome) -> None:
    assert out.result.report_markdown == GOOD_REPORT
    assert len(out.requests) == 6 and "content filter" in out.requests[-1].text


def _half_emoji_is_a_replacement_character(out: Outcome) -> None:
    searched = [e for e in out.result.events if getattr(e, "tool", None) == "search"]
    assert searched[0].args["pattern"] == "apply_discount\ufffd" and not searched[0].error
    assert out.result.diagnosis.summary == "A \ufffd10% discount removes the whole price."


EXTRA = {
    "split_emoji": _half_emoji_is_a_replacement_character,
    "refuses": _refusal_ends_the_run_in_its_words_without_asking_again,
    "refuses_fallback": _fallback_says_the_model_refused,
    "content_filter_cut": _filtered_report_is_asked_again_within_the_attempt,
    "tool_call_cut_off": _cut_off_arguments_are_traced_as_refused,
    "report_cut_off": _the_whole_report_is_kept,
    "early_full_report": _the_whole_report_is_kept,
    "context_overflow": _overflow_is_not_retried,
    "report_in_reasoning_only": _reasoning_is_not_the_report,
    "thought_closed_only": _thought_is_not_the_report,
    "nested_too_deep": _degenerate_reply_is_prose_and_its_call_refused,
    "thought_in_other_tags": _thought_is_not_the_report,
}


@pytest.mark.parametrize(("scenario", "protocol"), cases(5, 6, 9), ids=lambda v: getattr(v, "name", v))
async def test_odd_replies_end_with_the_report_or_a_labelled_termination(scenario, protocol):
    await run_checked(scenario, protocol, EXTRA)

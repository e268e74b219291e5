"""Behaviours 1-2 over real HTTP: literal obedience, repeats, control tools in attempt 2, hallucinated locations."""

from __future__ import annotations

import pytest

from schemas.trace import ToolCallEvent
from tests.funnel.conformance._checks import run_checked
from tests.funnel.conformance._run import Outcome
from tests.funnel.conformance.scenarios import cases


def _calls(out: Outcome, tool: str, attempt: int | None = None) -> list[ToolCallEvent]:
    return [e for e in out.result.events if isinstance(e, ToolCallEvent) and e.tool == tool
            and (attempt is None or e.attempt == attempt)]  # fmt: skip


def _template_path_is_refused_with_a_hint(out: Outcome) -> None:
    first = _calls(out, "read_range")[0]
    assert first.args["path"].startswith("<") and "placeholder from the report template" in (first.error or "")


def _second_search_is_refused_not_fatal(out: Outcome) -> None:
    searches = _calls(out, "search")
    assert searches[0].error is None and "already called `search`" in (searches[1].error or "")


def _attempt_2_rereads_freely(out: Outcome) -> None:
    again = _calls(out, "read_range", attempt=2)
    assert again and all(e.error is None for e in again)
    assert out.result.diagnosis.stats.attempts == 2


def _finish_again_in_attempt_2_is_obeyed(out: Outcome) -> None:
    assert [e.error for e in _calls(out, "finish_deep_dive", attempt=2)] == [None]
    assert out.result.diagnosis.stats.attempts == 2 and not out.result.verify_findings


def _nothing_invented_survives(out: Outcome) -> None:
    dx = out.result.diagnosis
    assert "shop/prices.py" not in {f.path for f in dx.affected_files}
    assert dx.affected_files, "the snippet proves where the cited code really is"


def _the_bad_quote_is_dropped(out: Outcome) -> None:
    dx = out.result.diagnosis
    assert "verification failed after 2 attempt(s)" in dx.termination.detail
    assert all("price * rate" not in f.evidence for f in dx.affected_files)


EXTRA = {
    "literal_template_path": _template_path_is_refused_with_a_hint,
    "repeats_a_call_once": _second_search_is_refused_not_fatal,
    "rereads_in_attempt_2": _attempt_2_rereads_freely,
    "literal_model": _finish_again_in_attempt_2_is_obeyed,
    "nonexistent_path": _nothing_invented_survives,
    "snippet_not_there": _the_bad_quote_is_dropped,
}


@pytest.mark.parametrize(("scenario", "protocol"), cases(1, 2), ids=lambda v: getattr(v, "name", v))
async def test_a_literal_or_inventive_model_ends_honestly_with_only_real_locations(scenario, protocol):
    await run_checked(scenario, protocol, EXTRA)

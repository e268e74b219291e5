"""Behaviour 8 over real HTTP: rate limits, 5xx, resets, slow and silent servers; one retry policy; cancellation."""

from __future__ import annotations

import pytest

from schemas.enums import StopReason
from tests.funnel.conformance._checks import check_causal_trace, run_checked
from tests.funnel.conformance._server import Turn
from tests.funnel.conformance._run import Outcome, run_scenario
from tests.funnel.conformance.scenarios import Scenario, by_name, cases, happy

NORMAL_REQUESTS = 5
"""HTTP requests of the well-behaved path: search, begin_deep_dive, read_range, finish_deep_dive, report."""

CANCEL_BOUND_S = 3.0
"""The product's goal is 1 s; the bound is what a loaded 2-core machine keeps (the measured figure is printed)."""


def _one_more_request(out: Outcome) -> None:
    assert len(out.requests) == NORMAL_REQUESTS + 1


def _the_normal_requests(out: Outcome) -> None:
    assert len(out.requests) == NORMAL_REQUESTS


def _retry_after_is_honoured(out: Outcome) -> None:
    _one_more_request(out)
    assert out.requests[1].at - out.requests[0].at >= 0.95  # Retry-After: 1, the backoff alone is 0.05 s


def _exactly_one_plus_retries(out: Outcome) -> None:
    assert len(out.requests) == 1 + out.limits.model_retries  # the SDK's own retries are off
    assert f"kept failing after {out.limits.model_retries} retries" in out.result.diagnosis.termination.detail


def _timed_out_attempts(out: Outcome) -> None:
    _exactly_one_plus_retries(out)
    assert f"no answer within {out.limits.request_timeout_s:g} s" in out.result.diagnosis.termination.detail


def _offline_took_over(out: Outcome) -> None:
    assert out.result.diagnosis.stats.explorer.startswith("offline (fallback from ")
    assert len(out.requests) == 1 + out.limits.model_retries


def _no_choice_is_a_server_failure_in_one_line(out: Outcome) -> None:
    _exactly_one_plus_retries(out)
    detail = out.result.diagnosis.termination.detail
    assert "the endpoint answered without a reply" in detail and "\n" not in detail and "IndexError" not in detail


def _counted_as_nothing(out: Outcome) -> None:
    _the_normal_requests(out)
    stats = out.result.diagnosis.stats
    assert (stats.input_tokens, stats.output_tokens) == (0, 0)  # not 2**64 - 1: that tripped the token budget


EXTRA = {
    "rate_limited": _retry_after_is_honoured,
    "server_error_once": _one_more_request,
    "connection_reset": _one_more_request,
    "slower_than_timeout": _one_more_request,
    "server_error_always": _exactly_one_plus_retries,
    "error_in_a_200": _one_more_request,
    "choice_not_an_object": _one_more_request,
    "malformed_reply": _one_more_request,
    "created_in_microseconds": _the_normal_requests,
    "usage_beyond_any_count": _counted_as_nothing,
    "no_choice_always": _no_choice_is_a_server_failure_in_one_line,
    "never_answers": _timed_out_attempts,
    "never_answers_fallback": _offline_took_over,
}


@pytest.mark.parametrize(("scenario", "protocol"), cases(8), ids=lambda v: getattr(v, "name", v))
async def test_transport_failures_are_retried_by_one_policy_and_end_on_their_own(scenario, protocol):
    await run_checked(scenario, protocol, EXTRA)


_SILENT = Scenario(8, "cancel_while_waiting", "a request that never answers, cancelled",
                   lambda: happy(explore=[Turn(hang=True)]),
                   limits={"request_timeout_s": 30.0})  # fmt: skip
_BACKING_OFF = Scenario(8, "cancel_in_backoff", "429 with Retry-After: 30, cancelled during the wait",
                        lambda: happy(first=[Turn(status=429, headers={"Retry-After": "30"})]))  # fmt: skip


@pytest.mark.parametrize(("scenario", "at", "protocol"), [
    (_SILENT, 1, "openai"), (_SILENT, 1, "anthropic"), (_BACKING_OFF, 1, "openai"),
    (by_name("literal_model"), 3, "openai"),
], ids=["in_flight-openai", "in_flight-anthropic", "in_backoff-openai", "mid_run-openai"])  # fmt: skip
async def test_cancellation_stops_the_run_promptly_whatever_the_server_does(scenario, at, protocol):
    out = await run_scenario(scenario, protocol, cancel_at_request=at)
    assert out.result.diagnosis.termination.reason == StopReason.cancelled
    assert out.cancel_latency_s is not None and out.cancel_latency_s < CANCEL_BOUND_S
    print(f"cancel latency {scenario.name}/{protocol}: {out.cancel_latency_s:.3f} s")
    check_causal_trace(out.result.events)

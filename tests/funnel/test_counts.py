"""What a reply says it used is read as counts only when it can be one."""

from __future__ import annotations

from decimal import Decimal

from funnel.counts import MAX_TOKENS, price, token_count


def test_a_token_count_is_an_integer_a_request_can_have_used_and_anything_else_is_none_used():
    sent = [0, 12, MAX_TOKENS, MAX_TOKENS + 1, 2**64 - 1, -1, True, 1.0, "12", None, float("nan")]
    assert [token_count(v) for v in sent] == [0, 12, MAX_TOKENS, 0, 0, 0, 0, 0, 0, 0, 0]


def test_a_price_is_a_finite_amount_from_zero_up_and_anything_else_is_unknown():
    sent = [0, 0.0213, 3, Decimal("0.5"), float("nan"), float("inf"), -0.01, 10**400, True, "0.1", None]
    assert [price(v) for v in sent] == [0.0, 0.0213, 3.0, 0.5, None, None, None, None, None, None, None]

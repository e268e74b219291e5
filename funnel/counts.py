"""What a model server or a CLI agent says a request used, read as counts only when they can be.

A reply's usage is the server's word about itself: a plain server may send a negative count, a `true`, a float, or
a garbage number (an unsigned -1, 2**64); a CLI agent's envelope may price a run at `NaN` or `1e999` (Python's
`json` reads both, as `nan` and `inf`). Such a value is not a count: it is read as 0 tokens or an unknown price, the
way a missing one is, so it neither trips a budget nor reaches the store, whose counters hold 32-bit integers and
whose JSON has no `NaN`."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

__all__ = ("MAX_TOKENS", "is_token_count", "price", "token_count")

MAX_TOKENS = 2**31 - 1
"""The largest token count one reply may claim: far above any model's context (millions of tokens), and the most a
stored counter holds (a PostgreSQL `integer`)."""


def is_token_count(value: Any) -> bool:
    """Whether `value` is a token count a request can have used: an integer (not a bool) from 0 to `MAX_TOKENS`."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS


def token_count(value: Any) -> int:
    """`value` when it is a token count, else 0 (missing, negative, not an integer, or beyond any request)."""
    return value if is_token_count(value) else 0


def price(value: Any) -> float | None:
    """`value` as a price in dollars when it is a finite number from 0 up, else None (unknown)."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    try:
        amount = float(value)
    except OverflowError:  # an integer beyond any float
        return None
    return amount if math.isfinite(amount) and amount >= 0 else None

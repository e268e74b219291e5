"""Offline token counting: a fast approximation of BPE tokenizers (no downloads, no model files).

Words count one token per 4 characters (rounded up), every punctuation character counts one, digits count
one per 3, whitespace is free except newlines. A heuristic: it was not checked against a real tokenizer here
(none can be fetched offline), so budgets are approximate.
"""

from __future__ import annotations

import re

_PIECE = re.compile(r"[A-Za-z_]+|[0-9]+|\n|[^\sA-Za-z0-9_]")


def count_tokens(text: str) -> int:
    """Approximate number of LLM tokens in `text`."""
    if not text:
        return 0
    total = 0
    for piece in _PIECE.findall(text):
        n = len(piece)
        c = piece[0]
        if c.isalpha() or c == "_":
            total += (n + 3) // 4 if n > 4 else 1
        elif c.isdigit():
            total += (n + 2) // 3
        else:
            total += 1
    return total


def count_tokens_fast(text: str) -> int:
    """A cruder, faster estimate (characters / 4) for very large texts."""
    return (len(text) + 3) // 4

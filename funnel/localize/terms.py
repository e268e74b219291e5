"""The terms of a text, as the lexical ranking counts them: identifiers split on camelCase and snake_case (plus the
whole identifier), lowercased, stopwords dropped; and the terms of a file's path."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from functools import lru_cache

__all__ = ("STOPWORDS", "count_terms", "path_tokens", "split_identifier", "tokenize")

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
STOPWORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then there these they
    this to was will with i you we he she me my our your us do does did has have had been being can could should
    would may might must shall which who whom what when where why how all any both each few more most other some
    own same so than too very just also only here after before again further once from up down out over under
    about above below between through during while get set use used using like want wants need needs work works
    seems seem happen happens expected actual instead however example following see issue bug error problem thanks
    self cls none true false return def class import pass raise try except finally elif else lambda yield global
    nonlocal assert del var let const function new this null undefined func package struct impl pub fn mut
    public private protected static void int str bool float string""".split()
)


@lru_cache(maxsize=1 << 16)  # pure, and asked for every path of the tree on each ranking
def path_tokens(path: str) -> frozenset[str]:
    """Terms of a file's name (without extension) and of its directory's name."""
    stem = posixpath.basename(path).split(".")[0]
    parent = posixpath.basename(posixpath.dirname(path))
    return frozenset(t for t in tokenize(f"{stem} {parent}") if len(t) >= 3 and t not in ("init", "index", "main", "mod"))


def split_identifier(word: str) -> list[str]:
    """Parts of one identifier: `getHTTPResponse_code` → get, http, response, code."""
    parts: list[str] = []
    for chunk in word.split("_"):
        if chunk:
            parts.extend(p.lower() for p in _CAMEL.findall(chunk))
    return parts


_SPLIT_CACHE: dict[str, tuple[str, ...]] = {}


def _expand(word: str) -> tuple[str, ...]:
    hit = _SPLIT_CACHE.get(word)
    if hit is not None:
        return hit
    low = word.lower()
    out = [] if low in STOPWORDS or len(low) < 2 else [low]
    parts = split_identifier(word)
    if len(parts) > 1 or (parts and parts[0] != low):
        out.extend(p for p in parts if len(p) > 1 and p not in STOPWORDS and p != low)
    result = tuple(out)
    if len(_SPLIT_CACHE) < 500_000:
        _SPLIT_CACHE[word] = result
    return result


def count_terms(text: str) -> dict[str, int]:
    """Term counts of a text: whole identifiers lowercased plus their camel/snake parts, stopwords dropped."""
    raw = Counter(_WORD.findall(text))
    out: dict[str, int] = {}
    for word, n in raw.items():
        for term in _expand(word):
            out[term] = out.get(term, 0) + n
    return out


def tokenize(text: str) -> list[str]:
    """Terms of a text in order (the query side of `count_terms`)."""
    return [t for w in _WORD.findall(text) for t in _expand(w)]

"""Order-only path signals: title words that name a file or its directory, and the leading files' directories.

`cse() has strange behaviour` → `simplify/cse_main.py`: file-level BM25 already holds path tokens, but in a long
file they are a few terms among thousands; `path_term_scores` scores them on their own, weighted by how few files
carry the term in their name or directory. `sibling_scores` lifts the files next to the leading suspects (a fix
often sits in a sibling module of the one the report's words land on). Both only reorder the files after the
first (`RankConfig.lift_keep_first`) and take no citation slots (`Candidate.lift`).
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Callable
from functools import lru_cache

from funnel.localize.corpus import tokenize

__all__ = ("path_tokens", "path_term_scores", "sibling_scores")

_ENTRY = re.compile(r"(?:^|/)(?:__init__\.pyi?|index\.[jt]sx?|mod\.rs|lib\.rs|main\.rs)$")


@lru_cache(maxsize=1 << 16)  # pure, and asked for every path of the tree on each ranking
def path_tokens(path: str) -> frozenset[str]:
    """Terms of a file's name (without extension) and of its directory's name."""
    stem = posixpath.basename(path).split(".")[0]
    parent = posixpath.basename(posixpath.dirname(path))
    return frozenset(t for t in tokenize(f"{stem} {parent}") if len(t) >= 3 and t not in ("init", "index", "main", "mod"))


def path_term_scores(paths: list[str], title: str, pool: set[str]) -> dict[str, float]:
    """For each file of `pool`, the summed rarity (1 / (1 + ln df), df = files whose name or directory carries the
    term) of the title's terms its name or directory carries, capped at 1."""
    terms = {t for t in tokenize(title) if len(t) >= 3}
    if not terms:
        return {}
    tokens = {p: path_tokens(p) & terms for p in paths}
    df: dict[str, int] = {}
    for found in tokens.values():
        for t in found:
            df[t] = df.get(t, 0) + 1
    out: dict[str, float] = {}
    for p in pool:
        found = tokens.get(p)
        if found:
            out[p] = min(1.0, sum(1.0 / (1.0 + math.log(df[t])) for t in found))
    return out


def sibling_scores(ranked: list[tuple[str, float]], pool: set[str], *, top: int,
                   is_code: Callable[[str], bool]) -> dict[str, float]:
    """For each code file of `pool` in the directory of one of the `top` best code files of `ranked`, the sum of
    those files' scores relative to the first one, divided by `top` (0..1)."""
    leaders = [(p, s) for p, s in ranked if is_code(p)][:top]
    if not leaders or leaders[0][1] <= 0:
        return {}
    best = leaders[0][1]
    lead_paths = {p for p, _ in leaders}
    out: dict[str, float] = {}
    for q in pool - lead_paths:
        if not is_code(q) or _ENTRY.search(q):
            continue
        here = posixpath.dirname(q)
        share = sum(s for p, s in leaders if posixpath.dirname(p) == here) / best / top
        if share:
            out[q] = share
    return out

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
from collections.abc import Callable, Mapping

from funnel.localize.terms import path_tokens, tokenize

__all__ = ("path_tokens", "path_term_scores", "sibling_scores", "title_path_terms")

_ENTRY = re.compile(r"(?:^|/)(?:__init__\.pyi?|index\.[jt]sx?|mod\.rs|lib\.rs|main\.rs)$")


def title_path_terms(title: str) -> set[str]:
    """The title's terms that can name a file or directory (three letters or more)."""
    return {t for t in tokenize(title) if len(t) >= 3}


def path_term_scores(counts: Mapping[str, int], title: str, pool: set[str]) -> dict[str, float]:
    """For each file of `pool`, the summed rarity (1 / (1 + ln df), df = `counts[term]`: the files whose name or
    directory carries the term, `Corpus.path_term_counts`) of the title's terms its name or directory carries,
    capped at 1."""
    terms = title_path_terms(title)
    if not terms:
        return {}
    out: dict[str, float] = {}
    for p in pool:
        found = path_tokens(p) & terms
        if found:
            out[p] = min(1.0, math.fsum(1.0 / (1.0 + math.log(counts[t])) for t in found))
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

"""The citation order of a ranking: which (file, definition) pairs a report cites, in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from funnel.localize.candidates import Candidate, CandidateRanking, CandidateSymbol
from funnel.localize.corpus import Corpus, SymbolSpan

__all__ = ("RankedLocations", "affected_entries", "citation_order", "entity_name", "outer_entity", "ranked_locations")


_FIRST = 1e6
"""Added to the prime suspect's first `cite_prime_first` definitions: they are cited first whatever the others
score."""


_LEARNED_BELOW = 1e3
"""Subtracted from a definition the function model did not score when others were: it comes after them."""


def citation_order(ranking: CandidateRanking, *, files: int = 5, prime_symbols: int = 4,
                   entities: int = 5) -> list[tuple[Candidate, CandidateSymbol | None]]:
    """The (file, definition) pairs a report cites, in order; every one of the top `files` files is cited.

    By default the prime suspect's `prime_symbols` best definitions come first, then the best one of each next
    file. With `RankConfig.cite_file_power` > 0 the first `entities` citations are the best of a merged list
    (see there); each file's best definition scores its own file ratio, so files keep their ranked order.
    """
    config = ranking.config
    top = ranking.candidates[:files]
    if not top:
        return []
    if config.cite_file_power <= 0:
        out: list[tuple[Candidate, CandidateSymbol | None]] = []
        for k, cand in enumerate(top):
            hits: list[CandidateSymbol | None] = list(cand.symbols[: prime_symbols if k == 0 else 1]) or [None]
            out.extend((cand, h) for h in hits)
        return out
    best_file = (top[0].score - top[0].lift) or 1.0
    learned = any(h.learned is not None for c in top for h in c.symbols)
    merged: list[tuple[float, int, int, Candidate, CandidateSymbol | None]] = []
    for k, cand in enumerate(top):
        ratio = max(cand.score - cand.lift, 0.0) / best_file
        if not cand.symbols:
            merged.append((ratio ** config.cite_file_power, k, 0, cand, None))
            continue
        best_sym = cand.symbols[0].score or 1.0
        for n, hit in enumerate(cand.symbols[:prime_symbols]):
            value = ratio ** config.cite_file_power * (max(hit.score, 1e-6) / best_sym) ** config.cite_symbol_power
            if learned:
                # the function model's scores order its files' definitions; the files beyond its pool come after
                value = hit.learned if hit.learned is not None else value - _LEARNED_BELOW
            if k == 0 and n < config.cite_prime_first:
                value += _FIRST
            merged.append((value, k, n, cand, hit))
    merged.sort(key=lambda m: (-m[0], m[1], m[2]))
    out = [(m[3], m[4]) for m in merged[:entities]]
    cited = {id(c) for c, _ in out}
    for cand in top:
        if id(cand) not in cited:
            out.append((cand, cand.symbols[0] if cand.symbols else None))
    return out


def affected_entries(ranking: CandidateRanking, *, files: int = 5, prime_symbols: int = 4) -> list[tuple[str, str | None]]:
    """The ranked (path, symbol) list a report cites (`citation_order` as paths and qualified names)."""
    return [(c.path, h.span.qualname if h is not None else None)
            for c, h in citation_order(ranking, files=files, prime_symbols=prime_symbols)]


_FUNCTION_KINDS = frozenset({"function", "method"})


def outer_entity(spans: Sequence[Any], index: int) -> str:
    """The entity a definition belongs to: its qualified name, or that of the outermost function or method it is
    nested in (`top.helper` → `top`, `A.m.inner` → `A.m`; classes nest: `A.B.m` stays), the granularity of
    function-level gold in the localization literature. `spans` are one file's definitions (qualname, kind,
    start_line, end_line)."""
    own = spans[index]
    best = own.qualname
    depth = best.count(".") + 1
    for other in spans:
        name = other.qualname
        if (str(getattr(other.kind, "value", other.kind)) in _FUNCTION_KINDS and best.startswith(name + ".")
                and other.start_line <= own.start_line <= other.end_line and name.count(".") + 1 < depth):
            best, depth = name, name.count(".") + 1
    return best


def entity_name(corpus: Corpus, path: str, span: SymbolSpan) -> str:
    """A definition of a corpus file as `path:qualified.name`, a nested function named by its outer function
    (`outer_entity`)."""
    at = corpus.by_path.get(path)
    own = corpus.docs[at].symbols if at is not None else []
    index = next((k for k, s in enumerate(own) if s == span), None)
    return f"{path}:{outer_entity(own, index) if index is not None else span.qualname}"


@dataclass(frozen=True)
class RankedLocations:
    """A ranking deeper than the diagnosis names: what the localization protocols score."""

    files: list[str]
    """The best files, best first."""
    functions: list[str]
    """The best definitions as `path:qualified.name` (nested functions as their outer function), best first."""
    source: str = "offline"
    """Where it comes from: `offline` (the investigator's own ranking) or `prepass` (a model's lexical pre-pass)."""
    raw_confidence: float | None = None
    """The ranking's own confidence before calibration (`CandidateRanking.confidence`): what a calibration curve
    is fitted on."""
    confidence_features: dict[str, float] = field(default_factory=dict)
    """`CandidateRanking.confidence_features`: what a calibration model is fitted on."""


def ranked_locations(ranking: CandidateRanking, corpus: Corpus, *, files: int = 10, functions: int = 15,
                     source: str = "offline") -> RankedLocations:
    """The ranking's `files` best files (with a positive score) and `functions` best definitions, in the order the
    report cites them (`citation_order` over the same files)."""
    top = [c.path for c in ranking.candidates[:files] if c.score > 0]
    names = [entity_name(corpus, cand.path, hit.span)
             for cand, hit in citation_order(ranking, files=len(top), prime_symbols=ranking.config.symbols_kept,
                                             entities=len(top) * ranking.config.symbols_kept)
             if hit is not None]
    return RankedLocations(top, list(dict.fromkeys(names))[:functions], source, ranking.confidence,
                           dict(ranking.confidence_features))

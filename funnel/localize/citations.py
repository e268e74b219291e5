"""The citation order of a ranking: which (file, definition) pairs a report cites, in order."""

from __future__ import annotations

from funnel.localize.candidates import Candidate, CandidateRanking, CandidateSymbol

__all__ = ("affected_entries", "citation_order")


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
    merged: list[tuple[float, int, int, Candidate, CandidateSymbol | None]] = []
    for k, cand in enumerate(top):
        ratio = max(cand.score - cand.lift, 0.0) / best_file
        if not cand.symbols:
            merged.append((ratio ** config.cite_file_power, k, 0, cand, None))
            continue
        best_sym = cand.symbols[0].score or 1.0
        for n, hit in enumerate(cand.symbols[:prime_symbols]):
            value = ratio ** config.cite_file_power * (max(hit.score, 1e-6) / best_sym) ** config.cite_symbol_power
            if k == 0 and n < config.cite_prime_first:
                value += 10.0
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

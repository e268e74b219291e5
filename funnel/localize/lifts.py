"""The order-only lifts of a ranking: title words in a file's path, the directories of the leading files, the
title's own BM25, definitions the title names, and the files past commits changed together with the leaders. Each
reorders the files after the first and is recorded in `Candidate.lift`, so the confidence can leave it out."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from funnel.localize.bm25 import file_bm25
from funnel.localize.candidates import Candidate, RankConfig, report_title
from funnel.localize.corpus import Corpus
from funnel.localize.file_kinds import is_code, path_factor
from funnel.localize.names import is_prose_word
from funnel.localize.pathterms import path_term_scores, sibling_scores, title_path_terms
from funnel.localize.terms import tokenize

__all__ = ("Partners", "lift_cochange", "lift_files")

Partners = Callable[[Sequence[str]], Mapping[str, Mapping[str, float]]]
"""For some files, the files past commits changed together with each, with how often (`history.cochange_partners`)."""


def lift_files(corpus: Corpus, candidates: list[Candidate], config: RankConfig, text: str,
          names: Mapping[str, list[tuple[int, int]]], *, examples: bool = False) -> None:
    """Order-only lifts (title words in the path, siblings of the leading files, the title's own BM25, definitions
    the title names), recorded in `Candidate.lift`."""
    ranked = [(c.path, c.score) for c in candidates[: config.lift_pool]]
    pool = {path for path, _ in ranked}
    title = report_title(text)
    signals = []
    if config.w_title_path > 0:
        shares = path_term_scores(corpus.path_term_counts(title_path_terms(title)), title, pool)
        signals.append(("title_path", config.w_title_path, shares, "its name or directory is in the title"))
    if config.w_sibling > 0:
        foreign = corpus.generated | corpus.vendored
        shares = sibling_scores(ranked, pool, top=config.lift_top,
                                is_code=lambda p: is_code(p) and p not in foreign)
        signals.append(("sibling", config.w_sibling, shares, "in the directory of a leading suspect"))
    if config.w_title_bm25 > 0:
        signals.append(("title_bm25", config.w_title_bm25, _title_bm25(corpus, title, pool, config),
                        "its terms match the title's"))
    if config.w_title_def > 0:
        signals.append(("title_def", config.w_title_def, _title_definitions(corpus, title, names, pool),
                        "defines a name the title writes"))
    start = 1 if config.lift_keep_first else 0
    for key, weight, shares, why in signals:
        for cand in candidates[start:]:
            share = shares.get(cand.path)
            if share:
                value = weight * share * path_factor(cand.path, config, corpus, examples=examples)
                cand.parts[key] = weight * share
                cand.score += value
                cand.lift += value
                cand.reasons.append(why)
    candidates[start:] = sorted(candidates[start:], key=lambda c: (-c.score, c.path))


def lift_cochange(corpus: Corpus, candidates: list[Candidate], config: RankConfig, partners: Partners, *,
              examples: bool = False) -> None:
    """Order-only lift of the files past commits changed together with the `cochange_top` leading files, after the
    first (`RankConfig.w_cochange`), recorded in `Candidate.lift`."""
    leaders = candidates[: config.cochange_top]
    if len(candidates) < 2 or not leaders or leaders[0].score <= 0:
        return
    found = partners([c.path for c in leaders])
    shares: dict[str, tuple[float, str]] = {}
    for lead in leaders:
        ratio = lead.score / leaders[0].score
        for path, often in found.get(lead.path, {}).items():
            share, why = shares.get(path, (0.0, lead.path))
            shares[path] = (min(1.0, share + ratio * often), why)
    if not shares:
        return
    for cand in candidates[1: config.cochange_pool or None]:
        share, lead = shares.get(cand.path, (0.0, ""))
        if share:
            value = config.w_cochange * share * path_factor(cand.path, config, corpus, examples=examples)
            cand.parts["cochange"] = config.w_cochange * share
            cand.score += value
            cand.lift += value
            cand.reasons.append(f"past commits changed it together with {lead}")
    candidates[1:] = sorted(candidates[1:], key=lambda c: (-c.score, c.path))


def _title_bm25(corpus: Corpus, title: str, pool: set[str], config: RankConfig) -> dict[str, float]:
    """BM25 of each file of `pool` for the title's terms alone, relative to the best file of the corpus (0..1)."""
    query = dict.fromkeys(tokenize(title), 1.0)
    scores = file_bm25(corpus, query, config)
    best = max(scores, default=0.0) or 1.0
    return {d.path: s / best for d, s in zip(corpus.docs, scores) if s > 0 and d.path in pool}


def _title_definitions(corpus: Corpus, title: str, names: Mapping[str, list[tuple[int, int]]],
                       pool: set[str]) -> dict[str, float]:
    """Files of `pool` defining a name the title writes as code, when at most three code files define it: each
    name counts 1 / the files defining it, capped at 1 per file."""
    shares: dict[str, float] = {}
    for word in set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", title)):
        if is_prose_word(word):
            continue
        files = {corpus.docs[i].path for i, _ in names.get(word, ())}
        files = {p for p in files if is_code(p)}
        if 0 < len(files) <= 3:
            for p in files & pool:
                shares[p] = min(1.0, shares.get(p, 0.0) + 1.0 / len(files))
    return shares

"""BM25 over a corpus: the report's lexical query, the scores of files and of definitions, and a document's share
of the query (what `rank` fuses with the report's evidence)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from funnel.localize.candidates import RankConfig, report_title
from funnel.localize.corpus import Corpus
from funnel.localize.terms import count_terms, tokenize
from repomap.focus import Focus
from repomap.frames import strip_frames

__all__ = ("bm25", "coverage", "file_bm25", "idf", "report_query", "statistics")


def report_query(text: str, focus: Focus, config: RankConfig) -> dict[str, float]:
    """The report's lexical query: each term weighted 1 + log(its count), the title's terms and the terms written as
    code weighted up (`RankConfig.title_term_weight`, `code_term_weight`); stack-frame lines left out when the
    frames are scored on their own."""
    weights: dict[str, float] = {}
    if config.strip_frame_lines and focus.frames:
        # Frame lines would lend every printed file the same lexical weight; the frames are scored on their own.
        text = strip_frames(text)
    for term, n in count_terms(text).items():
        weights[term] = 1.0 + math.log(n)
    for term in set(tokenize(report_title(text))):
        weights[term] = weights.get(term, 1.0) * config.title_term_weight
    code_terms = set(tokenize(" ".join(focus.code_identifiers)))
    for term in code_terms:
        if term in weights:
            weights[term] *= config.code_term_weight
    return weights


def bm25(postings: Mapping[str, list[tuple[int, int]]], lengths: list[int], query: dict[str, float], k1: float,
         b: float, df: Mapping[str, int] | None = None, nb: int | None = None, avg: float | None = None
         ) -> list[float]:
    """BM25 of each document (by index in `lengths`) from the postings of the query's terms; the document frequencies
    `df` over `nb` documents and the mean length `avg` default to the postings' and the lengths' own."""
    n = len(lengths)
    if not n:
        return []
    avg = (sum(lengths) / n or 1.0) if avg is None else avg
    nb = n if nb is None else nb
    scores = [0.0] * n
    norms = [k1 * (1 - b + b * length / avg) for length in lengths]
    for term, qw in query.items():
        refs = postings.get(term, ())
        if not refs:
            continue
        w = qw * idf(max(1, len(refs) if df is None else df.get(term, 0)), nb)
        for i, tf in refs:
            scores[i] += w * tf * (k1 + 1) / (tf + norms[i])
    return scores


def idf(count: int, nb: int) -> float:
    """BM25's inverse document frequency of a term held by `count` of `nb` documents."""
    return math.log(1 + (nb - count + 0.5) / (count + 0.5))


def statistics(corpus: Corpus, postings: Mapping[str, list[tuple[int, int]]]
                ) -> tuple[dict[str, int], int, float | None]:
    """(document frequencies, documents, mean length) BM25 reads: in a tree that has both, those of the parsed files
    alone, so a file read as text (`Corpus.text_sources`) enters by its own score without moving the others; else
    the corpus' own (the mean length None: `bm25` takes it from the lengths)."""
    skip = corpus.text_sources
    if not skip or len(skip) == len(corpus.docs):
        return {t: len(refs) for t, refs in postings.items()}, len(corpus.docs), None
    kept = [length for i, length in enumerate(corpus.lengths) if i not in skip]
    df = {t: sum(1 for i, _ in refs if i not in skip) for t, refs in postings.items()}
    return df, len(kept), sum(kept) / len(kept) or 1.0


def file_bm25(corpus: Corpus, query: dict[str, float], config: RankConfig) -> list[float]:
    """BM25 of every corpus file for the query (`statistics` decides what the IDF and the mean length count)."""
    postings = corpus.postings(query)
    return bm25(postings, corpus.lengths, query, config.k1, config.b, *statistics(corpus, postings))


def coverage(postings: Mapping[str, list[tuple[int, int]]], n: int, query: dict[str, float],
              df: Mapping[str, int], nb: int) -> list[float]:
    """Each of `n` documents' share (0..1) of the query's weight, from the query terms' `postings`: the query
    weight × IDF (as `bm25` reckons it: a term only files read as text hold counts as in one file) of the terms it
    holds, over that of every query term."""
    weight = {t: qw * idf(max(1, df.get(t, 0)), nb) for t, qw in query.items()}
    shares = [0.0] * n
    for term, refs in postings.items():
        for k, _ in refs:
            shares[k] += weight[term]
    total = sum(weight.values()) or 1.0
    return [share / total for share in shares]

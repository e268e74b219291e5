"""Ranking candidate files and symbols for a report: BM25 over files and symbols fused with report evidence.

Every signal is generic: lexical similarity (BM25 over path + code, and over each definition), the repo
map's PageRank, stack frames resolved into the repository, definitions named in the report, modules
imported in the report's code, paths and literal messages quoted in the report. Test, doc and example
files are down-weighted by path pattern, generated files by their generator's mark, vendored copies of other
projects by their directory. Order-only lifts (`lifts`: title words in paths and siblings, the title's own BM25,
definitions the title names, co-changed files) then reorder the files after the first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from funnel.localize.bm25 import bm25, coverage, file_bm25, report_query, statistics
from funnel.localize.candidates import (
    CONFIDENCE_FEATURES,
    CONTEXT_PARTS,
    Candidate,
    CandidateRanking,
    CandidateSymbol,
    RankConfig,
    report_title,
)
from funnel.localize.corpus import Corpus, SymbolSpan
from funnel.localize.corpus_index import INDEX_MIN_FILES
from funnel.localize.file_kinds import (
    EXAMPLE_REASON,
    about_examples,
    is_example,
    is_test,
    is_test_definition,
    path_factor,
)
from funnel.localize.history import HistoryConfig, HistorySource
from funnel.localize.indexed import open_indexed
from funnel.localize.learned import (
    keep_slots,
    load_ranker,
    order_definitions,
    rerank,
    reranks,
)
from funnel.localize.lifts import Partners, lift_cochange, lift_files
from funnel.localize.signals import SIGNALS, Evidence, Report
from funnel.localize.term_cache import default_cache_dir
from repomap import RepoMap
from repomap.focus import Focus
from repomap.languages import EXTENSIONS, TEXT_SOURCE_EXTENSIONS, is_text_source
from repomap.walk import walk_files

__all__ = ("CONTEXT_PARTS", "Candidate", "CandidateRanking", "CandidateSymbol", "Partners", "RankConfig",
           "build_corpus", "rank", "rank_report", "report_title")


def rank(
    corpus: Corpus,
    text: str,
    focus: Focus | None = None,
    *,
    pagerank: Mapping[str, float] | None = None,
    history: Mapping[str, float] | None = None,
    partners: Partners | None = None,
    config: RankConfig | None = None,
) -> CandidateRanking:
    """Rank the corpus' files (and their symbols) for a report text: file BM25, then every evidence signal of
    `SIGNALS` with its weight, definition BM25, the path factors, the order-only lifts (with the co-change
    `partners` when given) and each top file's best definitions."""
    config = config or RankConfig()
    focus = focus or Focus.from_text(text)
    docs = corpus.docs
    if not docs:
        return CandidateRanking([], 0.0, {}, config)
    query = report_query(text, focus, config)
    file_scores = file_bm25(corpus, query, config)
    best_file = max(file_scores) or 1.0
    ev = Evidence(corpus, [{"file": config.w_file * s / best_file} for s in file_scores])
    report = Report(text, focus, pagerank, history)
    for signal, weight in SIGNALS:
        signal(ev, report, getattr(config, weight), config)
    per_file_syms = _symbol_scores(ev, query, config)
    examples = about_examples(report_title(text))
    candidates: list[Candidate] = []
    for i, d in enumerate(docs):
        score = sum(ev.parts[i].values()) * path_factor(d.path, config, corpus, examples=examples)
        reasons = ev.reasons[i]
        if examples and score > 0 and is_example(d.path):
            reasons = [EXAMPLE_REASON, *reasons]
        candidates.append(Candidate(path=d.path, score=score, parts=ev.parts[i], lines=ev.lines[i],
                                    reasons=reasons, quoted_line=ev.quoted_lines.get(i)))
    candidates.sort(key=lambda c: (-c.score, c.path))
    if config.w_title_path > 0 or config.w_sibling > 0 or config.w_title_bm25 > 0 or config.w_title_def > 0:
        lift_files(corpus, candidates, config, text, ev.names, examples=examples)
    on_files = reranks(candidates, corpus, config)
    models = load_ranker(config.ranker or None) if on_files or config.learned_functions else None
    slots = None
    if models is not None and on_files and models.files is not None:
        slots = rerank(candidates, corpus, config, models.files)
    confidence, features = _confidence(candidates)
    if slots is not None:
        keep_slots(candidates, slots)
    if partners is not None and config.w_cochange > 0 and confidence >= config.cochange_confidence:
        lift_cochange(corpus, candidates, config, partners, examples=examples)
    for cand in candidates[: config.detailed]:
        i = corpus.by_path[cand.path]
        spans = docs[i].symbols
        scored = [(sc, j) for sc, j in per_file_syms.get(i, []) if not _declaration(spans[j])]
        if config.test_definitions and not is_test(cand.path):
            scored = [(sc * config.test_factor if is_test_definition(spans[j].qualname) else sc, j) for sc, j in scored]
        syms = _prefer_members(spans, sorted(scored, key=lambda x: -x[0]))[: config.symbols_kept]
        cand.symbols = [CandidateSymbol(spans[j], s, ev.sym_reasons.get((i, j), [])) for s, j in syms]
    if models is not None and config.learned_functions and models.functions is not None:
        order_definitions(candidates, text, models.functions, corpus, in_file=config.learned_in_file,
                          focus=focus)
    return CandidateRanking(candidates, confidence, query, config, features)


def _symbol_scores(ev: Evidence, query: dict[str, float], config: RankConfig) -> dict[int, list[tuple[float, int]]]:
    """Definition-level BM25 over a pool of promising files (sets each file's `symbol` part from it): per file,
    (score × coverage share (`RankConfig.definition_coverage`) + evidence bonus, symbol index) of its definitions,
    and every definition the evidence pointed into."""
    docs, parts, sym_bonus = ev.docs, ev.parts, ev.sym_bonus
    pre = [sum(p.values()) for p in parts]
    pool = sorted(range(len(docs)), key=lambda i: -pre[i])[: config.symbol_pool]
    ev.corpus.prefetch(pool)
    sym_index: list[tuple[int, int]] = [(i, j) for i in pool for j in range(len(docs[i].symbols))]
    sym_docs = [docs[i].symbol_terms[j] for i, j in sym_index]
    sym_postings: dict[str, list[tuple[int, int]]] = {t: [] for t in query}
    wanted = query.keys()
    for k, d in enumerate(sym_docs):
        for t in d.keys() & wanted:
            sym_postings[t].append((k, d[t]))
    df, nb, _ = statistics(ev.corpus, ev.corpus.postings(query))
    sym_scores = bm25(sym_postings, [sum(d.values()) for d in sym_docs], query, config.k1, config.b, df, nb)
    best_sym = max(sym_scores, default=0.0) or 1.0
    for (i, _), s in zip(sym_index, sym_scores):
        if config.w_symbol * s / best_sym > parts[i].get("symbol", 0.0):
            parts[i]["symbol"] = config.w_symbol * s / best_sym
    if config.definition_coverage > 0:
        sym_scores = [s * share ** config.definition_coverage
                      for s, share in zip(sym_scores, coverage(sym_postings, len(sym_docs), query, df, nb))]
        best_sym = max(sym_scores, default=0.0) or 1.0
    per_file_syms: dict[int, list[tuple[float, int]]] = {}
    for (i, j), s in zip(sym_index, sym_scores):
        per_file_syms.setdefault(i, []).append((s / best_sym + sym_bonus.get((i, j), 0.0), j))
    for (i, j), bonus in sym_bonus.items():
        if i not in per_file_syms or all(jj != j for _, jj in per_file_syms[i]):
            per_file_syms.setdefault(i, []).append((bonus, j))
    return per_file_syms


def _declaration(span: SymbolSpan) -> bool:
    """Whether a definition only declares a module kept elsewhere (Rust's `mod select;`, TypeScript's `declare module
    "x";`): it counts for the file, but citing its one line shows nothing of the code."""
    return span.kind == "module" and span.start_line == span.end_line


def _prefer_members(spans: list[SymbolSpan], scored: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """Replace a class by its best-scoring member: citing `A.b` also names `A`, citing `A` names no member."""
    by_score = {j: sc for sc, j in scored}
    out: list[tuple[float, int]] = []
    used: set[int] = set()
    for sc, j in scored:
        if j in used:
            continue
        span = spans[j]
        prefix = span.qualname + "."
        depth = span.qualname.count(".") + 1
        members = [k for k, o in enumerate(spans) if o.qualname.startswith(prefix) and o.qualname.count(".") == depth
                   and span.start_line <= o.start_line <= span.end_line and k not in used]
        if members:
            best = max(members, key=lambda k: (by_score.get(k, -1.0), -spans[k].start_line))
            used.add(best)
            out.append((sc, best))
        else:
            used.add(j)
            out.append((sc, j))
    return out


def _confidence(candidates: list[Candidate]) -> tuple[float, dict[str, float]]:
    """The ranking's raw confidence (the hand formula the calibration maps to a probability) and its
    `CONFIDENCE_FEATURES` (what the calibration model reads)."""
    if not candidates or not any(v > 0 for k, v in candidates[0].parts.items() if k != "pagerank"):
        return 0.05, {}
    top = candidates[0]
    # order-only lifts (`Candidate.lift`) say nothing about how clearly the evidence points at one file
    second = max((c.score - c.lift for c in candidates[1:]), default=0.0)
    margin = (top.score - top.lift - second) / ((top.score - top.lift) or 1.0)
    direct = sum(1 for k in ("frame", "message", "path", "mention", "constant") if top.parts.get(k))
    conf = 0.2 + 0.45 * margin + 0.1 * direct
    pointers = {name: float(bool(top.parts.get(name))) for name in CONFIDENCE_FEATURES if name != "margin"}
    return round(max(0.05, min(0.9, conf)), 2), {"margin": round(margin, 4), **pointers}


def _map_definitions(repo_map: RepoMap) -> Callable[[str], Sequence[object] | None]:
    """The repo map's definitions of a file it parsed; None (found by pattern) for a file in a language it has no
    grammar for."""
    return lambda path: None if is_text_source(path) else repo_map.definitions(path)


def build_corpus(root: Path, repo_map: RepoMap | None = None,
                 cache_dir: Path | None = None) -> tuple[Corpus, dict[str, float] | None]:
    """The lexical corpus of a tree (from the repo map's files and definitions when given, plus the source files of
    languages it has no grammar for, read as text) and PageRank scores: a tree of `INDEX_MIN_FILES` or more files is
    read from its persisted index (`funnel.localize.indexed`)."""
    cache = cache_dir or default_cache_dir()
    if repo_map is None:
        walked = walk_files(root, extensions=EXTENSIONS | TEXT_SOURCE_EXTENSIONS)
        return Corpus.build(root, [f.path for f in walked.files], cache_dir=cache,
                            attribute_dirs=walked.attribute_dirs), None
    pagerank = {f.path: float(f.score) for f in repo_map.files}
    if len(repo_map.files) + len(repo_map.text_sources) >= INDEX_MIN_FILES:
        return open_indexed(root, repo_map, cache), pagerank
    paths = [f.path for f in repo_map.files] + [f.path for f in repo_map.text_sources]
    return Corpus.build(root, paths, definitions=_map_definitions(repo_map), cache_dir=cache,
                        attribute_dirs=repo_map.attribute_dirs), pagerank


def rank_report(text: str, root: Path, repo_map: RepoMap | None = None, *, focus: Focus | None = None,
                config: RankConfig | None = None, cache_dir: Path | None = None,
                history: HistorySource | None = None,
                history_config: HistoryConfig | None = None) -> tuple[CandidateRanking, Corpus]:
    """Rank a tree's files and definitions for a report text (the offline pre-pass, also usable to seed a model),
    with the past commits of `history` as evidence when given."""
    config = config or RankConfig()
    corpus, pagerank = build_corpus(root, repo_map, cache_dir)
    focus = focus or Focus.from_text(text)
    past, partners = None, None
    cache = cache_dir or default_cache_dir()
    if history is not None and config.w_history > 0:
        past = history.scores(text, cache_dir=cache, config=history_config)
    if history is not None and config.w_cochange > 0:
        def partners(paths: Sequence[str]) -> Mapping[str, Mapping[str, float]]:
            return history.partners(paths, cache_dir=cache, config=history_config)
    return rank(corpus, text, focus, pagerank=pagerank, history=past, partners=partners, config=config), corpus

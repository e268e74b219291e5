"""Ranking candidate files and symbols for a report: BM25 over files and symbols fused with report evidence.

Every signal is generic: lexical similarity (BM25 over path + code, and over each definition), the repo
map's PageRank, stack frames resolved into the repository, definitions named in the report, modules
imported in the report's code, paths and literal messages quoted in the report. Test, doc and example
files are down-weighted by path pattern, generated files by their generator's mark, vendored copies of other
projects by their directory. Order-only lifts (title words in paths and siblings from `pathterms`, the title's own
BM25, definitions the title names) then reorder the files after the first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from funnel.localize.corpus import Corpus, SymbolSpan, count_terms, tokenize
from funnel.localize.evidence import literal_keys
from funnel.localize.pathterms import path_term_scores, sibling_scores
from repomap.focus import Focus, PathMatcher, module_candidates, resolve_frames, strip_frames

__all__ = ("CONTEXT_PARTS", "RankConfig", "Candidate", "SymbolHit", "Ranking", "rank", "affected_entries",
           "citation_order", "report_title", "RankedLocations", "ranked_locations", "outer_entity")

_TEST_PATH = re.compile(
    r"(?:^|/)(?:\w+_)?(?:tests?|testing|__tests__|spec|specs|test_?data|fixtures?)(?:_\w+)?/|(?:^|/)test_[^/]*$|_tests?\.[a-z]+$|"
    r"\.(?:test|spec)\.[jt]sx?$|(?:^|/)conftest\.py$|Tests?\.(?:java|kt|cs)$"
)
_DOC_PATH = re.compile(r"(?:^|/)(?:docs?|examples?|samples?|benchmarks?|asv_bench|tutorials?|galleries)/")
_NON_CODE = re.compile(r"\.(?:txt|rst|md|json|ya?ml|toml|cfg|ini|html|css|svg|csv|lock|xml|pyi)$|\.d\.ts$")
_MIN_MENTION_LEN = 4

CONTEXT_PARTS = frozenset({"pagerank", "history"})
"""Signals that say where a project's work happens, not that the report matched the code: alone no evidence."""


@dataclass(frozen=True)
class RankConfig:
    """Knobs of the fusion; the defaults are what `bench/tune_offline.py` measured best on the dev split."""

    k1: float = 1.2
    """BM25 term-frequency saturation."""
    b: float = 0.75
    """BM25 length normalization."""
    w_file: float = 1.4
    """Weight of file-level BM25 (normalized to the best file)."""
    w_symbol: float = 0.8
    """Weight of the best symbol-level BM25 in the file (normalized to the best symbol)."""
    w_pagerank: float = 0.1
    """Weight of the repo map's PageRank (normalized to the best file)."""
    w_history: float = 0.2
    """Weight of the history signal: files changed by past commits whose messages resemble the report (normalized
    to the best file; see `history.history_scores`; 0 turns it off)."""
    w_frame: float = 1.2
    """Boost of the innermost in-repository stack frame's file (outer frames get less)."""
    frame_decay: float = 0.4
    """Share of the frame boost that outer frames get (divided by their depth)."""
    w_mention: float = 0.25
    """Boost of files defining names mentioned in the report (rarer and qualified names count more)."""
    prose_mention_factor: float = 0.5
    """Multiplier of `w_mention` for a plain lowercase word of the prose (`visible`, `request`) that names a
    definition: a word of English names a definition by coincidence more often than a name written as code does."""
    w_import: float = 0.35
    """Boost of files whose module path a code block imports."""
    w_path: float = 0.6
    """Boost of files whose path the report mentions."""
    w_module_path: float = 0.3
    """Boost of the module file a fully qualified name of the prose is written under, when the name is defined there
    (`a.b.c.func` → `a/b/c.py`; `com.x.Gson.toJson` → `.../com/x/Gson.java`): the reporter pointing at the code.
    The same name in the report's code is usage (`on_delete=django.db.models.deletion.CASCADE`) and does not count."""
    w_stem: float = 0.3
    """Boost of files whose name (without extension) the report writes."""
    w_constant: float = 0.75
    """Boost of files assigning, at top level, a constant or setting the report names."""
    w_message: float = 0.3
    """Boost of files containing a literal message quoted in the report."""
    w_title_path: float = 0.6
    """Order-only lift of files whose name or directory name carries a term of the title (rarer path terms
    count more; see `pathterms.path_term_scores`)."""
    w_sibling: float = 0.1
    """Order-only lift of files in the directory of one of the `lift_top` best code files (× those files' summed
    score relative to the first, / `lift_top`)."""
    w_title_bm25: float = 0.4
    """Order-only lift by BM25 over the title's terms alone, relative to the best file: in a long report the
    one-line summary is outweighed by tracebacks and code, and this gives it a share of its own."""
    w_title_def: float = 0.3
    """Order-only lift of files defining a name the title writes as code (`Derivative`, `JSONField`, `get_fields`:
    not a plain lowercase word) when at most three code files define it; each such name counts 1 / those files."""
    lift_top: int = 3
    """Leading code files whose directories count for `w_sibling`."""
    lift_pool: int = 50
    """Best-ranked files that the order-only lifts may move."""
    lift_keep_first: bool = True
    """The order-only lifts reorder only the files after the first (file Acc@1 is left to the evidence)."""
    test_factor: float = 0.3
    """Multiplier of scores of test files."""
    doc_factor: float = 0.4
    """Multiplier of scores of docs, examples and non-code files."""
    generated_factor: float = 0.3
    """Multiplier of scores of generated files (`Corpus.generated`: a generator's mark in the file's head)."""
    vendored_factor: float = 0.3
    """Multiplier of scores of third-party code copied into the tree (`Corpus.vendored`: `vendor/`, `third_party/`,
    `extern/`..., or a nested package declaring its own `__version__`)."""
    code_term_weight: float = 2.0
    """Query weight of terms written as code (backticks, code blocks) relative to prose terms."""
    title_term_weight: float = 2.0
    """Query weight of terms of the first line (the title)."""
    strip_frame_lines: bool = True
    """Leave stack-frame lines out of the lexical query (frames count through `w_frame`)."""
    symbol_pool: int = 300
    """Files (by file BM25 and evidence) whose symbols are scored."""
    detailed: int = 20
    """Top candidates given their ranked definitions."""
    symbols_kept: int = 6
    """Ranked definitions kept per detailed candidate."""
    cite_file_power: float = 4.0
    """Citation order across files: 0 cites the prime suspect's best definitions, then one per next file; above
    0 the definitions of the top files are merged by (file score / best file score) ** this ×
    (definition score / the file's best) ** `cite_symbol_power`, after the prime suspect's first
    `cite_prime_first`."""
    cite_symbol_power: float = 1.0
    """See `cite_file_power`."""
    cite_prime_first: int = 2
    """See `cite_file_power`."""


@dataclass
class SymbolHit:
    """A definition worth reading, with why."""

    span: SymbolSpan
    """The definition."""
    score: float
    """Fused symbol score."""
    reasons: list[str] = field(default_factory=list)
    """Evidence that pointed here."""


@dataclass
class Candidate:
    """A candidate file with its fused score and the evidence behind it."""

    path: str
    """Repository-relative path."""
    score: float
    """Fused score (higher is better)."""
    parts: dict[str, float] = field(default_factory=dict)
    """Each signal's contribution."""
    symbols: list[SymbolHit] = field(default_factory=list)
    """Best definitions in this file, best first."""
    lines: list[int] = field(default_factory=list)
    """Lines the evidence points at directly (stack frames, literal messages)."""
    reasons: list[str] = field(default_factory=list)
    """Human-readable evidence."""
    lift: float = 0.0
    """Part of `score` added by the order-only lifts (`w_title_path`, `w_sibling`, `w_title_bm25`, `w_title_def`);
    `citation_order` and the confidence leave it out, so a lifted file enters the top five without taking more
    citation slots."""


@dataclass
class Ranking:
    """Candidates best first, with a margin-based confidence."""

    candidates: list[Candidate]
    """Ranked files."""
    confidence: float
    """0..1 from the score margin and the strength of direct evidence."""
    query_terms: dict[str, float]
    """The weighted query."""
    config: RankConfig = field(default_factory=RankConfig)
    """The knobs it was ranked with (citation order reads them)."""

    def top(self, k: int = 5) -> list[Candidate]:
        """The k best candidates."""
        return self.candidates[:k]


def report_title(text: str) -> str:
    """The first line of a report's text (its title, as `BugReport.text` puts it first)."""
    return text.strip().split("\n", 1)[0]


def _query(text: str, focus: Focus, config: RankConfig) -> dict[str, float]:
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


def _bm25(docs: list[dict[str, int]], lengths: list[int], query: dict[str, float], idf_docs: list[dict[str, int]] | None, k1: float, b: float) -> list[float]:
    n = len(docs)
    if not n:
        return []
    avg = sum(lengths) / n or 1.0
    base = idf_docs if idf_docs is not None else docs
    nb = len(base)
    scores = [0.0] * n
    norms = [k1 * (1 - b + b * length / avg) for length in lengths]
    for term, qw in query.items():
        df = sum(1 for d in base if term in d)
        if not df:
            continue
        idf = math.log(1 + (nb - df + 0.5) / (df + 0.5))
        w = qw * idf
        for i, d in enumerate(docs):
            tf = d.get(term)
            if tf:
                scores[i] += w * tf * (k1 + 1) / (tf + norms[i])
    return scores


def _is_test(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def _is_doc(path: str) -> bool:
    return bool(_DOC_PATH.search(path) or _NON_CODE.search(path))


def _is_code(path: str) -> bool:
    """Neither a test nor a doc (or non-code file) by its path."""
    return not _is_test(path) and not _is_doc(path)


def _is_prose_word(word: str) -> bool:
    """A plain lowercase word (`kind`, `request`): as likely a word of English as the name of a definition."""
    return re.fullmatch(r"[a-z]+", word) is not None


def _path_factor(path: str, config: RankConfig, corpus: Corpus) -> float:
    """The multiplier of a file's scores by what it is: a test, a doc (or non-code file), generated, vendored, or
    the project's own code."""
    if _is_test(path):
        return config.test_factor
    if _is_doc(path):
        return config.doc_factor
    if path in corpus.generated:
        return config.generated_factor
    return config.vendored_factor if path in corpus.vendored else 1.0


def _module_file(pieces: list[str], matcher: PathMatcher) -> str | None:
    """The file of the module a qualified name `a.b.c.func` (or `a.b.C.method`) is written under: `a/b/c.py`, matched
    by whole path suffix (`src/a/b/c.py`, `src/main/java/a/b/C.java`)."""
    for cut in (len(pieces) - 1, len(pieces) - 2):
        for cand in module_candidates(".".join(pieces[:cut])):
            hit = matcher.match(cand)
            if hit is not None and (hit == cand or hit.endswith("/" + cand)):
                return hit
    return None


def rank(
    corpus: Corpus,
    text: str,
    focus: Focus | None = None,
    *,
    pagerank: Mapping[str, float] | None = None,
    history: Mapping[str, float] | None = None,
    config: RankConfig | None = None,
) -> Ranking:
    """Rank the corpus' files (and their symbols) for a report text."""
    config = config or RankConfig()
    focus = focus or Focus.from_text(text)
    docs = corpus.docs
    if not docs:
        return Ranking([], 0.0, {}, config)
    query = _query(text, focus, config)
    file_scores = _bm25([d.terms for d in docs], [d.length for d in docs], query, None, config.k1, config.b)
    best_file = max(file_scores) or 1.0
    parts: list[dict[str, float]] = [{"file": config.w_file * s / best_file} for s in file_scores]
    reasons: list[list[str]] = [[] for _ in docs]
    lines: list[list[int]] = [[] for _ in docs]
    sym_reasons: dict[tuple[int, int], list[str]] = {}
    sym_bonus: dict[tuple[int, int], float] = {}

    def bump(i: int, key: str, value: float, why: str) -> None:
        if value > parts[i].get(key, 0.0):
            parts[i][key] = value
        if why not in reasons[i]:
            reasons[i].append(why)

    def enclosing(i: int, line: int) -> int | None:
        best = None
        for j, s in enumerate(docs[i].symbols):
            if s.start_line <= line <= s.end_line and (best is None or s.start_line >= docs[i].symbols[best].start_line):
                best = j
        return best

    # Stack frames: innermost in-repository frame strongest.
    paths = [d.path for d in docs]
    matcher = PathMatcher(paths)
    resolved = resolve_frames(focus.frames, matcher)
    if resolved:
        inner_last = [r for r in resolved if r[0].language in ("python", "generic")]
        inner_first = [r for r in resolved if r[0].language not in ("python", "generic")]
        ordered = list(reversed(inner_last)) + inner_first
        for depth, (frame, path) in enumerate(ordered):
            i = corpus.by_path[path]
            value = config.w_frame if depth == 0 else config.w_frame * config.frame_decay / depth
            bump(i, "frame", value, f"stack frame {frame.path}:{frame.line}" + (f" in {frame.function}" if frame.function else ""))
            if frame.line:
                lines[i].append(frame.line)
                j = enclosing(i, frame.line)
                if j is not None:
                    sym_bonus[(i, j)] = sym_bonus.get((i, j), 0.0) + value
                    sym_reasons.setdefault((i, j), []).append(f"stack frame line {frame.line}")

    # Paths mentioned in the report.
    for p in focus.paths:
        hit = matcher.match(p)
        if hit is not None:
            bump(corpus.by_path[hit], "path", config.w_path, f"report mentions {p}")

    # Modules imported in the report's code.
    by_path = corpus.by_path
    for k, module in enumerate(focus.imports):
        for cand in module_candidates(module):
            if cand in by_path:
                bump(by_path[cand], "import", config.w_import / (1 + 0.1 * k), f"report imports {module}")
                break

    # File names written in the report (`sqlmigrate`, `autodetector`): rarer stems count more.
    stems: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        stem = d.path.rsplit("/", 1)[-1].split(".")[0]
        if len(stem) >= 5 and not stem.startswith("__"):
            stems.setdefault(stem.lower(), []).append(i)
    mentioned_words = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{4,}", text)}
    for stem, idxs in stems.items():
        if stem in mentioned_words and len(idxs) <= 3:
            for i in idxs:
                bump(i, "stem", config.w_stem / len(idxs), f"report names `{stem}`, this file's name")

    # Settings and constants the report names, where they are assigned at top level.
    for const in [o for o in focus.options if not o.startswith("-")][:10]:
        pattern = re.compile(rf"^{re.escape(const)}\s*[:=]", re.M)
        found = [p for p, t in corpus.texts.items() if const in t and pattern.search(t)]
        if 0 < len(found) <= 3:
            for p in found:
                i = by_path[p]
                m = pattern.search(corpus.texts[p])
                line = corpus.texts[p].count("\n", 0, m.start()) + 1 if m else 1
                bump(i, "constant", config.w_constant / len(found), f"assigns `{const}` named in the report (line {line})")
                lines[i].append(line)

    # Definitions named in the report.
    names: dict[str, list[tuple[int, int]]] = {}
    for i, d in enumerate(docs):
        for j, s in enumerate(d.symbols):
            names.setdefault(s.name, []).append((i, j))
    code_idents = set(focus.code_identifiers)
    # Names printed in stack frames are scored by the frames themselves.
    frame_names = {re.split(r"[.:]", f.function)[-1] for f in focus.frames if f.function}
    for ident in focus.identifiers:
        if re.split(r"\.|::", ident)[-1] in frame_names:
            continue
        pieces = re.split(r"\.|::", ident)
        name = pieces[-1]
        if len(name) < _MIN_MENTION_LEN or name not in names:
            continue
        hits = names[name]
        qualifier = pieces[-2] if len(pieces) > 1 else None
        if qualifier:
            qualified = [(i, j) for i, j in hits if docs[i].symbols[j].qualname.split(".")[-2:-1] == [qualifier]
                         or docs[i].path.rsplit("/", 1)[-1].split(".")[0] == qualifier]
            if qualified:
                hits = qualified
        rarity = 1.0 / (1.0 + math.log(len(hits)))
        strength = config.w_mention * rarity * (1.5 if ident in code_idents else 1.0) * (1.3 if qualifier else 1.0)
        if ident not in code_idents and not qualifier and _is_prose_word(name):
            strength *= config.prose_mention_factor
        if config.w_module_path > 0 and len(pieces) >= 3 and ident not in code_idents:
            module_file = _module_file(pieces, matcher)
            if module_file is not None and any(docs[i].path == module_file for i, _ in hits):
                bump(by_path[module_file], "path", config.w_module_path, f"report names `{ident}`, defined here")
        for i, j in hits[:25]:
            bump(i, "mention", min(strength, config.w_mention * 1.5), f"defines `{docs[i].symbols[j].qualname}` named in the report")
            sym_bonus[(i, j)] = max(sym_bonus.get((i, j), 0.0), strength)
            sym_reasons.setdefault((i, j), []).append("named in the report")

    # Literal messages quoted in the report.
    for message in focus.messages[:8]:
        for key in literal_keys(message):
            found = [p for p, t in corpus.texts.items() if key in t]
            if 0 < len(found) <= 5:
                for p in found:
                    i = by_path[p]
                    line = corpus.texts[p].count("\n", 0, corpus.texts[p].index(key)) + 1
                    bump(i, "message", config.w_message / len(found), f"contains the message “{key[:60]}” (line {line})")
                    lines[i].append(line)
                    j = enclosing(i, line)
                    if j is not None:
                        sym_bonus[(i, j)] = sym_bonus.get((i, j), 0.0) + config.w_message
                        sym_reasons.setdefault((i, j), []).append(f"contains the quoted message (line {line})")
                break

    # PageRank from the repo map.
    if pagerank:
        top_pr = max(pagerank.values()) or 1.0
        for i, d in enumerate(docs):
            pr = pagerank.get(d.path)
            if pr:
                parts[i]["pagerank"] = config.w_pagerank * math.sqrt(pr / top_pr)

    # Files that past commits resembling the report changed.
    if history and config.w_history > 0:
        known = {by_path[path]: h for path, h in history.items() if path in by_path and h > 0}
        top_h = max(known.values(), default=0.0)
        for i, h in known.items():
            parts[i]["history"] = config.w_history * h / top_h
            if h >= top_h / 2:
                reasons[i].append("changed by past commits whose messages resemble the report")

    # Symbol-level BM25 over a pool of promising files.
    pre = [sum(p.values()) for p in parts]
    pool = sorted(range(len(docs)), key=lambda i: -pre[i])[: config.symbol_pool]
    sym_index: list[tuple[int, int]] = [(i, j) for i in pool for j in range(len(docs[i].symbols))]
    sym_docs = [docs[i].symbol_terms[j] for i, j in sym_index]
    sym_scores = _bm25(sym_docs, [sum(d.values()) for d in sym_docs], query, [d.terms for d in docs], config.k1, config.b)
    best_sym = max(sym_scores, default=0.0) or 1.0
    per_file_syms: dict[int, list[tuple[float, int]]] = {}
    for (i, j), s in zip(sym_index, sym_scores):
        norm = s / best_sym
        per_file_syms.setdefault(i, []).append((norm + sym_bonus.get((i, j), 0.0), j))
        if config.w_symbol * norm > parts[i].get("symbol", 0.0):
            parts[i]["symbol"] = config.w_symbol * norm
    for (i, j), bonus in sym_bonus.items():
        if i not in per_file_syms or all(jj != j for _, jj in per_file_syms[i]):
            per_file_syms.setdefault(i, []).append((bonus, j))

    candidates: list[Candidate] = []
    for i, d in enumerate(docs):
        score = sum(parts[i].values()) * _path_factor(d.path, config, corpus)
        candidates.append(Candidate(path=d.path, score=score, parts=parts[i], lines=lines[i], reasons=reasons[i]))
    candidates.sort(key=lambda c: (-c.score, c.path))
    if config.w_title_path > 0 or config.w_sibling > 0 or config.w_title_bm25 > 0 or config.w_title_def > 0:
        _lift(corpus, candidates, config, text, names)
    for cand in candidates[: config.detailed]:
        i = by_path[cand.path]
        spans = docs[i].symbols
        syms = _prefer_members(spans, sorted(per_file_syms.get(i, []), key=lambda x: -x[0]))[: config.symbols_kept]
        cand.symbols = [SymbolHit(spans[j], s, sym_reasons.get((i, j), [])) for s, j in syms]
    return Ranking(candidates, _confidence(candidates), query, config)


def _lift(corpus: Corpus, candidates: list[Candidate], config: RankConfig, text: str,
          names: Mapping[str, list[tuple[int, int]]]) -> None:
    """Order-only lifts (title words in the path, siblings of the leading files, the title's own BM25, definitions
    the title names), recorded in `Candidate.lift`."""
    ranked = [(c.path, c.score) for c in candidates[: config.lift_pool]]
    pool = {path for path, _ in ranked}
    title = report_title(text)
    signals = []
    if config.w_title_path > 0:
        shares = path_term_scores(list(corpus.by_path), title, pool)
        signals.append(("title_path", config.w_title_path, shares, "its name or directory is in the title"))
    if config.w_sibling > 0:
        foreign = corpus.generated | corpus.vendored
        shares = sibling_scores(ranked, pool, top=config.lift_top,
                                is_code=lambda p: _is_code(p) and p not in foreign)
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
                value = weight * share * _path_factor(cand.path, config, corpus)
                cand.parts[key] = weight * share
                cand.score += value
                cand.lift += value
                cand.reasons.append(why)
    candidates[start:] = sorted(candidates[start:], key=lambda c: (-c.score, c.path))


def _title_bm25(corpus: Corpus, title: str, pool: set[str], config: RankConfig) -> dict[str, float]:
    """BM25 of each file of `pool` for the title's terms alone, relative to the best file of the corpus (0..1)."""
    query = dict.fromkeys(tokenize(title), 1.0)
    docs = corpus.docs
    scores = _bm25([d.terms for d in docs], [d.length for d in docs], query, None, config.k1, config.b)
    best = max(scores, default=0.0) or 1.0
    return {d.path: s / best for d, s in zip(docs, scores) if s > 0 and d.path in pool}


def _title_definitions(corpus: Corpus, title: str, names: Mapping[str, list[tuple[int, int]]],
                       pool: set[str]) -> dict[str, float]:
    """Files of `pool` defining a name the title writes as code, when at most three code files define it: each
    name counts 1 / the files defining it, capped at 1 per file."""
    shares: dict[str, float] = {}
    for word in set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", title)):
        if _is_prose_word(word):
            continue
        files = {corpus.docs[i].path for i, _ in names.get(word, ())}
        files = {p for p in files if _is_code(p)}
        if 0 < len(files) <= 3:
            for p in files & pool:
                shares[p] = min(1.0, shares.get(p, 0.0) + 1.0 / len(files))
    return shares


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
        members = [k for k, o in enumerate(spans) if o.qualname.startswith(prefix) and o.qualname.count(".") == span.qualname.count(".") + 1
                   and span.start_line <= o.start_line <= span.end_line and k not in used]
        if members:
            best = max(members, key=lambda k: (by_score.get(k, -1.0), -spans[k].start_line))
            used.add(best)
            out.append((sc, best))
        else:
            used.add(j)
            out.append((sc, j))
    return out


def _confidence(candidates: list[Candidate]) -> float:
    if not candidates or not any(v > 0 for k, v in candidates[0].parts.items() if k != "pagerank"):
        return 0.05
    top = candidates[0]
    # order-only lifts (`Candidate.lift`) say nothing about how clearly the evidence points at one file
    second = max((c.score - c.lift for c in candidates[1:]), default=0.0)
    margin = (top.score - top.lift - second) / ((top.score - top.lift) or 1.0)
    direct = sum(1 for k in ("frame", "message", "path", "mention", "constant") if top.parts.get(k))
    conf = 0.2 + 0.45 * margin + 0.1 * direct
    return round(max(0.05, min(0.9, conf)), 2)


def citation_order(ranking: Ranking, *, files: int = 5, prime_symbols: int = 4,
                   entities: int = 5) -> list[tuple[Candidate, SymbolHit | None]]:
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
        out: list[tuple[Candidate, SymbolHit | None]] = []
        for k, cand in enumerate(top):
            hits: list[SymbolHit | None] = list(cand.symbols[: prime_symbols if k == 0 else 1]) or [None]
            out.extend((cand, h) for h in hits)
        return out
    best_file = (top[0].score - top[0].lift) or 1.0
    merged: list[tuple[float, int, int, Candidate, SymbolHit | None]] = []
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


def affected_entries(ranking: Ranking, *, files: int = 5, prime_symbols: int = 4) -> list[tuple[str, str | None]]:
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


@dataclass(frozen=True)
class RankedLocations:
    """A ranking deeper than the diagnosis names: what the localization protocols score."""

    files: list[str]
    """The best files, best first."""
    functions: list[str]
    """The best definitions as `path:qualified.name` (nested functions as their outer function), best first."""
    source: str = "offline"
    """Where it comes from: `offline` (the investigator's own ranking) or `prepass` (a model's lexical pre-pass)."""


def ranked_locations(ranking: Ranking, corpus: Corpus, *, files: int = 10, functions: int = 15,
                     source: str = "offline") -> RankedLocations:
    """The ranking's `files` best files (with a positive score) and `functions` best definitions, in the order the
    report cites them (`citation_order` over the same files)."""
    top = [c.path for c in ranking.candidates[:files] if c.score > 0]
    spans = {d.path: d.symbols for d in corpus.docs}
    names: list[str] = []
    for cand, hit in citation_order(ranking, files=len(top), prime_symbols=ranking.config.symbols_kept,
                                    entities=len(top) * ranking.config.symbols_kept):
        if hit is None:
            continue
        own = spans.get(cand.path, [])
        index = next((k for k, s in enumerate(own) if s == hit.span), None)
        names.append(f"{cand.path}:{outer_entity(own, index) if index is not None else hit.span.qualname}")
    return RankedLocations(top, list(dict.fromkeys(names))[:functions], source)

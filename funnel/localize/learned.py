"""The learned reranker: linear models over the fused ranking's signals, trained on real fix commits.

Two models, each `weights · features`, both optional:
- **files**: reorders the fusion's best `pool` files after the first, where the prime suspect is written in one
  of `RankConfig.learned_languages` (C, Go, Java, JavaScript/TypeScript: where it lifts file Acc@5 on the tune
  halves; for Python, C++ and Rust it lowers it). Its features are the signals the fusion already computed
  (each signal's value before its weight), the file's kind by path (test, doc, tooling, generated, vendored),
  its size and depth, and where the fusion put it.
- **functions**: orders the definitions of the best `pool` files (which the report cites, and the deeper
  function ranking). Its features are the definition's own score and place in its file, its file's score and
  place, its size, kind and nesting, and whether the report names it, points into it or uses its names in the
  body. With `RankConfig.learned_in_file` it orders only inside each file, every place keeping its fused score
  (`bench/fit_in_file.py` fits a model for that; measured, and off).

Both are fitted by `bench/fit_ranker.py` as pairwise logistic regressions (a RankNet with no hidden layer) on
pairs of "what the fix changed" and "what it did not" from fix commits of public repositories that are not in
the eval data; the shipped default is `ranker.json` beside this module, a few dozen numbers.

Nothing in the features names a repository, a language or an instance: the same numbers rank every tree.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from funnel.localize.calibration import prime_language
from funnel.localize.candidates import (
    Candidate,
    CandidateSymbol,
    RankConfig,
    report_title,
)
from funnel.localize.corpus import Corpus
from funnel.localize.file_kinds import is_doc, is_test, is_tooling
from funnel.localize.reasoning import named_items
from funnel.localize.terms import tokenize
from repomap.focus import Focus
from repomap.pointers import NAME_CHARS

__all__ = ("DEFAULT_RANKER", "FILE_FEATURES", "FUNCTION_FEATURES", "SIGNAL_PARTS", "LearnedRanker", "LinearModel",
           "RankerFileError", "definition_features", "definition_rows", "file_features", "keep_slots", "load_ranker",
           "order_definitions", "rerank", "reranks", "standardize")

DEFAULT_RANKER = Path(__file__).with_name("ranker.json")
"""The shipped models."""

SIGNAL_PARTS: tuple[str, ...] = (
    "file", "symbol", "pagerank", "history", "frame", "mention", "import", "path", "module_path", "stem",
    "constant", "message", "title_path", "sibling", "title_bm25", "title_def",
)
"""`Candidate.parts` keys the file model reads, each divided by its `RankConfig` weight (`w_<part>`)."""

FILE_FEATURES: tuple[str, ...] = (
    *SIGNAL_PARTS,
    "is_test", "is_doc", "is_tooling", "is_generated", "is_vendored",
    "log_size", "depth", "fused_ratio", "fused_rank",
)
"""Every feature of the file model."""

FUNCTION_FEATURES: tuple[str, ...] = (
    "sym_ratio", "sym_pos", "file_pos", "file_ratio", "log_lines", "evidence", "named", "in_title", "nested",
    "dunder", "kind_function", "kind_method", "kind_class", "name_share", "private", "body_named",
)
"""Every feature of the function model."""

_KINDS = ("function", "method", "class")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class RankerFileError(ValueError):
    """A ranker file that cannot be used (the file's fault, not the report's)."""


@dataclass(frozen=True)
class LinearModel:
    """A linear scorer over standardized features."""

    weights: tuple[float, ...]
    """One weight per feature of `names`."""
    mean: tuple[float, ...]
    """Per-feature mean subtracted before weighting."""
    scale: tuple[float, ...]
    """Per-feature scale divided out before weighting."""
    names: tuple[str, ...]
    """Feature names, in weight order."""
    pool: int = 30
    """Best fused files the model orders (files, or the files whose definitions it orders)."""

    def score(self, values: dict[str, float]) -> float:
        """The model's score of one item's features (higher is better)."""
        return sum(w * (values.get(n, 0.0) - m) / s
                   for w, n, m, s in zip(self.weights, self.names, self.mean, self.scale))

    def as_dict(self) -> dict[str, Any]:
        """The model as the JSON object of a ranker file's section."""
        return {"names": list(self.names), "weights": [round(w, 6) for w in self.weights],
                "mean": [round(m, 6) for m in self.mean], "scale": [round(x, 6) for x in self.scale],
                "pool": self.pool}


@dataclass(frozen=True)
class LearnedRanker:
    """The models of one ranker file."""

    files: LinearModel | None = None
    """Reorders the best files (`RankConfig.learned_files`)."""
    functions: LinearModel | None = None
    """Orders the best files' definitions (`RankConfig.learned_functions`)."""
    trained_on: str = ""
    """What the weights were fitted on (the training command writes it)."""

    def to_json(self) -> str:
        """The models as the text of a ranker file."""
        data: dict[str, Any] = {"trained_on": self.trained_on}
        for key in ("files", "functions"):
            model = getattr(self, key)
            if model is not None:
                data[key] = model.as_dict()
        return "{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()) + "\n}\n"


def file_features(cand: Candidate, position: int, top_score: float, corpus: Corpus,
                  config: RankConfig) -> dict[str, float]:
    """The file model's features of one candidate at `position` (0-based) of the fused order."""
    values = {part: cand.parts.get(part, 0.0) / (getattr(config, f"w_{part}") or 1.0) for part in SIGNAL_PARTS}
    path = cand.path
    index = corpus.by_path.get(path)
    size = corpus.lengths[index] if index is not None else 0
    values.update(
        is_test=float(is_test(path)), is_doc=float(is_doc(path)), is_tooling=float(is_tooling(path)),
        is_generated=float(path in corpus.generated), is_vendored=float(path in corpus.vendored),
        log_size=math.log1p(size), depth=float(path.count("/")),
        fused_ratio=cand.score / top_score if top_score > 0 else 0.0, fused_rank=math.log1p(position),
    )
    return values


def definition_features(sym: CandidateSymbol, position: int, file_position: int, file_ratio: float,
                        best: float, title: str, words: set[str], terms: frozenset[str] = frozenset()) -> dict[str, float]:
    """The function model's features of a file's definition at `position` of the file's own order, the file at
    `file_position` with score `file_ratio` of the first's; `best` is the file's best definition score, `words`
    the report's identifiers, `terms` its terms (`tokenize`)."""
    span = sym.span
    parts = set(tokenize(span.name))
    values = {
        "sym_ratio": sym.score / best if best > 0 else 0.0, "sym_pos": math.log1p(position),
        "file_pos": math.log1p(file_position), "file_ratio": file_ratio,
        "log_lines": math.log1p(span.end_line - span.start_line + 1), "evidence": float(bool(sym.reasons)),
        "named": float(span.name in words),
        "in_title": float(bool(re.search(rf"(?<![{NAME_CHARS}]){re.escape(span.name)}(?![{NAME_CHARS}])", title))),
        "nested": float(span.qualname.count(".")), "dunder": float(span.name.startswith("__")),
        "name_share": len(parts & terms) / len(parts) if parts else 0.0,
        "private": float(span.name.startswith("_") and not span.name.startswith("__")),
    }
    for kind in _KINDS:
        values[f"kind_{kind}"] = float(span.kind == kind)
    return values


def reranks(candidates: list[Candidate], corpus: Corpus, config: RankConfig) -> bool:
    """Whether the file model reorders this ranking: on, and the prime suspect's language (read from its text too,
    so a C++ header is C++) is one it is used for."""
    if not config.learned_files or not candidates:
        return False
    if not config.learned_languages:
        return True
    path = candidates[0].path
    data = corpus.texts[path].encode("utf-8", "surrogatepass") if path in corpus.by_path else None
    return prime_language(path, data) in config.learned_languages


def rerank(candidates: list[Candidate], corpus: Corpus, config: RankConfig,
           model: LinearModel) -> list[tuple[float, float]]:
    """Reorder the best `model.pool` candidates in place by the file model's score (all but the first with
    `RankConfig.learned_keep_first`), each keeping its own fused score for now; returns the `(score, lift)` of each
    position before the move, for `keep_slots`."""
    pool = candidates[: model.pool]
    slots = [(c.score, c.lift) for c in pool]
    start = 1 if config.learned_keep_first else 0
    if len(pool) - start < 2:
        return slots
    top = pool[0].score
    scored = [(model.score(file_features(c, k, top, corpus, config))
               - (config.learned_tooling_penalty if is_tooling(c.path) else 0.0), k, c)
              for k, c in enumerate(pool) if k >= start]
    scored.sort(key=lambda x: (-x[0], x[1]))
    if scored[0][1] > start:
        where = "first" if start == 0 else "second"
        scored[0][2].reasons.append(f"the learned ranker put it {where} (the fusion had it at {scored[0][1] + 1})")
    candidates[start: len(pool)] = [c for _, _, c in scored]
    return slots


def keep_slots(candidates: list[Candidate], slots: list[tuple[float, float]]) -> None:
    """Give each reordered position the fused score that position had, so the scores stay in ranked order for the
    citations and everything that reads them; each file keeps its own order-only lift (at most that score), so
    the citations, which order files by their score without it, do not charge a file with the lift of the one
    whose place it took."""
    for cand, (score, _) in zip(candidates, slots):
        cand.score, cand.lift = score, min(cand.lift, score)


def definition_rows(candidates: list[Candidate], text: str, files: int, corpus: Corpus | None = None,
                    focus: Focus | None = None) -> Iterator[tuple[Candidate, CandidateSymbol, dict[str, float]]]:
    """Each definition of the best `files` candidates, in their order, with its function-model features (those
    reading a definition's body only with the `corpus`; `focus`: the report's, when the caller has it)."""
    top = candidates[:files]
    if not top:
        return
    title = report_title(text)
    words = set(_WORD.findall(text))
    terms = frozenset(tokenize(text))
    focus = focus or Focus.from_text(text)
    named = named_items(list(focus.code_identifiers), list(focus.options), set())
    best_file = (top[0].score - top[0].lift) or 1.0
    for k, cand in enumerate(top):
        best = cand.symbols[0].score if cand.symbols else 1.0
        ratio = max(cand.score - cand.lift, 0.0) / best_file
        lines = corpus.texts[cand.path].split("\n") if corpus is not None and cand.path in corpus.by_path else []
        for n, sym in enumerate(cand.symbols):
            values = definition_features(sym, n, k, ratio, best, title, words, terms)
            values["body_named"] = _body_named(lines, sym, named)
            yield cand, sym, values


def _body_named(lines: list[str], sym: CandidateSymbol, named: dict[str, float]) -> float:
    """How much of what the report writes as code the definition's body uses (its own name aside): the log of
    one plus the summed `named_items` weights."""
    if not lines or not named:
        return 0.0
    body = "\n".join(lines[sym.span.start_line: sym.span.end_line])
    used = set(_WORD.findall(body)) & named.keys()
    used.discard(sym.span.name)
    return math.log1p(sum(named[n] for n in used))


def order_definitions(candidates: list[Candidate], text: str, model: LinearModel, corpus: Corpus | None = None,
                      *, in_file: bool = False, focus: Focus | None = None) -> None:
    """Score the definitions of the best `model.pool` candidates with the function model (`CandidateSymbol.learned`)
    and order each file's definitions by it; `in_file` gives each place the fused score it had (the model then
    decides only the order inside a file, not across files; `focus`: the report's, when the caller has it)."""
    for _, sym, values in definition_rows(candidates, text, model.pool, corpus, focus):
        sym.learned = model.score(values)
    for cand in candidates[: model.pool]:
        slots = [sym.score for sym in cand.symbols]
        cand.symbols.sort(key=lambda sym: -(sym.learned or 0.0))
        if in_file:
            for sym, score in zip(cand.symbols, slots):
                sym.score, sym.learned = score, None


def _model(data: Any, source: str, key: str, known: Sequence[str]) -> LinearModel | None:
    if data is None:
        return None
    try:
        names = tuple(str(n) for n in data["names"])
        weights = tuple(float(w) for w in data["weights"])
        mean = tuple(float(m) for m in data["mean"])
        scale = tuple(float(x) or 1.0 for x in data["scale"])
        pool = int(data.get("pool", 30))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RankerFileError(f"{source}: section {key!r} is not a model ({exc})") from exc
    if not len(names) == len(weights) == len(mean) == len(scale):
        raise RankerFileError(f"{source}: section {key!r}: names, weights, mean and scale differ in length")
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise RankerFileError(f"{source}: section {key!r}: unknown features {', '.join(unknown)}")
    if pool < 1:
        raise RankerFileError(f"{source}: section {key!r}: pool must be at least 1, got {pool}")
    return LinearModel(weights, mean, scale, names, pool)


def _parse(text: str, source: str) -> LearnedRanker:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RankerFileError(f"{source}: not a ranker file ({exc})") from exc
    if not isinstance(data, dict):
        raise RankerFileError(f"{source}: not a ranker file (a JSON object is expected)")
    unknown = sorted(set(data) - {"trained_on", "files", "functions"})
    if unknown:
        raise RankerFileError(f"{source}: unknown sections {', '.join(unknown)}")
    return LearnedRanker(_model(data.get("files"), source, "files", FILE_FEATURES),
                         _model(data.get("functions"), source, "functions", FUNCTION_FEATURES),
                         str(data.get("trained_on", "")))


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int) -> LearnedRanker:
    return _parse(Path(path).read_text(encoding="utf-8"), path)


def load_ranker(path: Path | str | None = None) -> LearnedRanker:
    """The models in `path` (default: the shipped `ranker.json`), parsed once per file version."""
    file = Path(path) if path else DEFAULT_RANKER
    try:
        stat = file.stat()
    except OSError as exc:
        raise RankerFileError(f"{file}: cannot read the ranker file ({exc.strerror})") from exc
    return _load(str(file), stat.st_mtime_ns)


def standardize(rows: Sequence[dict[str, float]], names: Sequence[str]) -> tuple[list[float], list[float]]:
    """Per-feature mean and scale (standard deviation, 1 where constant) of feature rows, for fitting."""
    n = len(rows) or 1
    mean = [sum(r.get(k, 0.0) for r in rows) / n for k in names]
    scale = []
    for k, m in zip(names, mean):
        var = sum((r.get(k, 0.0) - m) ** 2 for r in rows) / n
        scale.append(math.sqrt(var) or 1.0)
    return mean, scale

"""Localization metrics: how well a ranked list of files, functions and line ranges finds the code a fix changed.

All functions are pure and take plain data, so they are tested on hand-computed rankings.
"""

from __future__ import annotations

import bisect
import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

MODULE_LEVEL = "<module>"
"""Gold-function name of a change outside any def/class; not a function, so left out of function accuracy."""

FILE_KS = (1, 3, 5)
"""Cut-offs of file accuracy."""
FUNCTION_K = 5
"""Cut-off of function accuracy."""


def normalize_path(path: str) -> str:
    """A repository-relative POSIX path in canonical form (`./a/b.py` and `/a/b.py` become `a/b.py`)."""
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def acc_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when every gold item is among the first `k` distinct ranked items, else 0.0 (0.0 with no gold)."""
    gold_set = {normalize_path(g) for g in gold}
    if not gold_set:
        return 0.0
    top = set(_dedupe(normalize_path(r) for r in ranked)[:k])
    return 1.0 if gold_set <= top else 0.0


def first_gold_rank(ranked: Sequence[str], gold: Iterable[str]) -> int | None:
    """1-based rank of the first gold item in the distinct ranked list, None when no gold item is ranked."""
    gold_set = {normalize_path(g) for g in gold}
    for rank, item in enumerate(_dedupe(normalize_path(r) for r in ranked), start=1):
        if item in gold_set:
            return rank
    return None


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str]) -> float:
    """1/rank of the first gold item, 0.0 when none is ranked."""
    rank = first_gold_rank(ranked, gold)
    return 1.0 / rank if rank else 0.0


def split_entity(entity: str) -> tuple[str, str]:
    """`path:name` → (`path`, `name`); the name may be dotted (`Class.method`)."""
    path, sep, name = entity.rpartition(":")
    if not sep:
        return "", entity
    return normalize_path(path), name.strip()


def entity_aliases(name: str) -> set[str]:
    """Names a cited symbol counts as: itself, its plain name, and each enclosing class (`A.b` → `A.b`, `b`, `A`)."""
    parts = [p for p in name.split(".") if p]
    if not parts:
        return set()
    aliases = {".".join(parts), parts[-1]}
    aliases.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return aliases


def entity_matches(predicted: str, gold: str) -> bool:
    """Whether a predicted `path:symbol` names the gold `path:name`: same file, and the gold name is the
    symbol, its plain name or an enclosing class, or the symbol is the gold name's plain name."""
    p_path, p_name = split_entity(predicted)
    g_path, g_name = split_entity(gold)
    if p_path != g_path or not p_name or not g_name:
        return False
    return g_name in entity_aliases(p_name) or p_name == g_name.split(".")[-1]


def gold_entities(functions: Mapping[str, Sequence[str]]) -> list[str]:
    """Gold functions as `path:name`, module-level changes left out."""
    return [
        f"{normalize_path(path)}:{name}" for path, names in functions.items() for name in names if name != MODULE_LEVEL
    ]


def function_acc_at_k(ranked_entities: Sequence[str], gold: Sequence[str], k: int = FUNCTION_K) -> float:
    """1.0 when every gold entity is matched by one of the first `k` distinct predicted entities (0.0 with no gold)."""
    if not gold:
        return 0.0
    top = _dedupe(ranked_entities)[:k]
    return 1.0 if all(any(entity_matches(p, g) for p in top) for g in gold) else 0.0


def _overlaps(a: Sequence[int], b: Sequence[int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def line_overlap(
    cited: Mapping[str, Sequence[Sequence[int]]], gold: Mapping[str, Sequence[Sequence[int]]]
) -> float | None:
    """Share of gold line ranges that intersect at least one cited range in the same file; None with no gold range."""
    cited_norm: dict[str, list[Sequence[int]]] = {}
    for path, ranges in cited.items():
        cited_norm.setdefault(normalize_path(path), []).extend(ranges)
    total = hit = 0
    for path, ranges in gold.items():
        mine = cited_norm.get(normalize_path(path), [])
        for gold_range in ranges:
            total += 1
            start, end = int(gold_range[0]), int(gold_range[-1])
            if any(_overlaps((start, end), (int(c[0]), int(c[-1]))) for c in mine):
                hit += 1
    return hit / total if total else None


LINE_CAP = 15
"""Widest first range (lines) that still counts for line Hit@1 capped: a wider range cannot buy a hit."""


def range_width(cited: Sequence[int]) -> int:
    """Lines an inclusive range `[start, end]` covers."""
    return int(cited[-1]) - int(cited[0]) + 1


def _hits_gold(path: str, cited: Sequence[int], gold: Mapping[str, Sequence[Sequence[int]]]) -> bool:
    ranges = next((r for p, r in gold.items() if normalize_path(p) == path), ())
    return any(_overlaps((int(cited[0]), int(cited[-1])), (int(g[0]), int(g[-1]))) for g in ranges)


@dataclass(frozen=True)
class LineScore:
    """Whether the cited line ranges touch the lines the fix changed."""

    hit_at_1: float
    """1.0 when the first cited range of the first ranked file overlaps a changed line of that file."""
    hit_at_1_capped: float
    """`hit_at_1`, counted only when that range is at most `LINE_CAP` lines wide."""
    hit_any: float
    """1.0 when some cited range overlaps a changed line of its file."""
    first_width: int | None
    """Width in lines of the first cited range; None when nothing is cited."""


def line_score(
    ranked_files: Sequence[str], cited: Mapping[str, Sequence[Sequence[int]]],
    gold: Mapping[str, Sequence[Sequence[int]]], *, cap: int = LINE_CAP,
) -> LineScore | None:
    """Line Hit@1, Hit@1 with the first range capped at `cap` lines, Hit@any; None when the gold has no range.

    `cited` maps each file to its ranges in citation order; the first file is `ranked_files[0]`."""
    if not any(gold.values()):
        return None
    cited_norm: dict[str, list[Sequence[int]]] = {}
    for path, ranges in cited.items():
        cited_norm.setdefault(normalize_path(path), []).extend(ranges)
    first_file = normalize_path(ranked_files[0]) if ranked_files else None
    first = (cited_norm.get(first_file) or [None])[0] if first_file else None
    hit_1 = first is not None and _hits_gold(first_file or "", first, gold)
    width = range_width(first) if first is not None else None
    hit_any = any(_hits_gold(p, r, gold) for p, ranges in cited_norm.items() for r in ranges)
    return LineScore(float(hit_1), float(hit_1 and width is not None and width <= cap), float(hit_any), width)


CALIBRATION_BINS = 5
"""Equal-width confidence bins of the calibration error: [0, 0.2), [0.2, 0.4), ... [0.8, 1.0]."""


@dataclass(frozen=True)
class CalibrationBin:
    """One confidence bin of a reliability curve."""

    low: float
    """Lower edge (inclusive; equal-count bins: the lowest confidence in the bin)."""
    high: float
    """Upper edge (exclusive, except for the last bin; equal-count bins: the highest confidence in the bin)."""
    n: int
    """Diagnoses whose confidence falls in the bin."""
    confidence: float | None
    """Their mean confidence (None for an empty bin)."""
    accuracy: float | None
    """Share of them whose prime suspect file is right (None for an empty bin)."""


def calibration(pairs: Sequence[tuple[float, bool]], bins: int = CALIBRATION_BINS, *,
                scheme: Literal["width", "count"] = "width") -> tuple[float | None, list[CalibrationBin]]:
    """Expected calibration error of (confidence, correct) pairs over `bins` bins (sum over bins of share ×
    |mean confidence − accuracy|), and the bins; None with no pairs. `width`: equal-width bins of [0, 1];
    `count`: the pairs sorted by confidence and cut into `bins` groups of (nearly) equal size."""
    grouped: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    ordered = sorted((float(c), bool(ok)) for c, ok in pairs)
    for k, (conf, ok) in enumerate(ordered):
        slot = int(conf * bins) if scheme == "width" else k * bins // len(ordered)
        grouped[min(bins - 1, max(0, slot))].append((conf, ok))
    out = []
    for b, group in enumerate(grouped):
        conf = sum(c for c, _ in group) / len(group) if group else None
        acc = sum(ok for _, ok in group) / len(group) if group else None
        low, high = (b / bins, (b + 1) / bins) if scheme == "width" or not group else (group[0][0], group[-1][0])
        out.append(CalibrationBin(low, high, len(group), conf, acc))
    if not pairs:
        return None, out
    ece = sum(b.n / len(pairs) * abs(b.confidence - b.accuracy) for b in out if b.n)  # type: ignore[operator]
    return ece, out


def discrimination(pairs: Sequence[tuple[float, bool]]) -> float | None:
    """How well the confidence orders right above wrong diagnoses: the chance that a right one, drawn at random,
    is more confident than a wrong one (ties count half; the area under the ROC curve). 0.5 is a coin; None
    without both kinds."""
    right = sorted(float(c) for c, ok in pairs if ok)
    wrong = sorted(float(c) for c, ok in pairs if not ok)
    if not right or not wrong:
        return None
    below = bisect.bisect_left
    wins = sum(below(wrong, c) + 0.5 * (bisect.bisect_right(wrong, c) - below(wrong, c)) for c in right)
    return wins / (len(right) * len(wrong))


NOISE_DRAWS = 400
"""Label draws `calibration_noise` averages over."""


def calibration_noise(confidences: Sequence[float], bins: int = CALIBRATION_BINS, *, draws: int = NOISE_DRAWS,
                      seed: int = 0) -> tuple[float, float] | None:
    """The calibration error a perfectly calibrated confidence would still show on this many diagnoses: (mean,
    95th percentile) over `draws` label sets where each diagnosis is right with probability its confidence (the
    same seed, the same figures); None with no confidences. An error below the mean is as good as the data can
    tell."""
    if not confidences:
        return None
    rng = random.Random(seed)
    errors = sorted(calibration([(c, rng.random() < c) for c in confidences], bins)[0] or 0.0 for _ in range(draws))
    return statistics.fmean(errors), errors[min(draws - 1, int(0.95 * draws))]


@dataclass(frozen=True)
class InstanceScore:
    """Scores of one instance."""

    file_acc: dict[int, float]
    """File Acc@k for k in FILE_KS."""
    mrr: float
    """Reciprocal rank of the first gold file."""
    function_acc: float | None
    """Function Acc@FUNCTION_K; None when the gold has no function-level entity."""
    line_overlap: float | None
    """Share of gold line ranges cited; None when there are no gold ranges or no ranges were cited for lack of output."""
    first_rank: int | None
    """Rank of the first gold file."""
    lines: LineScore | None = None
    """Line Hit@1 / Hit@any; None when the gold has no line range."""

    def as_dict(self) -> dict[str, float | int | None]:
        """Flat JSON form, keyed like summary.json."""
        out: dict[str, float | int | None] = {f"file_acc_at_{k}": v for k, v in self.file_acc.items()}
        lines = self.lines
        out.update(
            mrr=self.mrr,
            function_acc_at_5=self.function_acc,
            line_overlap=self.line_overlap,
            line_hit_at_1=lines.hit_at_1 if lines else None,
            line_hit_at_1_capped=lines.hit_at_1_capped if lines else None,
            line_hit_any=lines.hit_any if lines else None,
            first_range_width=lines.first_width if lines else None,
            first_gold_rank=self.first_rank,
        )
        return out


def score_instance(
    ranked_files: Sequence[str],
    gold_files: Sequence[str],
    *,
    ranked_entities: Sequence[str] = (),
    gold_functions: Mapping[str, Sequence[str]] | None = None,
    cited_ranges: Mapping[str, Sequence[Sequence[int]]] | None = None,
    gold_ranges: Mapping[str, Sequence[Sequence[int]]] | None = None,
) -> InstanceScore:
    """Every metric of one instance."""
    entities = gold_entities(gold_functions or {})
    return InstanceScore(
        file_acc={k: acc_at_k(ranked_files, gold_files, k) for k in FILE_KS},
        mrr=reciprocal_rank(ranked_files, gold_files),
        function_acc=function_acc_at_k(ranked_entities, entities) if entities else None,
        line_overlap=line_overlap(cited_ranges or {}, gold_ranges or {}),
        first_rank=first_gold_rank(ranked_files, gold_files),
        lines=line_score(ranked_files, cited_ranges or {}, gold_ranges or {}),
    )


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None; None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100, linear interpolation between closest ranks); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (position - low))


def median(values: Sequence[float]) -> float | None:
    """Median, None for no values."""
    return float(statistics.median(values)) if values else None

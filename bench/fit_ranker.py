"""Fit the learned reranker's two models on fix commits and score them on the eval sets, beside today's order.

    .venv/bin/python bench/fit_ranker.py \
        --train-files /work/bench-out/features/train.jsonl --train-functions /work/bench-out/features/train-fn.jsonl \
        --eval-files /work/bench-out/features/lite.jsonl --eval-functions /work/bench-out/features/lite-fn.jsonl \
        [--C 0.1] [--pool 30] [--function-pool 10] [--drop FEATURE ...] [--write funnel/localize/ranker.json]

Each model is a pairwise logistic regression (scikit-learn, no intercept) on standardized feature differences:
per training instance, each file (definition) the fix changed against each one of the pool it did not, every
instance weighing the same. The file dumps come from `bench/rank_features.py`, the function dumps from
`bench/function_features.py`. They are fitted on the training dumps only (fix commits of repositories outside
the eval data); the eval dumps are scored per split (tune = even-numbered instances, check = odd) and per
language: strict file Acc@1 / Acc@5 and MRR for the file model, LocAgent function Acc@5 / Acc@10 for the function
model, each against the order the ranking gives without it. Choose on the tune split, confirm on the check split.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.metrics import entity_matches, split_entity
from funnel.localize.learned import (
    FILE_FEATURES,
    FUNCTION_FEATURES,
    LearnedRanker,
    LinearModel,
    standardize,
)

KEPT = 6
"""Definitions per file the ranking keeps (`RankConfig.symbols_kept`): the function model sees no more."""


def load(path: Path, key: str) -> list[dict]:
    """The instances of a dump that ranked (errors left out); `key` is `files` or `defs`."""
    return [r for r in (json.loads(line) for line in path.open(encoding="utf-8")) if key in r]


def items(row: dict, key: str, pool: int) -> list[dict]:
    """The items a model orders in one instance: the best `pool` files, or the kept definitions of them."""
    if key == "files":
        return row["files"][:pool]
    return [d for d in row["defs"] if _place(d, "file_pos") < pool and _place(d, "sym_pos") < KEPT]


def _place(item: dict, feature: str) -> int:
    """A 0-based place from its dumped `log1p` feature (rounded to four decimals in the dump)."""
    return round(math.expm1(item["x"].get(feature, 0.0)))


def _groups(row: dict, key: str, pool: int, in_file: bool) -> list[list[dict]]:
    """The item groups whose answers are paired with their others: the whole pool, or with `in_file` each file's
    kept definitions apart (what `RankConfig.learned_in_file` orders)."""
    group = items(row, key, pool)
    if not in_file:
        return [group]
    by_file: dict[str, list[dict]] = defaultdict(list)
    for d in group:
        by_file[split_entity(d["entity"])[0]].append(d)
    return list(by_file.values())


def pairs(rows: list[dict], key: str, names: list[str], mean: np.ndarray, scale: np.ndarray,
          pool: int, in_file: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric difference vectors (answer − other labelled 1, other − answer 0) with per-group weights."""
    xs, ys, ws = [], [], []
    for r in rows:
        for group in _groups(r, key, pool, in_file):
            vec = {id(f): (np.array([f["x"].get(n, 0.0) for n in names]) - mean) / scale for f in group}
            pos = [f for f in group if f["label"]]
            neg = [f for f in group if not f["label"]]
            if not pos or not neg:
                continue
            weight = 1.0 / (len(pos) * len(neg))
            for p in pos:
                for q in neg:
                    d = vec[id(p)] - vec[id(q)]
                    xs += [d, -d]
                    ys += [1, 0]
                    ws += [weight, weight]
    return np.array(xs), np.array(ys), np.array(ws)


def fit(rows: list[dict], key: str, names: list[str], pool: int, c: float, in_file: bool = False) -> LinearModel:
    """The pairwise model of `key` (`files` or `defs`) fitted on `rows` (definitions paired only inside their file
    with `in_file`)."""
    mean, scale = standardize([f["x"] for r in rows for f in items(r, key, pool)], names)
    x, y, w = pairs(rows, key, names, np.array(mean), np.array(scale), pool, in_file)
    if not len(x):
        raise SystemExit(f"the training dumps hold no {key} answer beside another item inside the pool: nothing to fit")
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=3000)
    model.fit(x, y, sample_weight=w * len(rows))
    return LinearModel(tuple(float(v) for v in model.coef_[0]), tuple(mean), tuple(scale), tuple(names), pool)


def file_order(r: dict, model: LinearModel | None) -> list[str]:
    """The dumped files in the fusion's order, or reordered by the file model within its pool."""
    files = r["files"]
    if model is None:
        return [f["path"] for f in files]
    head = sorted(enumerate(files[: model.pool]), key=lambda kf: (-model.score(kf[1]["x"]), kf[0]))
    return [f["path"] for _, f in head] + [f["path"] for f in files[model.pool:]]


def function_order(r: dict, model: LinearModel | None, in_file: bool = False) -> list[str]:
    """The ranking's own function list, or the function model's order of the kept definitions, the prime suspect's
    two best first (as `citation_order` cites them); with `in_file` each file's definitions are reordered inside
    the places the ranking gave that file (`RankConfig.learned_in_file`)."""
    if model is None:
        return r["current"]
    if in_file:
        return in_file_order(r, model)
    group = items(r, "defs", model.pool)
    first = [d for d in group if _place(d, "file_pos") == 0]
    first.sort(key=lambda d: -model.score(d["x"]))
    rest = sorted((d for d in group if d not in first[:2]), key=lambda d: -model.score(d["x"]))
    return list(dict.fromkeys(d["entity"] for d in first[:2] + rest))


def in_file_order(r: dict, model: LinearModel) -> list[str]:
    """The ranking's own function list with each file's kept definitions in the model's order, in the places the
    ranking gave that file."""
    group = items(r, "defs", model.pool)
    current = r["current"]
    queues: dict[str, list[str]] = defaultdict(list)
    for d in sorted(group, key=lambda d: -model.score(d["x"])):
        queue = queues[split_entity(d["entity"])[0]]
        if d["entity"] in current and d["entity"] not in queue:
            queue.append(d["entity"])
    reordered = {e for queue in queues.values() for e in queue}
    return [queues[split_entity(e)[0]].pop(0) if e in reordered else e for e in current]


def prime_first(rows: list[dict], model: LinearModel | None) -> dict[str, float]:
    """How often the prime suspect's first kept definition is a gold one, over the instances where one of its kept
    definitions is (what the first cited line depends on)."""
    hits = total = 0
    for r in rows:
        group = items(r, "defs", 1)
        if not any(d["label"] for d in group):
            continue
        total += 1
        best = max(group, key=lambda d: model.score(d["x"])) if model else group[0]
        hits += best["label"]
    return {"prime_first": hits / (total or 1), "n": float(total)}


def file_scores(rows: list[dict], model: LinearModel | None) -> dict[str, float]:
    """Strict file Acc@1 / Acc@5 and MRR (first gold file)."""
    a1 = a5 = mrr = 0.0
    for r in rows:
        ranked = file_order(r, model)
        gold = set(r["gold"])
        a1 += gold <= set(ranked[:1])
        a5 += gold <= set(ranked[:5])
        first = next((k for k, p in enumerate(ranked) if p in gold), None)
        mrr += 1 / (first + 1) if first is not None else 0.0
    n = len(rows) or 1
    return {"acc1": a1 / n, "acc5": a5 / n, "mrr": mrr / n}


def _locagent(ranked: list[str], gold: list[str], k: int) -> bool:
    top = list(dict.fromkeys(ranked))[:k]
    return sum(any(entity_matches(p, g) for p in top) for g in gold) >= min(k, len(gold))


def function_scores(rows: list[dict], model: LinearModel | None, in_file: bool = False) -> dict[str, float]:
    """LocAgent function Acc@5 / Acc@10 (the first k hold min(k, gold) gold functions), and with `in_file` how often
    the prime suspect's first definition is a gold one (`prime_first`)."""
    n = len(rows) or 1
    ranked = [(function_order(r, model, in_file), r["gold"]) for r in rows]
    out = {f"acc{k}": sum(_locagent(o, g, k) for o, g in ranked) / n for k in (5, 10)}
    return out | ({"prime_first": prime_first(rows, model)["prime_first"]} if in_file else {})


def report(name: str, rows: list[dict], model: LinearModel,
           scorer: Callable[[list[dict], LinearModel | None], dict[str, float]]) -> None:
    """Print today's and the model's figures per split and per language."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r.get("split", "all")].append(r)
        if r.get("language"):
            groups[f"{r['split']}/{r['language']}"].append(r)
    for key in sorted(groups, key=lambda k: (k.count("/"), k)):
        base, ours = scorer(groups[key], None), scorer(groups[key], model)
        figures = "   ".join(f"{m} {base[m]:.3f} -> {ours[m]:.3f}" for m in base)
        print(f"{name:<14} {key:<22} n={len(groups[key]):<5} {figures}")


def main() -> int:
    """Fit both models, score them, and write the ranker file when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-files", type=Path, action="append", required=True)
    parser.add_argument("--train-functions", type=Path, action="append", required=True)
    parser.add_argument("--eval-files", type=Path, action="append", default=[])
    parser.add_argument("--eval-functions", type=Path, action="append", default=[])
    parser.add_argument("--C", type=float, default=0.1, help="inverse regularization strength")
    parser.add_argument("--pool", type=int, default=30, help="best fused files the file model reorders")
    parser.add_argument("--function-pool", type=int, default=10, help="best files whose definitions are ordered")
    parser.add_argument("--drop", action="append", default=[], help="leave a feature out")
    parser.add_argument("--write", type=Path, help="store the models in this ranker file")
    args = parser.parse_args()
    unknown = sorted(set(args.drop) - set(FILE_FEATURES) - set(FUNCTION_FEATURES))
    if unknown:
        parser.error(f"unknown features: {', '.join(unknown)}")
    models = {}
    for key, paths, names, pool in (("files", args.train_files, FILE_FEATURES, args.pool),
                                    ("defs", args.train_functions, FUNCTION_FEATURES, args.function_pool)):
        rows = [r for path in paths for r in load(path, key)]
        model = fit(rows, key, [n for n in names if n not in args.drop], pool, args.C)
        models[key] = (model, len(rows))
        print(f"{key} weights:", ", ".join(f"{n} {w:+.3f}" for n, w in
                                           sorted(zip(model.names, model.weights), key=lambda x: -abs(x[1]))))
        scorer = file_scores if key == "files" else function_scores
        report("train", rows, model, scorer)
        for path in args.eval_files if key == "files" else args.eval_functions:
            report(path.stem, load(path, key), model, scorer)
    if args.write:
        trained = (f"files: {models['files'][1]} and functions: {models['defs'][1]} fix commits of "
                   f"bench/make_training_set.py's repositories; pairwise logistic regression C={args.C}; "
                   f"bench/fit_ranker.py")
        args.write.write_text(LearnedRanker(models["files"][0], models["defs"][0], trained).to_json(), encoding="utf-8")
        print(f"-> {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

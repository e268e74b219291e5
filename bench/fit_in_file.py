"""Fit the function model that orders definitions inside a file (`RankConfig.learned_in_file`) on an eval set's tune half.

    .venv/bin/python bench/function_features.py /work/shared/bench/swebench_lite.jsonl --out /work/bench-out/features/lite-fn.jsonl
    .venv/bin/python bench/function_features.py /work/shared/bench/multilang_dev.jsonl --out /work/bench-out/features/ml-fn.jsonl
    .venv/bin/python bench/fit_in_file.py --train /work/bench-out/features/lite-fn.jsonl \\
        --eval /work/bench-out/features/ml-fn.jsonl [--C 0.1] [--write funnel/localize/ranker.json]

The model is a pairwise logistic regression over `FUNCTION_FEATURES`, as in `bench/fit_ranker.py`, with pairs only
inside one file: each definition the fix changed against each other one of the same file's kept definitions (the
first `symbols_kept` of the fused order), every file weighing the same. It is fitted on the tune half (even
rows) of the training dump only and scored, beside the fused order, on every split of every dump: how often the
prime suspect's first definition is a changed one (`prime_first`, over the instances where one of its kept
definitions is) and LocAgent function Acc@5 / Acc@10 with each file's definitions reordered in their places.
`--write` replaces the `functions` section of a ranker file and keeps its `files` section.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fit_ranker import fit, function_scores, load, report
from funnel.localize.learned import (
    DEFAULT_RANKER,
    FUNCTION_FEATURES,
    LearnedRanker,
    load_ranker,
)

_FUNCTIONS = "; functions section (replaced): "


def main() -> int:
    """Fit on the training dump's tune half, score every dump, write the ranker file when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True, help="function dump whose tune half is fitted on")
    parser.add_argument("--eval", type=Path, action="append", default=[], help="further function dumps to score")
    parser.add_argument("--C", type=float, default=0.1, help="inverse regularization strength")
    parser.add_argument("--pool", type=int, default=10, help="best files whose definitions are ordered")
    parser.add_argument("--drop", action="append", default=[], help="leave a feature out")
    parser.add_argument("--write", type=Path, help="store the model as the functions section of this ranker file")
    args = parser.parse_args()
    unknown = sorted(set(args.drop) - set(FUNCTION_FEATURES))
    if unknown:
        parser.error(f"unknown features: {', '.join(unknown)}")
    rows = load(args.train, "defs")
    tune = [r for r in rows if r.get("split") == "tune"]
    names = [n for n in FUNCTION_FEATURES if n not in args.drop]
    model = fit(tune, "defs", names, args.pool, args.C, in_file=True)
    print("weights:", ", ".join(f"{n} {w:+.3f}" for n, w in sorted(zip(model.names, model.weights),
                                                                   key=lambda x: -abs(x[1]))))
    scorer = partial(function_scores, in_file=True)
    report(args.train.stem, rows, model, scorer)
    for path in args.eval:
        report(path.stem, load(path, "defs"), model, scorer)
    if args.write:
        base = load_ranker(args.write if args.write.exists() else DEFAULT_RANKER)
        files = base.trained_on.split(_FUNCTIONS)[0].removeprefix("files section: ")
        trained = (f"files section: {files}{_FUNCTIONS}in-file order, {len(tune)} instances of "
                   f"{args.train.stem}'s tune half; pairwise logistic regression C={args.C}; bench/fit_in_file.py")
        args.write.write_text(LearnedRanker(base.files, model, trained).to_json(), encoding="utf-8")
        print(f"-> {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

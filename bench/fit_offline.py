"""Refit the offline ranker's fusion weights from features dumped by `tune_offline.py` (no re-ranking).

    .venv/bin/python bench/fit_offline.py /work/bench-out/tune_offline-nomap-tune.json

Fits on the even-numbered half of the dumped instances and reports the odd-numbered half as held out.
Gold is used only to score.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.metrics import function_acc_at_k  # noqa: E402
from funnel.localize.file_kinds import is_doc as _is_doc, is_test as _is_test  # noqa: E402

KEYS = ("file", "symbol", "pagerank", "frame", "mention", "import", "path", "stem", "constant", "message")
GRID = {
    "file": [0.6, 1.0, 1.4],
    "symbol": [0.0, 0.3, 0.6, 1.0],
    "frame": [0.4, 0.8, 1.2, 1.6],
    "mention": [0.0, 0.25, 0.5, 0.8, 1.2],
    "import": [0.0, 0.2, 0.35, 0.6, 1.0],
    "path": [0.0, 0.3, 0.6, 1.0],
    "stem": [0.0, 0.15, 0.3, 0.6],
    "constant": [0.0, 0.25, 0.5, 1.0],
    "message": [0.0, 0.3, 0.6, 1.0],
    "test_factor": [0.1, 0.3, 0.5],
    "doc_factor": [0.2, 0.4, 0.7],
}


def evaluate(rows, w, prime=2):
    a1 = a5 = mrr = 0.0
    fn = fn_n = 0
    for r in rows:
        scored = []
        for c in r["features"]:
            s = sum(w.get(k, 0.0) * v for k, v in c["raw"].items())
            s *= w["test_factor"] if _is_test(c["path"]) else w["doc_factor"] if _is_doc(c["path"]) else 1.0
            scored.append((s, c["path"], c.get("syms", [])))
        scored.sort(key=lambda x: (-x[0], x[1]))
        files = [p for _, p, _ in scored]
        gold = r["gold"][0]
        if files[:1] == [gold]:
            a1 += 1
        if gold in files[:5]:
            a5 += 1
        if gold in files:
            mrr += 1 / (files.index(gold) + 1)
        if r["gold_fn"]:
            ents = []
            for k, (_, p, syms) in enumerate(scored[:5]):
                ents += [f"{p}:{s}" for s in syms[: prime if k == 0 else 1]]
            fn_n += 1
            fn += function_acc_at_k(ents, r["gold_fn"])
    n = len(rows) or 1
    return {"acc1": round(a1 / n, 3), "acc5": round(a5 / n, 3), "mrr": round(mrr / n, 3), "fn5": round(fn / (fn_n or 1), 3)}


def objective(m):
    return m["acc1"] + m["acc5"] + 0.5 * m["mrr"]


def main() -> None:
    data = [json.loads(Path(p).read_text())["results"] for p in sys.argv[1:]]
    rows = [r for d in data for r in d]
    cfg = json.loads(Path(sys.argv[1]).read_text())["summary"]["config"]
    w = {k: cfg.get(f"w_{k}", 0.0) for k in KEYS}
    w["test_factor"], w["doc_factor"] = cfg["test_factor"], cfg["doc_factor"]
    fit, held = rows[0::2], rows[1::2]
    print("start  fit", evaluate(fit, w), "held", evaluate(held, w))
    for _ in range(3):
        for key, values in GRID.items():
            best = max(values, key=lambda v: (objective(evaluate(fit, {**w, key: v})), v == w[key]))
            w[key] = best
    print("fitted", {k: v for k, v in w.items()})
    print("fitted fit", evaluate(fit, w), "held", evaluate(held, w), "all", evaluate(rows, w))
    for prime in (1, 2, 3, 4):
        print("prime symbols", prime, evaluate(rows, w, prime))


if __name__ == "__main__":
    main()

"""Ranking-only sweep of several RankConfig variants at once: each tree's corpus is built once per instance.

    .venv/bin/python bench/sweep_offline.py --split tune '{"base": {}, "b09": {"b": 0.9}}'
    .venv/bin/python bench/sweep_offline.py --split check '{"base": {}, "b09": {"b": 0.9}}' --every 2
    .venv/bin/python bench/sweep_offline.py --map --split tune '{"base": {"cite_file_power": 0}, "m4": {}}'
    .venv/bin/python bench/sweep_offline.py --map --split tune '{"base": {"w_history": 0}, "f70": {"history": {"min_similarity": 70}}}'

Prints file Acc@1, file Acc@5 and function Acc@5 per variant, with the instances whose function Acc@5 and whose
file Acc@5 differ from the first variant's (pattern definitions, no repo map, like
`tune_offline.py --no-map`; with `--map` the repo map's definitions and PageRank, like the harness).
A variant's "history" entry overrides `HistoryConfig` (the past commits of the instance's mirror up to its base
commit, as the eval passes them). Gold fields are read only to score.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.metrics import function_acc_at_k, gold_entities  # noqa: E402
from bench._trees import ensure_tree, mirror_git_dir  # noqa: E402
from bench.tune_offline import walk  # noqa: E402
from funnel.localize.corpus import Corpus, default_cache_dir  # noqa: E402
from funnel.localize.history import HistoryConfig, history_scores  # noqa: E402
from funnel.localize.rank import RankConfig, affected_entries, rank  # noqa: E402
from repomap import build_repo_map  # noqa: E402
from repomap.focus import Focus  # noqa: E402


def _changes(ids: list[str], base: list[float], mine: list[float]) -> tuple[list[str], list[str]]:
    """The ids whose per-instance score `mine` raises / lowers against `base` (booleans count as 0 / 1)."""
    return ([i for i, a, b in zip(ids, base, mine) if b > a], [i for i, a, b in zip(ids, base, mine) if b < a])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", help='JSON object: variant name -> RankConfig overrides, e.g. {"base": {}}')
    parser.add_argument("--data", default="/work/shared/bench/swebench_lite.jsonl")
    parser.add_argument("--split", choices=["tune", "check", "all"], default="tune")
    parser.add_argument("--every", type=int, default=1, help="take every n-th instance of the split")
    parser.add_argument("--map", action="store_true", help="tree-sitter definitions and PageRank from the repo map")
    parser.add_argument("--ids", default="", help="only these instance ids (comma-separated)")
    args = parser.parse_args()
    variants: dict[str, dict] = json.loads(args.variants)
    past_configs = {name: HistoryConfig(**ov.pop("history", {})) for name, ov in variants.items()}
    configs = {name: dataclasses.replace(RankConfig(), **ov) for name, ov in variants.items()}

    rows = [json.loads(line) for line in open(args.data)]
    rows = {"tune": rows[0::2], "check": rows[1::2], "all": rows}[args.split][:: args.every]
    if args.ids:
        wanted = set(args.ids.split(","))
        unknown = wanted - {r["instance_id"] for r in rows}
        if unknown:
            parser.error(f"--ids: not in the {args.split} split: {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r["instance_id"] in wanted]
    totals = {name: [0, 0, 0.0, 0] for name in configs}  # acc1, acc5, fn5 sum, instances with gold functions
    per: dict[str, list[float]] = {name: [] for name in configs}  # function Acc@5 per instance
    per_file: dict[str, list[bool]] = {name: [] for name in configs}  # file Acc@5 per instance
    per_first: dict[str, list[bool]] = {name: [] for name in configs}  # file Acc@1 per instance
    started = time.perf_counter()
    for row in rows:
        root = ensure_tree(row["repo"], row["base_commit"])
        text = row["problem_statement"]
        pagerank = None
        if args.map:
            repo_map = build_repo_map(root, focus=text)
            corpus = Corpus.build(root, [f.path for f in repo_map.files], definitions=repo_map.definitions,
                                  cache_dir=default_cache_dir())
            pagerank = {f.path: f.score for f in repo_map.files}
        else:
            corpus = Corpus.build(root, walk(root), cache_dir=default_cache_dir())
        focus = Focus.from_text(text)
        pasts: dict[HistoryConfig, dict[str, float]] = {}
        for name, config in configs.items():
            if config.w_history and past_configs[name] not in pasts:
                pasts[past_configs[name]] = history_scores(text, mirror_git_dir(row["repo"]), row["base_commit"],
                                                           cache_dir=default_cache_dir(), config=past_configs[name])
        gold_fns = gold_entities(row["gold_functions"])
        for name, config in configs.items():
            history = pasts.get(past_configs[name]) if config.w_history else None
            ranking = rank(corpus, text, focus, pagerank=pagerank, history=history, config=config)
            files = [c.path for c in ranking.candidates[:5]]
            syms = list(dict.fromkeys(f"{p}:{s}" for p, s in affected_entries(ranking) if s))[:5]
            t = totals[name]
            t[0] += all(g in files[:1] for g in row["gold_files"])
            t[1] += all(g in files for g in row["gold_files"])
            fn = function_acc_at_k(syms, gold_fns) if gold_fns else 0.0
            if gold_fns:
                t[2] += fn
                t[3] += 1
            per[name].append(fn)
            per_file[name].append(all(g in files for g in row["gold_files"]))
            per_first[name].append(all(g in files[:1] for g in row["gold_files"]))
    n = len(rows) or 1
    ids = [r["instance_id"] for r in rows]
    first = next(iter(configs))
    for name, (a1, a5, fn, nfn) in totals.items():
        # instances whose function Acc@5, file Acc@5 and file Acc@1 this variant gains / loses against the first one
        gained, lost = _changes(ids, per[first], per[name])
        file_gained, file_lost = _changes(ids, per_file[first], per_file[name])
        top1_gained, top1_lost = _changes(ids, per_first[first], per_first[name])
        print(json.dumps({"split": args.split, "variant": name, "n": len(rows), "file_acc1": round(a1 / n, 3),
                          "file_acc5": round(a5 / n, 3), "fn_acc5": round(fn / (nfn or 1), 3),
                          "fn_gained": gained, "fn_lost": lost, "file_gained": file_gained, "file_lost": file_lost,
                          "top1_gained": top1_gained, "top1_lost": top1_lost}))
    print(json.dumps({"seconds": round(time.perf_counter() - started, 1)}))


if __name__ == "__main__":
    main()

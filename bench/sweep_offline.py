"""Ranking-only sweep of several RankConfig variants at once: each tree's corpus is built once per instance.

    .venv/bin/python bench/sweep_offline.py --split tune '{"base": {}, "b09": {"b": 0.9}}'
    .venv/bin/python bench/sweep_offline.py --split check '{"base": {}, "b09": {"b": 0.9}}' --every 2
    .venv/bin/python bench/sweep_offline.py --map --split tune '{"base": {"cite_file_power": 0}, "m4": {}}'
    .venv/bin/python bench/sweep_offline.py --map --split tune '{"base": {"w_history": 0}, "f70": {"history": {"min_similarity": 70}}}'
    .venv/bin/python bench/sweep_offline.py --map --data ../shared/bench/multilang_dev.jsonl --split tune \
        '{"base": {"definition_coverage": 0}, "c03": {}}'

Prints file Acc@1, file Acc@5, function Acc@5, LocAgent function Acc@10 (`ranked_locations`, as the eval records
it), how often the first cited definition is one the fix changed (`prime_definition`: where the cited lines
start; `prime_lines`: its lines overlap a changed line, for every set with `gold_line_ranges`), MRR and the
share of the project's own code in the best five (`own_code5`) per variant, with the instances each figure gains
or loses against the first variant (pattern definitions, no repo map, like
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

from app.evaluation import locagent  # noqa: E402
from app.evaluation.metrics import (  # noqa: E402
    entity_matches,
    function_acc_at_k,
    gold_entities,
    line_overlap,
    reciprocal_rank,
)
from bench._trees import ensure_tree, mirror_git_dir  # noqa: E402
from bench.tune_offline import walk  # noqa: E402
from funnel.localize.corpus import Corpus  # noqa: E402
from funnel.localize.term_cache import default_cache_dir  # noqa: E402
from funnel.localize.history import HistoryConfig, cochange_partners, history_scores  # noqa: E402
from funnel.localize.citations import affected_entries, citation_order, ranked_locations  # noqa: E402
from funnel.localize.rank import RankConfig, build_corpus, rank  # noqa: E402
from funnel.localize.file_kinds import path_factor  # noqa: E402
from repomap import build_repo_map  # noqa: E402
from repomap.focus import Focus  # noqa: E402


_FIGURES = ("file_acc1", "file_acc3", "file_acc5", "locagent_file_acc5", "locagent_file_acc10", "fn_acc5",
            "locagent_fn_acc10", "prime_definition", "mrr", "own_code5", "prime_lines")
"""What each variant is scored on, per instance (None where the instance has no gold at that level)."""


def _changes(ids: list[str], base: list[float | None], mine: list[float | None]) -> tuple[list[str], list[str]]:
    """The ids whose per-instance score `mine` raises / lowers against `base` (booleans count as 0 / 1)."""
    pairs = [(i, a or 0, b or 0) for i, a, b in zip(ids, base, mine)]
    return [i for i, a, b in pairs if b > a], [i for i, a, b in pairs if b < a]


def _figures(ranking, corpus: Corpus, row: dict) -> dict[str, float | None]:
    """One instance's figures (`_FIGURES`): strict file Acc@1 / @3 / @5 and function Acc@5 of the cited order,
    LocAgent file Acc@5 / @10 and function Acc@10 of the deeper ranking, and whether the first cited definition is
    one the fix changed (where the cited lines start; by its lines, `prime_lines`), the reciprocal rank of the first gold file among the best 10,
    and the share of the best five that is the project's own code (no test, doc, tooling, generated or vendored
    file)."""
    gold_fns = gold_entities(row.get("gold_functions") or {})
    files = [c.path for c in ranking.candidates[:5]]
    deep_files = [c.path for c in ranking.candidates[:10]]
    syms = list(dict.fromkeys(f"{p}:{s}" for p, s in affected_entries(ranking) if s))[:5]
    deep = [locagent.entity(f) for f in ranked_locations(ranking, corpus).functions]
    return {
        "file_acc1": float(all(g in files[:1] for g in row["gold_files"])),
        "file_acc3": float(all(g in files[:3] for g in row["gold_files"])),
        "file_acc5": float(all(g in files for g in row["gold_files"])),
        "locagent_file_acc5": locagent.acc_at_k(deep_files, row["gold_files"], 5),
        "locagent_file_acc10": locagent.acc_at_k(deep_files, row["gold_files"], 10),
        "fn_acc5": function_acc_at_k(syms, gold_fns) if gold_fns else None,
        "locagent_fn_acc10": locagent.acc_at_k(
            deep, locagent.gold_functions(row.get("gold_entities") or row.get("gold_functions") or {}), 10),
        "prime_definition": float(bool(syms) and any(entity_matches(syms[0], g) for g in gold_fns))
        if gold_fns else None,
        "prime_lines": _prime_lines(ranking, row.get("gold_line_ranges")),
        "mrr": reciprocal_rank(deep_files, row["gold_files"]),
        "own_code5": sum(path_factor(p, ranking.config, corpus) == 1.0 for p in files) / (len(files) or 1),
    }


def _prime_lines(ranking, gold: dict | None) -> float | None:
    """Whether the first cited definition's lines overlap a line the fix changed (None: no changed lines)."""
    if not gold:
        return None
    cited = citation_order(ranking)
    if not cited or cited[0][1] is None:
        return 0.0
    cand, hit = cited[0]
    return float(bool(line_overlap({cand.path: [(hit.span.start_line, hit.span.end_line)]}, gold)))


def _mean(values: list[float | None]) -> float:
    known = [v for v in values if v is not None]
    return round(sum(known) / (len(known) or 1), 3)


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
    per: dict[str, dict[str, list[float | None]]] = {name: {f: [] for f in _FIGURES} for name in configs}
    started = time.perf_counter()
    for row in rows:
        root = ensure_tree(row["repo"], row["base_commit"])
        text = row["problem_statement"]
        pagerank = None
        if args.map:
            corpus, pagerank = build_corpus(root, build_repo_map(root, focus=text), default_cache_dir())
        else:
            corpus = Corpus.build(root, walk(root), cache_dir=default_cache_dir())
        focus = Focus.from_text(text)
        pasts: dict[HistoryConfig, dict[str, float]] = {}
        for name, config in configs.items():
            if config.w_history and past_configs[name] not in pasts:
                pasts[past_configs[name]] = history_scores(text, mirror_git_dir(row["repo"]), row["base_commit"],
                                                           cache_dir=default_cache_dir(), config=past_configs[name])
        for name, config in configs.items():
            history = pasts.get(past_configs[name]) if config.w_history else None

            def partners(paths, hc=past_configs[name]):
                return cochange_partners(paths, mirror_git_dir(row["repo"]), row["base_commit"],
                                         cache_dir=default_cache_dir(), config=hc)
            ranking = rank(corpus, text, focus, pagerank=pagerank, history=history, partners=partners, config=config)
            for figure, value in _figures(ranking, corpus, row).items():
                per[name][figure].append(value)
    ids = [r["instance_id"] for r in rows]
    first = next(iter(configs))
    for name, figures in per.items():
        line: dict = {"split": args.split, "variant": name, "n": len(rows)}
        line.update({figure: _mean(values) for figure, values in figures.items()})
        # the instances whose figures this variant gains / loses against the first variant
        for figure, label in (("fn_acc5", "fn"), ("file_acc5", "file"), ("file_acc1", "top1"),
                              ("locagent_file_acc5", "la5"),
                              ("locagent_fn_acc10", "fn10"), ("prime_definition", "prime"),
                              ("prime_lines", "lines")):
            line[f"{label}_gained"], line[f"{label}_lost"] = _changes(ids, per[first][figure], figures[figure])
        print(json.dumps(line))
    print(json.dumps({"seconds": round(time.perf_counter() - started, 1)}))


if __name__ == "__main__":
    main()

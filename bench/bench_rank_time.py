"""Time the ranking of one report after warm-up, for RankConfig variants side by side (alternated in one process).

    .venv/bin/python bench/bench_rank_time.py --repo django/django --every 10 --limit 8 \
        '{"before": {"definition_coverage": 0}, "now": {}}'

Issue 18's budget: the ranking of one report ≤ 1 s on django after warm-up. For each chosen SWE-bench Lite instance
of `--repo` the tree's corpus and repo map are built once (not timed), one untimed ranking per variant warms the
caches, then each variant ranks the report `--repeat` times, the variants alternating. Prints each variant's
median and maximum and the ratio of each median to the first variant's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._trees import ensure_tree  # noqa: E402
from funnel.localize.rank import RankConfig, build_corpus, rank  # noqa: E402
from funnel.localize.term_cache import default_cache_dir  # noqa: E402
from repomap import build_repo_map  # noqa: E402
from repomap.focus import Focus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", help='JSON object: variant name -> RankConfig overrides, e.g. {"base": {}}')
    parser.add_argument("--data", default="/work/shared/bench/swebench_lite.jsonl")
    parser.add_argument("--repo", default="django/django")
    parser.add_argument("--every", type=int, default=10, help="take every n-th instance of the repository")
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    configs = {name: dataclasses.replace(RankConfig(), **ov) for name, ov in json.loads(args.variants).items()}
    rows = [r for r in map(json.loads, open(args.data)) if r["repo"] == args.repo][:: args.every][: args.limit]
    if not rows:
        parser.error(f"--repo {args.repo}: no instance in {args.data}")
    times: dict[str, list[float]] = {name: [] for name in configs}
    for row in rows:
        root = ensure_tree(row["repo"], row["base_commit"])
        text = row["problem_statement"]
        corpus, pagerank = build_corpus(root, build_repo_map(root, focus=text), default_cache_dir())
        focus = Focus.from_text(text)
        for config in configs.values():
            rank(corpus, text, focus, pagerank=pagerank, config=config)
        for _ in range(args.repeat):
            for name, config in configs.items():
                started = time.perf_counter()
                rank(corpus, text, focus, pagerank=pagerank, config=config)
                times[name].append(time.perf_counter() - started)
    first = statistics.median(next(iter(times.values())))
    for name, values in times.items():
        median = statistics.median(values)
        print(json.dumps({"variant": name, "rankings": len(values), "median_s": round(median, 3),
                          "max_s": round(max(values), 3), "ratio": round(median / first, 2)}))


if __name__ == "__main__":
    main()

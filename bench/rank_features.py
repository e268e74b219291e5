"""Dump the learned reranker's features of the fused ranking's best files, for fitting and for choosing a model.

    .venv/bin/python bench/rank_features.py DATA.jsonl --out /work/bench-out/features/lite.jsonl [--jobs 2]

DATA is eval-format JSONL (`repo`, `base_commit`, `problem_statement`, `gold_files`): SWE-bench Lite, the
multilang set, or the fix commits of `bench/make_training_set.py`. Each instance is ranked as the offline
investigator ranks it (repo map, history up to the base commit, the hand-tuned fusion with the learned reranker
off) and one line is written per instance: its id, repository, language and split, and for each of the best
`--pool` files the features of `funnel.localize.learned.FILE_FEATURES` and whether the fix changed it. Gold is read
only for that label. Resumable: instances already in OUT are skipped.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._trees import ensure_tree, mirror_git_dir
from funnel.localize.history import HistorySource
from funnel.localize.learned import file_features
from funnel.localize.rank import RankConfig, rank_report
from repomap import build_repo_map

POOL = 40


def instance_features(row: dict, pool: int = POOL, history: bool = True) -> dict:
    """The feature line of one instance."""
    root = ensure_tree(row["repo"], row["base_commit"])
    text = row["problem_statement"]
    repo_map = build_repo_map(root, focus=text)
    source = HistorySource(mirror_git_dir(row["repo"]), row["base_commit"]) if history else None
    config = dataclasses.replace(RankConfig(), learned_files=False)
    ranking, corpus = rank_report(text, root, repo_map, config=config, history=source)
    cands = [c for c in ranking.candidates[:pool] if c.score > 0]
    top = cands[0].score if cands else 0.0
    gold = set(row["gold_files"])
    return {
        "id": row["instance_id"], "repo": row["repo"], "language": row.get("language", ""),
        "gold": sorted(gold), "confidence": ranking.confidence,
        "files": [{"path": c.path, "label": int(c.path in gold),
                   "x": {k: round(v, 5) for k, v in file_features(c, k_, top, corpus, config).items() if v}}
                  for k_, c in enumerate(cands)],
    }


def dump_line(row: dict, make: Callable[[], dict]) -> str:
    """The JSON line `make()` builds for an instance, or one naming the instance and the error it raised."""
    try:
        return json.dumps(make())
    except Exception as exc:  # noqa: BLE001 - one broken tree must not stop the dump
        return json.dumps({"id": row["instance_id"], "error": f"{type(exc).__name__}: {exc}"})


def _work(args: tuple[dict, int, bool]) -> str:
    row, pool, history = args
    return dump_line(row, lambda: instance_features(row, pool, history))


def main() -> int:
    """Rank every instance of DATA not yet in OUT and append its feature line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pool", type=int, default=POOL)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--no-history", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.open(encoding="utf-8") if line.strip()]
    for k, row in enumerate(rows):
        row["split"] = "tune" if k % 2 == 0 else "check"
    if args.limit:
        rows = rows[: args.limit]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if args.out.exists():
        done = {json.loads(line)["id"] for line in args.out.open(encoding="utf-8") if '"error"' not in line}
    todo = [(r, args.pool, not args.no_history) for r in rows if r["instance_id"] not in done]
    split = {r["instance_id"]: r["split"] for r in rows}
    with args.out.open("a", encoding="utf-8") as out, ProcessPoolExecutor(args.jobs) as workers:
        # the executor's workers may start the repo map's own parse pool (a multiprocessing.Pool's may not)
        for k, line in enumerate(workers.map(_work, todo)):
            record = json.loads(line)
            record["split"] = split[record["id"]]
            out.write(json.dumps(record) + "\n")
            out.flush()
            if "error" in record:
                print("ERROR", record["id"], record["error"], file=sys.stderr, flush=True)
            if k % 25 == 0:
                print(f"{k + 1}/{len(todo)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

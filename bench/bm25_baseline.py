"""Score the plain BM25 file baseline alone on a data set, to check it against a published reference.

Usage: python bench/bm25_baseline.py [--data DATA.jsonl] [--repos bench/repos.toml] [--py-only]
                                     [--out /work/bench-out/bm25-baseline.jsonl]
Trees come from the same cache as `bugsleuth eval`. Prints file Acc@1/3/5 and MRR over the instances.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.evaluation import metrics  # noqa: E402
from app.evaluation.baseline import PYTHON_ONLY, SOURCE_EXTENSIONS, bm25_rank  # noqa: E402
from app.evaluation.data import load_instances, load_repo_table  # noqa: E402
from app.evaluation.trees import TreeCache, default_cache_dir  # noqa: E402

KEYS = ("file_acc_at_1", "file_acc_at_3", "file_acc_at_5", "mrr")


def main() -> int:
    """Rank, score, print the means."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench/swebench_lite.jsonl"))
    parser.add_argument("--repos", type=Path, default=Path(__file__).resolve().parent / "repos.toml")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--py-only", action="store_true", help="only .py files (the reference definition)")
    parser.add_argument("--out", type=Path, default=Path("/work/bench-out/bm25-baseline.jsonl"))
    args = parser.parse_args()
    table = load_repo_table(args.repos)
    cache = TreeCache(args.cache or default_cache_dir())
    extensions = PYTHON_ONLY if args.py_only else SOURCE_EXTENSIONS
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with args.out.open("w", encoding="utf-8") as out:
        for inst in load_instances(args.data):
            tree = cache.materialize(inst.repo, table.git_dir(inst.repo), inst.base_commit)
            ranked = bm25_rank(tree.path, inst.problem_statement, extensions=extensions, top=50)
            score = metrics.score_instance(ranked, inst.gold.files).as_dict()
            rows.append(score)
            out.write(json.dumps({"instance_id": inst.instance_id, "ranked": ranked[:10], **score}) + "\n")
    means = {k: round(sum(r[k] for r in rows) / len(rows), 3) for k in KEYS}
    print(json.dumps({"n": len(rows), "extensions": "py" if args.py_only else "repo map", **means}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Line-level figures of an eval results directory: does the first cited range point at a line the fix changed?

    .venv/bin/python bench/line_metrics.py /work/bench-out/reason-tune40 --data /work/shared/bench/swebench_lite.jsonl
    .venv/bin/python bench/line_metrics.py OUT --data DATA --compare /work/bench-out/eval-300-anchor   # same ids
    .venv/bin/python bench/line_metrics.py OUT --data /work/shared/bench/multilang_dev.jsonl --by language

Definitions (identical to the ones `bugsleuth eval` is getting): a range [a, b] hits when it overlaps any gold
[s, e] of the same file (`gold_line_ranges`). Hit@1: the first cited range of the first file hits; Hit@1 (≤15):
the same with that range at most 15 lines wide (wider counts as a miss); Hit@any: some cited range hits; the
median width of the first range. `--compare` also checks that the file and function top fives are unchanged.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.metrics import normalize_path  # noqa: E402

NARROW = 15
"""Widest first range that still counts for Hit@1 (≤15)."""


def _hits(ranges: list[list[int]], gold: list[list[int]]) -> bool:
    return any(a <= g[-1] and g[0] <= b for a, b in ranges for g in gold)


def score(record: dict, gold: dict[str, list[list[int]]]) -> dict[str, float] | None:
    """The line figures of one result record (None when it has no gold ranges or no output)."""
    gold = {normalize_path(p): r for p, r in gold.items() if r}
    files, cited = record.get("ranked_files") or [], record.get("line_ranges") or {}
    if not gold or record.get("error"):
        return None
    cited = {normalize_path(p): r for p, r in cited.items()}
    first = cited.get(normalize_path(files[0]), [[0, -1]])[0] if files else [0, -1]
    width = first[-1] - first[0] + 1
    hit1 = _hits([first], gold.get(normalize_path(files[0]), [])) if files else False
    anyhit = any(_hits(r, gold.get(p, [])) for p, r in cited.items())
    return {"hit1": float(hit1), "hit1_narrow": float(hit1 and width <= NARROW), "hit_any": float(anyhit),
            "width": float(width), "file1": float(bool(files) and normalize_path(files[0]) in gold)}


def _top5(record: dict) -> tuple[list[str], list[str]]:
    files = list(dict.fromkeys(record.get("ranked_files") or []))[:5]
    funcs = list(dict.fromkeys(record.get("ranked_functions") or []))[:5]
    return files, funcs


def summarize(rows: list[dict[str, float]]) -> dict[str, float]:
    """Means of the hit figures and the median first width."""
    n = len(rows)
    out = {k: sum(r[k] for r in rows) / n for k in ("hit1", "hit1_narrow", "hit_any", "file1")} if n else {}
    out["median_width"] = statistics.median(r["width"] for r in rows) if rows else 0.0
    out["n"] = n
    return out


def _load(path: Path) -> dict[str, dict]:
    return {r["instance_id"]: r for r in (json.loads(x) for x in path.read_text().splitlines() if x.strip())}


def main() -> None:
    """Print the figures (and, with --compare, the same ones for the other run and the top-five check)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="eval output directory (results.jsonl)")
    ap.add_argument("--data", type=Path, required=True, help="the JSONL the eval ran (gold_line_ranges)")
    ap.add_argument("--compare", type=Path, help="another eval output directory, scored on the same ids")
    ap.add_argument("--by", default="", help="a data field to break the figures down by (e.g. language)")
    args = ap.parse_args()
    data = {r["instance_id"]: r for r in (json.loads(x) for x in args.data.read_text().splitlines() if x.strip())}
    mine = {k: v for k, v in _load(args.out / "results.jsonl").items() if k in data}
    other = _load(args.compare / "results.jsonl") if args.compare else {}
    ids = [i for i in mine if not other or i in other]
    runs = {"this": mine} | ({"compare": other} if other else {})
    for label, records in runs.items():
        groups: dict[str, list[dict[str, float]]] = defaultdict(list)
        for i in ids:
            s = score(records[i], data[i].get("gold_line_ranges") or {})
            if s is not None:
                groups["all"].append(s)
                if args.by:
                    groups[str(data[i].get(args.by))].append(s)
        for group, rows in sorted(groups.items()):
            print(json.dumps({"run": label, "group": group} | {k: round(v, 3) for k, v in summarize(rows).items()}))
    if other:
        files_same = sum(_top5(mine[i])[0] == _top5(other[i])[0] for i in ids)
        funcs_same = sum(set(_top5(mine[i])[1]) == set(_top5(other[i])[1]) for i in ids)
        order_same = sum(_top5(mine[i])[1] == _top5(other[i])[1] for i in ids)
        print(json.dumps({"ids": len(ids), "file_top5_identical": files_same, "function_top5_same_set": funcs_same,
                          "function_top5_same_order": order_same}))


if __name__ == "__main__":
    main()

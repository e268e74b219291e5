"""The funnel harness on real repositories: tool calls, model requests, terminations and time per investigation.

    .venv/bin/python bench/bench_harness.py --limit 12 --explorer offline --explorer scripted

Runs `funnel.investigate` on SWE-bench Lite instances whose tree is already in the shared cache (no
materialization), explorers side by side on the same instances. Gold fields are never read.
Output: a table on stdout and /work/bench-out/bench_harness.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._trees import tree_path  # noqa: E402
from funnel import investigate_sync  # noqa: E402
from schemas.enums import Source  # noqa: E402
from schemas.report import BugReport  # noqa: E402

DATA = Path("/work/shared/bench/swebench_lite.jsonl")
OUT = Path("/work/bench-out/bench_harness.json")


def main() -> None:
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=12)
    ap.add_argument("--explorer", action="append", default=None)
    args = ap.parse_args()
    explorers = args.explorer or ["offline", "scripted"]
    instances = []
    for line in DATA.read_text().splitlines():
        row = json.loads(line)
        root = tree_path(row["repo"], row["base_commit"])
        if root.is_dir():
            instances.append((row["instance_id"], root, row["problem_statement"]))
        if len(instances) >= args.limit:
            break
    runs = []
    for iid, root, text in instances:
        title, _, body = text.strip().partition("\n")
        report = BugReport(title=title[:500], body=body[:200_000], source=Source.eval)
        for name in explorers:
            started = time.perf_counter()
            result = investigate_sync(report, root, explorer=name)
            dx = result.diagnosis
            calls = sum(1 for e in result.events if e.kind == "tool_call")
            runs.append({"instance": iid, "explorer": name, "termination": dx.termination.reason.value,
                         "tool_calls": dx.stats.tool_calls, "all_calls": calls,
                         "requests": sum(1 for e in result.events if e.kind == "request"),
                         "attempts": dx.stats.attempts, "seconds": round(time.perf_counter() - started, 2)})  # fmt: skip
            print(json.dumps(runs[-1]), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(runs, indent=1))
    print("\n| explorer | runs | tool calls mean / max | all calls incl. control, max | requests mean | done | seconds median |")
    print("|---|---|---|---|---|---|---|")
    for name in explorers:
        rs = [r for r in runs if r["explorer"] == name]
        if not rs:
            continue
        term = Counter(r["termination"] for r in rs)
        print(f"| {name} | {len(rs)} | {statistics.mean(r['tool_calls'] for r in rs):.1f} / {max(r['tool_calls'] for r in rs)} "
              f"| {max(r['all_calls'] for r in rs)} | {statistics.mean(r['requests'] for r in rs):.1f} "
              f"| {term['done']}/{len(rs)} | {statistics.median(r['seconds'] for r in rs):.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()

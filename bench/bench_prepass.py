"""Cost of the lexical pre-pass a model explorer gets: seconds per report on real trees (no model is called).

    .venv/bin/python bench/bench_prepass.py --limit 5

For SWE-bench Lite instances whose tree is in the shared cache: build the repo map (as the harness does), then
`funnel.prepass.run_prepass` twice (first call: term cache as found; second: warm) and `RepoMap.refocus` alone.
Gold fields are never read. Output: a table on stdout and /work/bench-out/bench_prepass.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._trees import tree_path  # noqa: E402
from funnel.localize.prepass import run_prepass  # noqa: E402
from repomap import build_repo_map  # noqa: E402
from repomap.focus import Focus  # noqa: E402

DATA = Path("/work/shared/bench/swebench_lite.jsonl")
OUT = Path("/work/bench-out/bench_prepass.json")


def main() -> None:
    """Run the measurement and print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=5)
    args = ap.parse_args()
    rows = []
    for line in DATA.read_text().splitlines():
        row = json.loads(line)
        root = tree_path(row["repo"], row["base_commit"])
        if not root.is_dir():
            continue
        text = row["problem_statement"]
        focus = Focus.from_text(text)
        t = time.perf_counter()
        repo_map = build_repo_map(root, focus=focus)
        map_s = time.perf_counter() - t
        t = time.perf_counter()
        first = run_prepass(text, root, repo_map, focus=focus)
        first_s = time.perf_counter() - t
        t = time.perf_counter()
        run_prepass(text, root, repo_map, focus=focus)
        warm_s = time.perf_counter() - t
        t = time.perf_counter()
        repo_map.refocus(focus)
        refocus_s = time.perf_counter() - t
        rows.append({"instance": row["instance_id"], "files": len(repo_map.files), "map_s": round(map_s, 2),
                     "prepass_first_s": round(first_s, 2), "prepass_warm_s": round(warm_s, 2),
                     "refocus_s": round(refocus_s, 2), "candidates": len(first.candidates)})  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
        if len(rows) >= args.limit:
            break
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(rows, indent=1))
    med = {k: statistics.median(r[k] for r in rows) for k in ("files", "map_s", "prepass_first_s", "prepass_warm_s", "refocus_s")}
    print("\n| instances | files median | map s | pre-pass s (first) | pre-pass s (warm) | refocus s |")
    print("|---|---|---|---|---|---|")
    print(f"| {len(rows)} | {med['files']:.0f} | {med['map_s']:.2f} | {med['prepass_first_s']:.2f} | "
          f"{med['prepass_warm_s']:.2f} | {med['refocus_s']:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()

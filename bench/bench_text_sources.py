"""Warm ranking of a tree full of files of languages with no grammar (Groovy; Kotlin, Scala until the 49th round),
this code beside a baseline checkout.

Usage:
  python bench/bench_text_sources.py [--tree /work/bench-out/groovy-tree] [--files 20000] [--baseline /work/anchor]
                                     [--repeat 5] [--json FILE]

The tree (built when absent, outside this repository): `--files` Groovy files of 120 lines in 200 packages and
20 Python modules, every file and directory dated long ago, as a checked-out tree is. Per code tree (this
checkout, then `--baseline`, alternating `--repeat` times), a new process with its own cache directory maps the
tree and ranks one report once (cold), then ranks it `WARM` more times against the warm map and index; the
median warm ranking is reported, and the ratio of this checkout's to the baseline's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
WARM = 5
REPORT = "F17.f17 returns the wrong value for negative input in package m42"
_PROBE = """
import json, sys, time
from pathlib import Path
from funnel.localize.rank import rank_report
from repomap import build_repo_map

def main():
    root = Path(sys.argv[1])
    text = sys.argv[2]
    started = time.perf_counter()
    rank_report(text, root, build_repo_map(root, focus=text))
    cold = time.perf_counter() - started
    warm = []
    for _ in range(int(sys.argv[3])):
        started = time.perf_counter()
        ranking, _ = rank_report(text, root, build_repo_map(root, focus=text))
        warm.append(time.perf_counter() - started)
    print(json.dumps({"cold": cold, "warm": warm, "first": ranking.candidates[0].path}))

if __name__ == "__main__":
    main()
"""


def build_tree(root: Path, files: int) -> None:
    """The synthetic tree (once)."""
    if (root / ".complete").exists():
        return
    per_package = max(1, files // 200)
    for n in range(files):
        package = root / "src" / f"m{n // per_package}"
        package.mkdir(parents=True, exist_ok=True)
        body = "".join(f"    static def f{n}_{k}(int x) {{ x * {k} + {n} }}\n" for k in range(118))
        (package / f"F{n % per_package}.groovy").write_text(f"package m{n // per_package}\n\nclass F{n} {{\n{body}}}\n")
    (root / "py").mkdir(exist_ok=True)
    for n in range(20):
        (root / "py" / f"mod{n}.py").write_text(f"def helper_{n}(x):\n    return x + {n}\n")
    long_ago = 1_600_000_000_000_000_000
    for path in [*root.rglob("*"), root]:
        os.utime(path, ns=(long_ago, long_ago))
    (root / ".complete").touch()


def run(code: Path, tree: Path) -> dict:
    """One process of `code`: cold and warm rankings with a cache of its own."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPATH": str(code), "BUGSLEUTH_CACHE_DIR": cache}
        probe = Path(cache) / "probe.py"
        probe.write_text(_PROBE)
        out = subprocess.run([sys.executable, str(probe), str(tree), REPORT, str(WARM)], env=env, cwd=code,
                             capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    """Build the tree, run both codes alternately, print and optionally write the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, default=Path("/work/bench-out/groovy-tree"))
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--baseline", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    build_tree(args.tree, args.files)
    codes = {"this": HERE} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    runs: dict[str, list[dict]] = {name: [] for name in codes}
    for _ in range(args.repeat):
        for name, code in codes.items():
            runs[name].append(run(code, args.tree))
    figures = {name: {"warm_median_s": round(statistics.median(w for r in rs for w in r["warm"]), 3),
                      "cold_median_s": round(statistics.median(r["cold"] for r in rs), 2),
                      "first": rs[-1]["first"]} for name, rs in runs.items()}
    if "baseline" in figures:
        figures["warm_ratio"] = round(figures["this"]["warm_median_s"] / figures["baseline"]["warm_median_s"], 3)
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"figures": figures, "runs": runs}, indent=1))


if __name__ == "__main__":
    main()

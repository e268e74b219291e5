"""Monorepo scale: map and investigate a tree of tens of thousands of files, this code beside a baseline checkout.

Usage:
  python bench/bench_monorepo.py --trees /work/mono [--sizes 5000,20000,44000] [--baseline /work/anchor]
                                 [--mirrors /work/.mirror] [--repeat N] [--json FILE]

Trees: `--trees DIR` holds `mono-N` for each size N, built by `bench/build_monorepo.py --limit-files N` from the
fetched repositories when absent (outside this repository; never commit them). Per size and per code tree (this
checkout, then `--baseline`), each step runs in a new process with its own cache directory:
- cold map: `bugsleuth map` with an empty cache (wall time, peak RSS);
- warm map: the same again (with `--repeat N` both N times, the codes alternating: the medians and every run);
- a first investigation (another report: it builds the ranking's index of a large tree), then per report a first
  investigation (`--no-history`; map and index cached, the report new) and the same again: wall time, tool calls,
  the file named first;
- find_symbol: one lookup of a class name and one of a method name in a process whose map is warm.
The reports are about one Java class, one Go function and one Rust method of the monorepo; the file each names is
checked against the file the report is about (written with the report, not taken from any data set).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPORTS = [
    ("java", "google+gson/gson/src/main/java/com/google/gson/stream/JsonReader.java",
     "JsonReader.nextInt() rejects a number written with an exponent\n\nReading `1e2` with "
     "`JsonReader.nextInt()` in lenient mode throws:\n\n    java.lang.NumberFormatException: Expected an int but "
     "was 1e2 at line 1 column 4 path $\n\nThe value is a whole number, so peekNumber and nextInt should accept "
     "it the way nextLong does.\n"),
    ("go", "gin-gonic+gin/context.go",
     "c.ShouldBindQuery ignores the `form` default tag for slices\n\nWith `Tags []string "
     "form:\"tags,default=a\"` and no `tags` query parameter, `ShouldBindQuery` in the gin Context leaves the "
     "slice empty instead of the default. Binding a plain string field honours the default.\n"),
    ("rust", "clap-rs+clap/clap_builder/src/builder/command.rs",
     "Command::try_get_matches_from panics when a subcommand has the same alias as an argument\n\n"
     "thread 'main' panicked at clap_builder/src/builder/debug_asserts.rs: Command app: long alias `run` is "
     "already in use\n\nCalling `Command::try_get_matches_from` should return an error, not panic, "
     "and `Command::debug_assert` should name the subcommand.\n"),
]
"""(language, the file the report is about, the report)."""
WARM_UP = ("serde_json::from_str drops the error position\n\nWith `#[serde(flatten)]` the error from "
           "`serde_json::from_str` says `line 0 column 0`; `Deserializer::deserialize_map` should keep the position.\n")
"""The first investigation of each tree (it builds the corpus index); the measured reports come after it."""
SYMBOLS = ("JsonReader", "nextInt")
"""Names looked up by the find_symbol step."""

CLI = [sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())"]
"""The `bugsleuth` command of whichever checkout PYTHONPATH names."""
_LOOKUP = """
import sys, time
from repomap import build_repo_map
from funnel.tools import Sandbox
from funnel.tools._symbols import find_symbol
m = build_repo_map(sys.argv[1])
sb = Sandbox(sys.argv[1])
out = []
for name in sys.argv[2:]:
    t = time.perf_counter(); r = find_symbol(sb, m.index, name); first = time.perf_counter() - t
    t = time.perf_counter(); find_symbol(sb, m.index, name); again = time.perf_counter() - t
    out.append([name, len(r.hits), round(first * 1000, 1), round(again * 1000, 1)])
print(out)
"""


def run_one(cmd: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in MB, stdout) of `cmd`, run under a fresh helper process so that the peak RSS of
    its children is the command's own."""
    wrapper = [sys.executable, "-c", "import os, resource, subprocess, sys, time; t = time.perf_counter(); "
               "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); w = time.perf_counter() - t; "
               "r = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss; "
               "sys.stdout.write(f'{w} {r}\\n' + p.stdout)", *cmd]
    # in the checkout itself: `python -c` puts the working directory first on sys.path, before PYTHONPATH
    done = subprocess.run(wrapper, env=env, capture_output=True, text=True, cwd=env["PYTHONPATH"])
    head, _, out = done.stdout.partition("\n")
    wall, rss = head.split()
    return float(wall), int(rss) // 1024, out


def investigate(tree: Path, report: str, env: dict[str, str]) -> dict:
    """One offline investigation: wall time, tool calls and the files named."""
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as fh:
        fh.write(report)
    wall, rss, out = run_one([*CLI, "investigate", str(tree), "--report", fh.name,
                              "--no-history", "--json", "--quiet"], env)
    os.unlink(fh.name)
    try:
        result = json.loads(out)
    except json.JSONDecodeError:
        return {"s": round(wall, 2), "error": out[-300:]}
    files = list(dict.fromkeys(f["path"] for f in result.get("affected_files", [])))
    calls = result.get("stats", {}).get("tool_calls")
    return {"s": round(wall, 2), "rss_mb": rss, "files": files[:3], "tool_calls": calls}


def _env(code: Path, cache: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(code), BUGSLEUTH_CACHE_DIR=str(cache))


def map_rows(codes: list[Path], tree: Path, caches: list[Path], repeat: int) -> list[dict]:
    """Cold and warm map of each code on `tree`, `repeat` times, the codes alternating (the machine's speed drifts
    from minute to minute): the medians, every run, and the last run's cache left in `caches` for the next steps."""
    runs: list[dict[str, list]] = [{"cold": [], "cold_rss": [], "warm": [], "warm_rss": []} for _ in codes]
    cli = [*CLI, "map", str(tree), "--tokens", "1024"]
    for _ in range(repeat):
        for code, cache, out in zip(codes, caches, runs):
            shutil.rmtree(cache, ignore_errors=True)
            cache.mkdir(parents=True)
            wall, rss, _ = run_one(cli, _env(code, cache))
            out["cold"].append(round(wall, 2))
            out["cold_rss"].append(rss)
            wall, rss, _ = run_one(cli, _env(code, cache))
            out["warm"].append(round(wall, 2))
            out["warm_rss"].append(rss)
    return [{"cold_map_s": statistics.median(r["cold"]), "cold_map_rss_mb": max(r["cold_rss"]),
             "warm_map_s": statistics.median(r["warm"]), "warm_map_rss_mb": max(r["warm_rss"]),
             "cold_map_runs_s": r["cold"], "warm_map_runs_s": r["warm"]} for r in runs]


def bench_code(code: Path, tree: Path, cache: Path, sizes_note: str, maps: dict, reports: list = REPORTS) -> dict:
    """Every step after the maps (`maps`, from `map_rows`) for one code checkout on one tree, its map cached in
    `cache`, investigating each of `reports`."""
    env = _env(code, cache)
    row: dict = {"code": str(code), "tree": sizes_note, **maps}
    row["first_investigation"] = investigate(tree, WARM_UP, env)
    runs = {}
    for lang, expected, report in reports:
        first = investigate(tree, report, env)  # a new report: map and index cached, this focus never seen
        second = investigate(tree, report, env)  # the same report again
        first["right_file"] = second["right_file"] = bool(second.get("files")) and second["files"][0] == expected
        runs[lang] = {"first": first, "second": second}
    row["investigations"] = runs
    row["new_report_median_s"] = statistics.median(r["first"]["s"] for r in runs.values())
    row["same_report_again_median_s"] = statistics.median(r["second"]["s"] for r in runs.values())
    row["first_investigation_s"] = row["first_investigation"]["s"]
    _, _, out = run_one([sys.executable, "-c", _LOOKUP, str(tree), *SYMBOLS], env)
    row["find_symbol"] = out.strip()
    return row


def _fmt(row: dict, key: str) -> str:
    value = row.get(key)
    return "–" if value is None else (f"{value:.2f} s" if key.endswith("_s") else f"{value} MB")


def summary(rows: list[dict]) -> str:
    """The issue's table on the largest tree (this code beside the baseline, with their ratio) and the growth curve."""
    by_tree: dict[str, list[dict]] = {}
    for row in rows:
        by_tree.setdefault(row["tree"], []).append(row)
    largest = list(by_tree)[-1]
    pair = by_tree[largest]
    head = "| step | " + " | ".join(Path(r["code"]).name for r in pair) + (" | ratio |" if len(pair) > 1 else " |")
    lines = [f"Tree {largest}:", "", head, "|---" * (len(pair) + 1 + (len(pair) > 1)) + "|"]
    steps = [("cold map", "cold_map_s"), ("warm map, new process", "warm_map_s"), ("peak RSS of map", "cold_map_rss_mb"),
             ("first investigation of the tree (builds the ranking's index)", "first_investigation_s"),
             ("one investigation of a new report, map cached (median)", "new_report_median_s"),
             ("the same report again (median)", "same_report_again_median_s")]
    for label, key in steps:
        cells = [_fmt(r, key) for r in pair]
        ratio = f" | {pair[0][key] / pair[1][key]:.2f}×" if len(pair) > 1 and pair[1].get(key) else ""
        lines.append(f"| {label} | " + " | ".join(cells) + ratio + " |")
    right = [" ".join(f"{lang} {'✓' if run['second']['right_file'] else '✗'}" for lang, run in r["investigations"].items())
             for r in pair]
    lines.append("| the right file named | " + " | ".join(right) + (" | |" if len(pair) > 1 else " |"))
    lines.append("| find_symbol (name, hits, first ms, again ms) | " + " | ".join(r["find_symbol"] for r in pair)
                 + (" | |" if len(pair) > 1 else " |"))
    lines += ["", *(f"{Path(r['code']).name}: cold map runs {r['cold_map_runs_s']} s, warm {r['warm_map_runs_s']} s"
                    for r in pair)]
    lines += ["", "| tree | code | cold map | cold RSS | warm map | warm RSS | new report, map cached |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for tree, group in by_tree.items():
        for r in group:
            lines.append(f"| {tree} | {Path(r['code']).name} | {_fmt(r, 'cold_map_s')} | {_fmt(r, 'cold_map_rss_mb')} | "
                         f"{_fmt(r, 'warm_map_s')} | {_fmt(r, 'warm_map_rss_mb')} | "
                         f"{_fmt(r, 'new_report_median_s')} |")
    return "\n".join(lines)


def ensure_tree(trees: Path, size: int, mirrors: Path) -> Path:
    """The monorepo of `size` files under `trees`, built when absent."""
    tree = trees / f"mono-{size}"
    if not tree.exists():
        subprocess.run([sys.executable, str(HERE / "build_monorepo.py"), "--out", str(tree), "--mirrors", str(mirrors),
                        "--limit-files", str(size)], check=True, stdout=subprocess.DEVNULL)
    return tree


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print one JSON object per (size, code) and a summary table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=Path, required=True)
    parser.add_argument("--sizes", default="5000,20000,44000")
    parser.add_argument("--baseline", type=Path, help="a checkout of the previous commit, run side by side")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--full-only", action="store_true",
                        help="all three reports only on the largest tree; the smaller ones investigate the first")
    parser.add_argument("--repeat", type=int, default=1,
                        help="cold and warm maps run this many times, the codes alternating; the medians are reported")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    codes = [HERE.parent] + ([args.baseline.resolve()] if args.baseline else [])
    rows = []
    sizes = [int(s) for s in args.sizes.split(",")]
    for size in sizes:
        tree = ensure_tree(args.trees, size, args.mirrors)
        files = sum(1 for _ in tree.rglob("*") if _.is_file())
        reports = REPORTS if size == max(sizes) or not args.full_only else REPORTS[:1]
        with tempfile.TemporaryDirectory(prefix="bench-mono-") as tmp:
            caches = [Path(tmp) / str(k) for k in range(len(codes))]
            maps = map_rows(codes, tree, caches, args.repeat)
            for code, cache, measured in zip(codes, caches, maps):
                row = bench_code(code, tree, cache, f"{size} ({files} files)", measured, reports)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

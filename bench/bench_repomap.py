"""Benchmark the repo map against Aider's RepoMap and universal-ctags, side by side in one run.

    .venv/bin/python bench/bench_repomap.py [--tree DIR] [--runs 3] [--aider-python /tmp/aider-venv/bin/python]

Every measurement is a fresh process (wall time from spawn to exit, so interpreter start and imports count)
on private copies of the tree (Aider writes its cache into the tree; the edit case changes a file).
Peak RSS is the child's own maximum or that of its pool workers, whichever is larger.
Writes the markdown table to stdout and to /work/bench-out/bench_repomap.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INSTANCE = "sympy__sympy-24909"
OUT = Path("/work/bench-out/bench_repomap.md")

# the child sets what the `bugsleuth` entry point sets (app/cli.py main) before numpy is imported
_OURS = r"""
import json, os, resource, sys, time
t = time.perf_counter()
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from repomap import MapConfig, build_repo_map
config = MapConfig(adaptive_workers=False) if len(sys.argv) > 4 else None
m = build_repo_map(sys.argv[1], cache_dir=sys.argv[2], token_budget=int(sys.argv[3]), config=config)
seconds = time.perf_counter() - t
rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"inner": seconds, "rss_kb": rss, "files": m.stats.files_indexed, "hits": m.stats.cache_hits,
                  "misses": m.stats.cache_misses, "timings": m.stats.timings, "tokens": len(m.text) // 4}))
"""

_OURS_REFOCUS = r"""
import json, os, resource, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from repomap import build_repo_map
m = build_repo_map(sys.argv[1], cache_dir=sys.argv[2], token_budget=int(sys.argv[3]))
t = time.perf_counter()
m2 = m.refocus("Matrix.det returns a wrong result for Rational entries in sympy/matrices/determinant.py")
seconds = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"inner": seconds, "rss_kb": rss, "top": m2.files[0].path}))
"""

_AIDER = r"""
import json, os, resource, sys, time
t = time.perf_counter()
from aider.repomap import RepoMap

class Model:
    def token_count(self, text):
        return len(text) // 4

class IO:
    def tool_output(self, *a, **k): pass
    def tool_error(self, *a, **k): pass
    def tool_warning(self, *a, **k): pass
    def read_text(self, fname, silent=False):
        try:
            with open(fname, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return None

root = sys.argv[1]
files = []
for dirpath, dirs, names in os.walk(root):
    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    files += [os.path.join(dirpath, n) for n in sorted(names)]
rm = RepoMap(map_tokens=int(sys.argv[3]), root=root, main_model=Model(), io=IO(), refresh="always")
text = rm.get_repo_map([], files) or ""
seconds = time.perf_counter() - t
rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"inner": seconds, "rss_kb": rss, "tokens": len(text) // 4}))
"""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _spawn(cmd: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT) -> tuple[float, dict]:
    """Run one measurement in a fresh process: wall seconds, plus its JSON report and CPU seconds (children too)."""
    cpu = _cpu()
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed:\n{proc.stderr[-2000:]}")
    line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip().startswith("{") else "{}"
    report = json.loads(line)
    report["cpu"] = _cpu() - cpu
    return wall, report


def _default_tree() -> Path:
    sys.path.insert(0, str(ROOT))
    from bench._trees import ensure_tree  # lazy: the checkout's root is on the path only from the line above

    with open("/work/shared/bench/swebench_lite.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["instance_id"] == DEFAULT_INSTANCE:
                return ensure_tree(row["repo"], row["base_commit"])
    raise SystemExit(f"{DEFAULT_INSTANCE} not in the dev set")


def _edit_one_file(tree: Path, round_no: int) -> None:
    target = sorted(tree.rglob("*.py"))[len(list(tree.rglob("*.py"))) // 2]
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(f"\n\ndef _bench_edit_{round_no}():\n    return {round_no}\n")


Samples = dict[str, list[tuple[float, dict]]]
"""Each case's runs: (wall seconds, what the measured process reported)."""


def _measure(args: argparse.Namespace, tree: Path, work: Path) -> Samples:
    """`--runs` rounds of every case, ours and Aider's back to back so both see about the same load."""
    ours_tree, aider_tree = work / "ours", work / "aider"
    shutil.copytree(tree, ours_tree, symlinks=True)
    # an installed package runs from bytecode compiled at install time (Aider's venv has it); this checkout
    # may run with PYTHONDONTWRITEBYTECODE, so compile ours once (into the git-ignored __pycache__) rather
    # than charge every measured process for compiling the package from source
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "repomap")], check=True)
    py = sys.executable
    tok = str(args.tokens)
    results: Samples = {}

    def record(name: str, sample: tuple[float, dict]) -> None:
        results.setdefault(name, []).append(sample)
        print(f"  {name}: {sample[0]:.2f}s {sample[1]}", file=sys.stderr)

    aider_ok = _aider_ok(args)
    if aider_ok:
        shutil.copytree(tree, aider_tree, symlinks=True)
    aider_cmd = [args.aider_python, "-c", _AIDER, str(aider_tree), "", tok]
    for r in range(args.runs):
        cache = work / f"cache-{r}"
        record("ours cold", _spawn([py, "-c", _OURS, str(ours_tree), str(cache), tok], env))
        if aider_ok:
            shutil.rmtree(aider_tree / ".aider.tags.cache.v4", ignore_errors=True)
            record("aider cold", _spawn(aider_cmd))
        pooled = work / f"cache-pool-{r}"
        record("ours cold, pool forced", _spawn([py, "-c", _OURS, str(ours_tree), str(pooled), tok, "pool"], env))
        record("ours warm", _spawn([py, "-c", _OURS, str(ours_tree), str(cache), tok], env))
        if aider_ok:
            record("aider warm", _spawn(aider_cmd))
        _edit_one_file(ours_tree, r)
        record("ours one-file edit", _spawn([py, "-c", _OURS, str(ours_tree), str(cache), tok], env))
        record("ours refocus (in process)", _spawn([py, "-c", _OURS_REFOCUS, str(ours_tree), str(cache), tok], env))
        if shutil.which("ctags"):
            ctags = ["ctags", "-R", "--languages=Python", "-f", "/dev/null", "."]
            record("ctags (definitions only)", _spawn(ctags, cwd=tree))
    return results


def _aider_ok(args: argparse.Namespace) -> bool:
    """Whether Aider is measured: not `--no-aider`, and its interpreter exists."""
    return not args.no_aider and Path(args.aider_python).exists()


def _median(results: Samples, name: str) -> float:
    """A case's median wall time (a refocus reports its in-process time instead)."""
    return statistics.median(s[0] if "refocus" not in name else s[1]["inner"] for s in results[name])


def _median_cpu(results: Samples, name: str) -> float | None:
    """A case's median CPU time, when the process reported it."""
    vals = [s[1]["cpu"] for s in results[name] if "cpu" in s[1] and "refocus" not in name]
    return statistics.median(vals) if vals else None


def _rss(results: Samples, name: str) -> str:
    """A case's peak resident memory in MB, or "-"."""
    vals = [s[1].get("rss_kb") for s in results[name] if s[1].get("rss_kb")]
    return f"{max(vals) / 1024:.0f}" if vals else "-"


def _table(args: argparse.Namespace, tree: Path, results: Samples, load_start: tuple[float, float, float]) -> str:
    """The markdown table of every case beside Aider's, with the targets and our build's phases."""
    aider_ok = _aider_ok(args)
    ref = {case: _median(results, f"aider {case}") if aider_ok else None for case in ("cold", "warm")}
    ref_cpu = {case: _median_cpu(results, f"aider {case}") if aider_ok else None for case in ("cold", "warm")}
    load = os.getloadavg()
    n_files = results["ours cold"][0][1]["files"]
    lines = [
        f"Tree: `{tree}` ({n_files} indexed files), token budget {args.tokens}, median of {args.runs} runs, "
        f"{os.cpu_count()} cores, load average (1 / 5 / 15 min) at the start {load_start[0]:.1f} / {load_start[1]:.1f} / "
        f"{load_start[2]:.1f}, at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}.",
        "Wall time is what a user waits; CPU time (user + system, pool workers included) is what the machine "
        "spends and is far less sensitive to other load on a shared machine.",
        "",
        "| tool | case | wall s | wall vs Aider | CPU s | CPU vs Aider | peak RSS MB |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name in results:
        secs = _median(results, name)
        cpu = _median_cpu(results, name)
        case = "warm" if "warm" in name or "edit" in name or "refocus" in name else "cold"
        is_aider = name.startswith("aider")
        base, base_cpu = ref.get(case), ref_cpu.get(case)
        ratio = "1" if is_aider else (f"{secs / base:.3f}" if base else "-")
        cpu_ratio = "1" if is_aider else (f"{cpu / base_cpu:.3f}" if base_cpu and cpu is not None else "-")
        tool, _, label = name.partition(" ")
        cpu_text = f"{cpu:.3f}" if cpu is not None else "-"
        lines.append(f"| {tool} | {label} | {secs:.3f} | {ratio} | {cpu_text} | {cpu_ratio} | {_rss(results, name)} |")
    if aider_ok:
        lines += [
            "",
            f"Targets: cold <= 1/4 of Aider cold ({ref['cold'] / 4:.2f}s), warm <= 1/8 of Aider warm "
            f"({ref['warm'] / 8:.2f}s), one-file edit <= 0.6s, peak RSS <= 300 MB.",
        ]
    phases = results["ours cold"][0][1].get("timings", {})
    lines += ["", "Phases of our first cold build (s): " + ", ".join(f"{k} {v:.2f}" for k, v in phases.items())]
    phases = results["ours warm"][0][1].get("timings", {})
    lines += ["Phases of our first warm build (s): " + ", ".join(f"{k} {v:.3f}" for k, v in phases.items())]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Measure the repo map's build against Aider's on one tree, print the table and write it to `OUT`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help=f"tree to map (default: {DEFAULT_INSTANCE} base commit)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--aider-python", default="/tmp/aider-venv/bin/python")
    parser.add_argument("--no-aider", action="store_true")
    args = parser.parse_args()

    tree = args.tree or _default_tree()
    work = Path(tempfile.mkdtemp(prefix="bench-repomap-"))
    load_start = os.getloadavg()
    results = _measure(args, tree, work)
    table = _table(args, tree, results, load_start)
    print(table)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(table, encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Latency of the `search` tool against running the same `rg --json` command directly, side by side.

Usage:
    .venv/bin/python bench/bench_search.py [--tree DIR] [--repeats 7] [--out /work/bench-out/bench_search.md]

Without `--tree`, a sympy base commit from the dev set is materialized into the shared tree cache
(/work/bench-cache/trees/sympy__sympy/<commit>/) when it is absent. Each pattern runs both ways in
alternation, `repeats` times; the table shows medians and the ratio ours / direct.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from funnel.tools._search import rg_args  # noqa: E402
from funnel.tools.sandbox import Sandbox  # noqa: E402
from funnel.tools import search  # noqa: E402

DEV_SET = Path("/work/shared/bench/swebench_lite.jsonl")
MIRROR = Path("/work/.mirror/sympy+sympy/repo")
CACHE = Path("/work/bench-cache/trees/sympy__sympy")

CASES: list[tuple[str, dict]] = [
    ("def simplify", {}),
    (r"class \w+Matrix\b", {"globs": ("*.py",)}),
    ("raise ValueError", {"max_results": 50, "max_per_file": 10}),
    ("TODO", {"ignore_case": True, "context": 2}),
    ("import numpy", {"fixed_strings": True, "exclude": ("*/tests/*",)}),
    ("zzz_no_such_identifier_zzz", {}),
]
"""(pattern, search options): a definition, a regex with a glob, a common phrase, context, a literal, no hit."""


def sympy_tree() -> Path:
    """The tree of the first sympy instance in the dev set, materialized into the shared cache if absent."""
    commit = next(
        json.loads(line)["base_commit"]
        for line in DEV_SET.read_text().splitlines()
        if line.strip() and json.loads(line)["repo"] == "sympy/sympy"
    )
    dest = CACHE / commit
    if not dest.is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=CACHE))
        archive = subprocess.Popen(["git", "--git-dir", str(MIRROR), "archive", commit], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(tmp)], stdin=archive.stdout, check=True)
        archive.wait()
        try:
            tmp.rename(dest)
        except OSError:  # another process won the race
            pass
    return dest


def run_direct(sb: Sandbox, pattern: str, opts: dict) -> float:
    """Seconds for the same ripgrep command `search` builds, reading all its output."""
    args = rg_args(
        sb,
        pattern,
        fixed_strings=opts.get("fixed_strings", False),
        globs=opts.get("globs", ()),
        exclude=opts.get("exclude", ()),
        ignore_case=opts.get("ignore_case", False),
        context=opts.get("context", 0),
        max_per_file=opts.get("max_per_file", 10),
    )
    started = time.perf_counter()
    subprocess.run(args, cwd=sb.root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def run_ours(sb: Sandbox, pattern: str, opts: dict) -> tuple[float, int]:
    """Seconds for the `search` tool including rendering, and how many matches it showed."""
    started = time.perf_counter()
    result = search(sb, pattern, **opts)
    result.render()
    return time.perf_counter() - started, len(result.matches)


def main() -> None:
    """Run every case both ways and print (and save) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("/work/bench-out/bench_search.md"))
    ns = parser.parse_args()
    tree = ns.tree or sympy_tree()
    sb = Sandbox(tree)
    files = sum(1 for _ in tree.rglob("*") if _.is_file())
    rows = []
    for pattern, opts in CASES:
        run_ours(sb, pattern, opts)  # warm the page cache
        ours, direct = [], []
        shown = 0
        for _ in range(ns.repeats):
            t, shown = run_ours(sb, pattern, opts)
            ours.append(t)
            direct.append(run_direct(sb, pattern, opts))
        mo, md = statistics.median(ours), statistics.median(direct)
        rows.append((pattern, opts, shown, md, mo, mo / md))
    lines = [
        f"tree: {tree} ({files} files), repeats: {ns.repeats}, cpus: {os.cpu_count()}",
        "",
        "| pattern | options | shown | rg --json direct (ms) | search tool (ms) | ratio |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for pattern, opts, shown, md, mo, ratio in rows:
        opt = ", ".join(f"{k}={v}" for k, v in opts.items()) or "defaults"
        lines.append(f"| `{pattern}` | {opt} | {shown} | {md * 1000:.0f} | {mo * 1000:.0f} | {ratio:.2f}x |")
    ratios = [r[-1] for r in rows]
    lines += ["", f"median ratio {statistics.median(ratios):.2f}x, worst {max(ratios):.2f}x"]
    text = "\n".join(lines)
    print(text)
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(text + "\n")


if __name__ == "__main__":
    main()

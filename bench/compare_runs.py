"""Compare two `bugsleuth eval` runs instance by instance: which top-five files and functions differ.

    python bench/compare_runs.py /work/bench-out/eval-300-anchor/results.jsonl /work/bench-out/eval-house-40/results.jsonl

Only instances present in both files are compared (a subset run against a full one works). Prints one line per
instance whose ranked files or functions (first `--top`, default 5) differ, then a summary; exit code 1 when any
differs, 2 when nothing could be compared.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load(path: Path) -> dict[str, dict]:
    """The records of a results.jsonl by instance id (the last record of an id wins, as on resume)."""
    records: dict[str, dict] = {}
    with path.open() as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise SystemExit(f"{path}:{n}: not JSON ({e})") from e
            records[rec["instance_id"]] = rec
    return records


def differences(a: dict, b: dict, top: int) -> list[str]:
    """What differs between two records of one instance: files, functions, termination, error."""
    out = []
    for key in ("ranked_files", "ranked_functions"):
        if (a.get(key) or [])[:top] != (b.get(key) or [])[:top]:
            out.append(f"{key}: {(a.get(key) or [])[:top]} -> {(b.get(key) or [])[:top]}")
    if a.get("termination") != b.get("termination"):
        out.append(f"termination: {a.get('termination')} -> {b.get('termination')}")
    if bool(a.get("error")) != bool(b.get("error")):
        out.append(f"error: {a.get('error')!r} -> {b.get('error')!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--top", type=int, default=5, help="how many ranked files/functions to compare (default 5)")
    args = parser.parse_args(argv)
    before, after = load(args.before), load(args.after)
    common = [i for i in before if i in after]
    if not common:
        print("no instance in common", file=sys.stderr)
        return 2
    changed = 0
    for iid in common:
        diff = differences(before[iid], after[iid], args.top)
        if diff:
            changed += 1
            print(f"{iid}:\n  " + "\n  ".join(diff))
    only = len(after) - len(common)
    print(f"{len(common)} instance(s) compared, {changed} differ in top-{args.top} files/functions or termination"
          + (f"; {only} only in {args.after}" if only else ""))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())

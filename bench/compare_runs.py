"""Compare two `bugsleuth eval` runs instance by instance: which top-five files and functions differ.

    python bench/compare_runs.py /work/bench-out/eval-300-anchor/results.jsonl /work/bench-out/eval-house-40/results.jsonl
    python bench/compare_runs.py /work/bench-out/ml-seed1/results.jsonl /work/bench-out/ml-seed2/results.jsonl --whole

Only instances present in both files are compared (a subset run against a full one works). Prints one line per
instance whose ranked files or functions (first `--top`, default 5) differ, then a summary; exit code 1 when any
differs, 2 when nothing could be compared. `--whole` compares the whole diagnosis too (every cited range, quoted
line and sentence; the stats' timings left out): two runs of the same code must agree there, whatever the
process's string hash seed (`PYTHONHASHSEED`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load(path: Path) -> dict[str, dict]:
    """The records of a results.jsonl by instance id (the last record of an id wins, as on resume). A torn last
    line (a run still writing) is left out; the file is only read (`records.read_results` would cut it off)."""
    records: dict[str, dict] = {}
    text = path.read_text()
    lines = text.split("\n")
    if not text.endswith("\n"):
        lines = lines[:-1]
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise SystemExit(f"{path}:{n}: not JSON ({e})") from e
        records[rec["instance_id"]] = rec
    return records


_TIMINGS = ("duration_s", "cost_usd")
"""The diagnosis stats that vary from run to run of the same code."""


def _steady(diagnosis: dict | None, ignore: tuple[str, ...] = ()) -> dict | None:
    """A diagnosis without its timings and the fields `ignore` names (`schema_version`, `stats.claims_total`)."""
    if not diagnosis:
        return diagnosis
    stats = {k: v for k, v in (diagnosis.get("stats") or {}).items()
             if k not in _TIMINGS and f"stats.{k}" not in ignore}
    return {k: v for k, v in diagnosis.items() if k not in ignore} | {"stats": stats}


def _first_difference(a: object, b: object, where: str = "diagnosis") -> str:
    """Where two JSON values first differ, with both sides (shortened)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for n, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{where}[{n}]")
    return f"{where}: {str(a)[:160]!r} -> {str(b)[:160]!r}"


def differences(a: dict, b: dict, top: int, whole: bool = False, ignore: tuple[str, ...] = ()) -> list[str]:
    """What differs between two records of one instance: files, functions, termination, error; with `whole`, the
    cited line ranges and the diagnosis too (its first difference; the diagnosis fields `ignore` names left out)."""
    out = []
    if whole:
        if a.get("line_ranges") != b.get("line_ranges"):
            out.append(f"line_ranges: {a.get('line_ranges')} -> {b.get('line_ranges')}")
        da, db = _steady(a.get("diagnosis"), ignore), _steady(b.get("diagnosis"), ignore)
        if da != db:
            out.append(_first_difference(da, db))
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
    parser.add_argument("--whole", action="store_true",
                        help="compare the cited ranges and the whole diagnosis too (timings left out)")
    parser.add_argument("--ignore", action="append", default=[], metavar="FIELD",
                        help="a diagnosis field --whole leaves out, dotted under stats (schema_version, "
                             "stats.claims_total); repeatable: what a change to the schema or the claim count moves")
    args = parser.parse_args(argv)
    before, after = load(args.before), load(args.after)
    common = [i for i in before if i in after]
    if not common:
        print("no instance in common", file=sys.stderr)
        return 2
    changed = 0
    for iid in common:
        diff = differences(before[iid], after[iid], args.top, args.whole, tuple(args.ignore))
        if diff:
            changed += 1
            print(f"{iid}:\n  " + "\n  ".join(diff))
    only = len(after) - len(common)
    what = "diagnosis, cited ranges" if args.whole else f"top-{args.top} files/functions"
    print(f"{len(common)} instance(s) compared, {changed} differ in {what} or termination"
          + (f"; {only} only in {args.after}" if only else ""))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())

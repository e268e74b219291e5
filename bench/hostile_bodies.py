"""Seconds the offline investigation takes on bug reports whose body is one shape repeated to the size limit.

    .venv/bin/python bench/hostile_bodies.py                       # every shape, 200,000 characters each
    .venv/bin/python bench/hostile_bodies.py --chars 20000 --only blank_lines backticks
    .venv/bin/python bench/hostile_bodies.py --root /path/to/other/checkout   # the same bodies on other code

A report's body comes from whoever files the issue, through a webhook. A pattern that backtracks over a run of
the same character (`^\\s*` over blank lines, a fence's info string over backticks) costs time quadratic in the
run: one such body kept a worker busy for an hour. Each shape runs in its own process (the classifier, the repo map's
focus and the offline investigator on the test fixture repository), stopped after `--timeout` seconds; a line per
shape, then a markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SHAPES = {
    "blank_lines": "\n", "spaces_and_newlines": " \n", "tabs": "\t", "backticks": "`", "fence_openers": "```a",
    "letters": "a", "words": "a ", "underscores": "a_", "camel": "aB", "digits": "1", "dots": "a.", "colons": ":",
    "slashes": "/", "path_parts": "a/", "backslashes": "\\", "parentheses": "(", "brackets": "[", "angles": "<",
    "quotes": '"', "stars": "*", "dashes": "-", "pipes": "|", "hashes": "# ", "list_items": "- ", "quotes_gt": ">",
    "python_lines": "x.py:", "line_anchors": "#L1-L", "urls": "https://github.com/", "frame_heads": 'File "',
    "at_frames": "  at ", "error_heads": "Error: ", "goroutines": "goroutine 1 [", "panics": "panicked at ",
    "indented": "    a\n", "scopes": "a::", "osc_openers": "\x1b]", "csi_openers": "\x1b[1;",
}  # fmt: skip
"""Each shape: the unit the body repeats."""

_CHILD = """
import sys, time
sys.path.insert(0, {root!r})
from funnel import Limits
from funnel.run.loop import investigate_sync
from schemas.report import BugReport
unit, chars = {unit!r}, {chars}
report = BugReport(title="crash in pricing", body=(unit * (chars // len(unit) + 1))[:chars])
started = time.perf_counter()
result = investigate_sync(report, {repo!r}, explorer="offline", limits=Limits(history=False))
print(time.perf_counter() - started, result.diagnosis.termination.reason.value)
"""


def run_shape(root: Path, unit: str, chars: int, timeout: float) -> tuple[float | None, str]:
    """Seconds one body takes on the code at `root` (None past the timeout), and how the run ended."""
    code = _CHILD.format(root=str(root), unit=unit, chars=chars, repo=str(HERE / "tests/funnel/traces/repo"))
    started = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                             cwd=root)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, f"stopped after {timeout:.0f} s"
    if out.returncode != 0:
        return time.perf_counter() - started, "failed: " + out.stderr.strip().splitlines()[-1][:120]
    seconds, reason = out.stdout.strip().splitlines()[-1].split(" ", 1)
    return float(seconds), reason


def main(argv: list[str] | None = None) -> int:
    """Run the shapes and print one JSON line each, then the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chars", type=int, default=200_000)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", nargs="*", choices=sorted(SHAPES))
    ap.add_argument("--root", type=Path, default=HERE, help="the checkout whose code runs (default: this one)")
    args = ap.parse_args(argv)
    rows = []
    for name in args.only or SHAPES:
        seconds, reason = run_shape(args.root.resolve(), SHAPES[name], args.chars, args.timeout)
        rows.append((name, seconds, reason))
        print(json.dumps({"shape": name, "chars": args.chars, "seconds": seconds, "ended": reason}), flush=True)
    print(f"\n| body ({args.chars:,} characters) | seconds | ended |\n|---|---:|---|")
    for name, seconds, reason in sorted(rows, key=lambda r: -(r[1] if r[1] is not None else 1e9)):
        shown = f"> {args.timeout:.0f}" if seconds is None else f"{seconds:.2f}"
        print(f"| {name} (`{SHAPES[name]!r}` repeated) | {shown} | {reason} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

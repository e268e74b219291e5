"""What the chaos benches share: the options naming the code, the time and the seed, and the child process that
runs the chaos on that code (so `--root` measures another checkout with the same bench)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def chaos_options(doc: str | None, seconds: float, what: str = "code runs") -> argparse.ArgumentParser:
    """A parser with `--seconds`, `--seed` and `--root` (the checkout whose `what`, default this one)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=seconds, help="how long the chaos runs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--root", type=Path, default=HERE, help=f"the checkout whose {what} (default: this one)")
    return ap


def run_child(code: str, root: Path, timeout_s: float, label: str = "the child") -> dict[str, Any]:
    """The JSON object the last `{`-line of `code`'s output holds, `code` run by this Python in `root`; when
    `timeout_s` runs out the child is stopped (a parse holds its interpreter, so only its parent can) and the last
    line it printed is its state."""
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if not lines:
        raise SystemExit(f"{label} failed:\n{err[-3000:]}")
    return json.loads(lines[-1])

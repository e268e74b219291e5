"""Cancellation latency in every phase of an investigation, the repo-map build included.

    .venv/bin/python bench/bench_cancel.py [--files 1500] [--repeat 3]

Builds a synthetic Python tree in a temporary directory (cold map cache, so the map build takes seconds), then
for each phase starts `investigate_sync` (what the job runner calls: `asyncio.run`, which also waits for the
map's thread), cancels once the run is inside that phase and measures the time from `cancel()` to the result.
The explore / deep-dive / output phases use a scripted FunctionModel that stalls (awaits) in the phase under test,
the way a slow model endpoint does. Prints one line per phase (median and worst of `--repeat` runs); the issue's
bound is 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from funnel.cancel import CancelToken  # noqa: E402
from funnel.run.loop import investigate_sync  # noqa: E402
from funnel.limits import Limits  # noqa: E402
from funnel.phases import phase_of_tools  # noqa: E402
from schemas.enums import Phase, Source  # noqa: E402
from schemas.report import BugReport  # noqa: E402

REPORT = BugReport(title="func_7_3 returns the wrong total",
                   body='Traceback:\n  File "pkg7/mod7.py", line 40, in func_7_3', source=Source.api)
CASES: tuple[tuple[str, str, float], ...] = (
    ("map@0.5s", "map", 0.5),
    ("map@2s", "map", 2.0),
    ("map@4s", "map", 4.0),
    (Phase.explore.value, Phase.explore.value, 0.3),
    (Phase.deep_dive.value, Phase.deep_dive.value, 0.3),
    (Phase.output.value, Phase.output.value, 0.3),
)
"""(label, phase, seconds into the phase when cancelled); the map cases land in the walk/read, parse and graph
stages of a cold build."""


def make_tree(root: Path, files: int) -> Path:
    """`files` Python modules of 80 functions each (about 8 KB), in 20 packages."""
    for i in range(files):
        path = root / f"pkg{i % 20}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def func_{i}_{j}(a, b):\n    x = helper_{j}(a)\n    return x + b + {j}\n\n" for j in range(80))
        head = f"import os\n\n\nclass Thing{i}:\n    def run(self):\n        return func_{i}_0(1, 2)\n\n\n"
        path.write_text(head + body)
    return root


class _StallIn:
    """A FunctionModel explorer that walks the phases and stalls in `phase`, setting `entered` when it does."""

    name = "stall"

    def __init__(self, phase: str) -> None:
        self.phase = phase
        self.entered = threading.Event()

    def build_model(self, ctx: object) -> FunctionModel:
        async def respond(messages: list, info: AgentInfo) -> ModelResponse:
            phase = phase_of_tools(t.name for t in info.function_tools)
            if phase.value == self.phase:
                self.entered.set()
                await asyncio.sleep(120)
            if phase == Phase.explore:
                return ModelResponse(parts=[ToolCallPart("begin_deep_dive", {"suspects": ["pkg7/mod7.py"]})])
            if phase == Phase.deep_dive:
                return ModelResponse(parts=[ToolCallPart("finish_deep_dive", {})])
            return ModelResponse(parts=[TextPart("# Diagnosis\n\nNo finding.\n")])

        return FunctionModel(function=respond, model_name="stall")


def cancel_latency(tree: Path, phase: str, *, delay_s: float = 0.5) -> tuple[float, str]:
    """Seconds from `cancel()` to `investigate_sync` returning, when cancelled `delay_s` into `phase`; and the
    termination reason. For `map`, the cancel comes `delay_s` after the run starts (the map is being built)."""
    token = CancelToken()
    started = threading.Event()
    explorer: object = "offline"
    if phase == "map":
        started.set()
    else:
        explorer = _StallIn(phase)
        started = explorer.entered  # type: ignore[attr-defined]
    asked: list[float] = []

    def canceller() -> None:
        if started.wait(60):
            time.sleep(delay_s)
            asked.append(time.monotonic())
            token.cancel("benchmark")

    thread = threading.Thread(target=canceller, daemon=True)
    thread.start()
    result = investigate_sync(REPORT, tree, explorer=explorer, cancel=token, limits=Limits(history=False))
    ended = time.monotonic()
    thread.join(1)
    reason = result.diagnosis.termination.reason.value
    return (ended - asked[0] if asked else float("nan")), reason


def main() -> None:
    """Measure every phase and print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1500)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tree = make_tree(Path(tmp) / "tree", args.files)
        print(f"tree: {args.files} files; bound 1.0 s")
        for label, phase, delay in CASES:
            runs = []
            for n in range(args.repeat):
                # a fresh cache for every map run, so the build is cold and really in progress when cancelled;
                # the other phases share a warm one
                cache = f"cache-{label}-{n}" if phase == "map" else "cache-warm"
                os.environ["BUGSLEUTH_CACHE_DIR"] = str(Path(tmp) / cache)
                runs.append(cancel_latency(tree, phase, delay_s=delay))
            lat = [r[0] for r in runs]
            reasons = sorted({r[1] for r in runs})
            print(f"{label:10} median {statistics.median(lat):6.3f} s  worst {max(lat):6.3f} s  "
                  f"termination {','.join(reasons)}")


if __name__ == "__main__":
    main()

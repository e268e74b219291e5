"""Re-record the stored regression traces in this folder (run by hand when a behaviour change is intended).

    .venv/bin/python -m tests.funnel.traces.record_traces

Each case is a scripted investigation of `repo/`; the trace, its transcript and its diagnosis are written here.
`tests/funnel/test_replay.py` replays them all and fails when an outcome changed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from funnel.run.loop import investigate
from funnel.limits import Limits
from tests.funnel.harness_support import (
    BAD_REPORT,
    FIXTURE_REPO,
    GOOD_REPORT,
    HAPPY_STEPS,
    REPORT,
    Script,
    ScriptExplorer,
    call,
    text,
)

HERE = Path(__file__).parent

CASES: dict[str, tuple[list, Limits]] = {
    "happy": (HAPPY_STEPS, Limits()),
    "verify_retry": (
        [call("finish_deep_dive"), text(BAD_REPORT), call("read_range", path="shop/pricing.py", start=8, end=8),
         text(GOOD_REPORT)],  # fmt: skip
        Limits(),
    ),
    "no_progress": ([call("search", pattern="discount")] * 3 + [text(GOOD_REPORT)], Limits()),
    "needs_info": ([call("search", pattern="checkout"), call("request_info", questions=["Which version?"])], Limits()),
    "explore_budget": ([call("search", pattern=f"w{i}") for i in range(3)] + [call("finish_deep_dive"), text(GOOD_REPORT)],
                       Limits(explore_calls=3)),  # fmt: skip
    "hidden_tool": (
        [call("begin_deep_dive", suspects=["shop/pricing.py"]), call("list_dir", path="."), call("finish_deep_dive"),
         text(GOOD_REPORT)],  # fmt: skip
        Limits(),
    ),
}


async def record() -> None:
    """Record every case."""
    for name, (steps, limits) in CASES.items():
        await investigate(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(Script(steps)), limits=limits,
                          trace_path=HERE / f"{name}.jsonl")  # fmt: skip
    await investigate(REPORT, FIXTURE_REPO, explorer="scripted", trace_path=HERE / "scripted.jsonl")


if __name__ == "__main__":
    asyncio.run(record())

"""The README's "Model behaviour conformance" table, from a run of the conformance suite's scenarios.

    .venv/bin/python bench/conformance_table.py            # markdown table on stdout
    .venv/bin/python bench/conformance_table.py --json /work/bench-out/conformance.json
    .venv/bin/python bench/conformance_table.py --only same_call_ids python_calls    # some scenarios

Runs every scenario of `tests/funnel/conformance/scenarios.py` over Chat Completions (and the Anthropic subset over
Messages) against the scripted server on 127.0.0.1, checks the suite's invariants on each run, and prints one row
per scenario: the termination, the tool calls the harness ran and refused, and the HTTP requests the server got.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schemas.trace import ToolCallEvent  # noqa: E402
from tests.funnel.conformance._checks import check_all  # noqa: E402
from tests.funnel.conformance._run import Outcome, run_scenario  # noqa: E402
from tests.funnel.conformance.scenarios import ANTHROPIC, SCENARIOS  # noqa: E402

_HEAD = ("| # | behaviour | termination | tool calls run / refused | HTTP requests | Anthropic Messages |\n"
         "|---|---|---|---|---|---|")  # fmt: skip


def _termination(out: Outcome) -> str:
    term = out.result.diagnosis.termination
    note = ""
    if term.detail.startswith("verification failed"):
        note = " (verification failed after 2 attempts)"
    elif term.detail.startswith("offline fallback"):
        note = " (offline fallback)"
    elif term.reason.value != "done":
        note = f" ({_short(term.detail)})"
    return f"`{term.reason.value}`{note}"


def _short(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _calls(out: Outcome) -> str:
    events = [e for e in out.result.events if isinstance(e, ToolCallEvent)]
    return f"{sum(1 for e in events if not e.error)} / {sum(1 for e in events if e.error)}"


def _http(out: Outcome) -> str:
    structurer = len(out.of("structurer"))
    explorer = len(out.requests) - structurer
    return f"{explorer} + {structurer} structurer" if structurer else str(explorer)


def _checked(out: Outcome) -> str:
    try:
        check_all(out)
    except AssertionError as e:
        return f" **invariant broken: {_short(str(e), 80)}**"
    return ""


async def _rows(only: list[str] | None = None) -> tuple[list[str], list[dict]]:
    rows, data = [], []
    for s in (s for s in SCENARIOS if not only or s.name in only):
        out = await run_scenario(s, "openai")
        other = ""
        if s.name in ANTHROPIC:
            alt = await run_scenario(s, "anthropic")
            other = f"{_termination(alt)}, {_http(alt)} requests{_checked(alt)}"
        term = out.result.diagnosis.termination
        rows.append(f"| {s.behaviour} | {s.what} | {_termination(out)}{_checked(out)} | {_calls(out)} | {_http(out)} "
                    f"| {other} |")  # fmt: skip
        data.append({"behaviour": s.behaviour, "name": s.name, "termination": term.reason.value,
                     "detail": term.detail, "tool_calls": _calls(out), "http": len(out.requests),
                     "seconds": round(out.seconds, 2)})  # fmt: skip
    return rows, data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="Also write the rows as JSON here.")
    parser.add_argument("--only", nargs="+", choices=[s.name for s in SCENARIOS], help="Run only these scenarios.")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    rows, data = asyncio.run(_rows(args.only))
    print(_HEAD)
    print("\n".join(rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2))


if __name__ == "__main__":
    main()

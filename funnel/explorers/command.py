"""External-command explorer: any CLI coding agent, given the prompt on stdin; its stdout is the markdown report.

A CLI agent may colour what it writes even into a pipe (`FORCE_COLOR` in a CI job, a renderer that always styles
headings). The command runs with `NO_COLOR=1` (https://no-color.org) unless the environment sets it, and the
escape sequences that remain are taken out of its output: `ESC[1;34m## Summary ESC[0m` is the heading it shows.

Asked for JSON (to read its cost, or by a wrapper script), a CLI agent wraps its answer in an envelope; the report is
the answer inside (`agent_output`): `claude -p --output-format json` or `stream-json` (the `result` event), `codex exec
--json` (the last completed agent message), `gemini --output-format json` (`response`). An envelope that reports an
error (`is_error`, `turn.failed`, `error`) ends the run with it. The tokens and cost the envelope counts (Claude
Code, Codex) go to the run's meter, so its token and cost budgets hold for the agent too."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_ai.usage import RequestUsage

from funnel.cancel import CancelToken
from funnel.counts import price, token_count
from funnel.errors import Cancelled, CostBudgetExceeded, RunFailed, UserError
from funnel.explorers.protocol import CommandOutput
from schemas.text import without_escapes

__all__ = ("CommandExplorer", "CommandOutput", "agent_output")

_MAX_STDERR = 8000


@dataclass
class CommandExplorer:
    """Runs a shell command in the repository root with the prompt on stdin; stdout is the report."""

    command: str
    """Shell command line, e.g. `claude -p` or `my-agent --stdin`."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables for the command (`NO_COLOR=1` unless set here or in the service's own)."""

    def __post_init__(self) -> None:
        if not self.command.strip():
            raise UserError("command explorer needs a command: use 'command:<shell command>'")
        shlex.split(self.command)  # unbalanced quotes fail here, with a clear ValueError

    @property
    def name(self) -> str:
        """`command:<command>`."""
        return f"command:{self.command}"

    async def run(self, prompt: str, *, root: Path, timeout_s: float, cancel: CancelToken) -> CommandOutput:
        """Run the command once; kills it (its whole process group) on timeout or cancellation."""
        started = time.monotonic()
        proc = subprocess.Popen(
            self.command,
            shell=True,
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"NO_COLOR": "1", **os.environ, **self.env},
            start_new_session=True,
        )
        loop = asyncio.get_running_loop()
        comm = loop.run_in_executor(None, proc.communicate, prompt.encode("utf-8"))
        try:
            while True:
                done, _ = await asyncio.wait({comm}, timeout=0.05)
                if done:
                    out, err = comm.result()
                    break
                if cancel.cancelled:
                    _kill(proc)
                    raise Cancelled(cancel.reason or "cancelled")
                if time.monotonic() - started > timeout_s:
                    _kill(proc)
                    raise CostBudgetExceeded(f"timeout: command explorer ran longer than {timeout_s:.0f} s")
        except BaseException:
            _kill(proc)
            raise
        stderr = without_escapes(err.decode("utf-8", "replace"))[-_MAX_STDERR:]
        if proc.returncode != 0:
            raise RunFailed(f"command explorer exited with {proc.returncode}: {stderr.strip()[-500:]}")
        answer, usage = agent_output(without_escapes(out.decode("utf-8", "replace")))
        return CommandOutput(answer, stderr, time.monotonic() - started, usage)


def agent_output(out: str) -> tuple[str, RequestUsage | None]:
    """The answer a CLI agent printed, and what it says it used. The answer is its output as it is, or, when the
    output is a JSON envelope or JSON lines of events, the final answer inside them (`RunFailed` when they report an
    error instead). The usage is what those events count (None when the output counts nothing): Claude Code's
    `result` event (`usage`, `total_cost_usd`) and Codex's `turn.completed` events (`usage`)."""
    events = _json_events(out) or []
    return _answer(events, out), _usage(events)


def _answer(events: list[dict], out: str) -> str:
    """The final answer inside the events (the output itself when they hold none)."""
    for event in reversed(events):
        kind = event.get("type")
        failure = event.get("error") if isinstance(event.get("error"), dict) and "response" not in event else {}
        if (kind == "result" and event.get("is_error")) or kind == "turn.failed" or failure.get("message"):
            why = failure.get("message") or event.get("result") or event.get("subtype") or kind
            raise RunFailed(f"the command's agent reported an error: {str(why)[:300]}")
        if kind == "result" and isinstance(event.get("result"), str):
            return event["result"]
        item = event.get("item") if kind == "item.completed" else None
        if isinstance(item, dict) and isinstance(item.get("text"), str) and (
                item.get("type") or item.get("item_type")) in ("agent_message", "assistant_message"):
            return item["text"]
        if isinstance(event.get("response"), str):
            return event["response"]
    return out


def _usage(events: list[dict]) -> RequestUsage | None:
    """The tokens and cost the events count, summed; None when none counts any. Claude's input tokens leave out
    the cached ones, which the meter counts in; Codex's count them in already."""
    usage, counted = RequestUsage(), False
    for event in events:
        counts = event.get("usage") if event.get("type") in ("result", "turn.completed") else None
        if not isinstance(counts, dict):
            continue
        cached = _count(counts, "cache_read_input_tokens") or _count(counts, "cached_input_tokens")
        extra = _count(counts, "cache_read_input_tokens") + _count(counts, "cache_creation_input_tokens")
        usage.input_tokens += _count(counts, "input_tokens") + extra
        usage.output_tokens += _count(counts, "output_tokens")
        usage.cache_read_tokens += cached
        cost = price(event.get("total_cost_usd"))
        if cost is not None:
            usage.cost = (usage.cost or 0) + cost
        counted = True
    return usage if counted else None


def _count(counts: dict, name: str) -> int:
    """A token count of a usage object (0 when it is missing or not a count)."""
    return token_count(counts.get(name))


def _json_events(out: str) -> list[dict] | None:
    """The JSON objects the output is, one or one a line; None when it is anything else (a plain report)."""
    text = out.strip()
    if not text.startswith("{"):
        return None
    try:
        whole = json.loads(text)
        return [whole] if isinstance(whole, dict) else None
    except (ValueError, RecursionError):
        pass
    events = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(event, dict):
            return None
        events.append(event)
    return events


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()

"""Reading ripgrep's `--json` output into matches with their context, bounded in bytes and in results."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import IO

from funnel.limits import ToolLimits
from funnel.tools._rg import RipgrepRun
from funnel.tools.sandbox import Sandbox
from repomap.walk import citable

__all__ = ("Collected", "SearchLine", "SearchMatch", "read_output")

_TRUNCATED = "...[truncated]"
# After the result cap is hit, keep counting (not storing) matches this much longer so the model learns
# roughly how many it did not see; then ripgrep is killed.
_EXTRA_COUNT_EVENTS = 200_000
_END = re.compile(rb'\{"type":"end","data":\{"path":\{"text":"((?:[^"\\\n]|\\.)*)"\}[^\n]*?"matched_lines":(\d+)')
# A bare `{"type":"match"` never occurs inside a JSON string (its quotes would be escaped), so counting it is exact.
_MATCH = b'{"type":"match"'


@dataclass
class SearchLine:
    """One context line around a match."""

    line_number: int
    """1-based line number."""
    text: str
    """The line, cut with `...[truncated]` when over the line cap."""


@dataclass
class SearchMatch:
    """One matching line with its context."""

    path: str
    """Repository-relative POSIX path."""
    line_number: int
    """1-based line number of the match."""
    line: str
    """The matching line, cut with `...[truncated]` when over the line cap."""
    before: list[SearchLine] = field(default_factory=list)
    """Context lines before the match (only those not already shown after the previous match)."""
    after: list[SearchLine] = field(default_factory=list)
    """Context lines after the match."""


@dataclass
class Collected:
    """What was read of ripgrep's output so far."""

    matches: list[SearchMatch] = field(default_factory=list)
    omitted: int = 0
    """Matches counted past `max_results`."""
    capped: list[str] = field(default_factory=list)
    """Files where `max_per_file` stopped ripgrep."""
    complete: bool = True
    at_eof: bool = False
    """The output was read to its end (ripgrep is exiting by itself)."""


def _text(obj: dict | None) -> str:
    if not obj:
        return ""
    if "text" in obj:
        return obj["text"]
    return base64.b64decode(obj.get("bytes", "")).decode("utf-8", "backslashreplace")


def _cut(line: str, limit: int) -> str:
    line = line.rstrip("\r\n")
    return line if len(line) <= limit else line[:limit] + _TRUNCATED


def _count_rest(first: bytes, stream: IO[bytes], max_per_file: int, capped: list[str], budget: int) -> tuple[int, str | None]:
    """Count the remaining match events of ripgrep's output; note files that hit `max_per_file`.

    Returns the count and why counting stopped early (`count` or `bytes`), or None at the end of output.
    """
    count = 0
    buf = first
    read = 0
    while True:
        cut = buf.rfind(b"\n")
        if cut >= 0:
            block, buf = buf[: cut + 1], buf[cut + 1 :]
            count += block.count(_MATCH)
            for m in _END.finditer(block):
                if int(m.group(2)) >= max_per_file:
                    capped.append(json.loads(b'"' + m.group(1) + b'"').removeprefix("./"))
        if count >= _EXTRA_COUNT_EVENTS:
            return count, "count"
        if read > budget:
            return count, "bytes"
        chunk = stream.read1(1 << 16)  # type: ignore[attr-defined]
        if not chunk:
            return count + buf.count(_MATCH), None
        read += len(chunk)
        buf += chunk


def read_output(run: RipgrepRun, out: Collected, sb: Sandbox, lim: ToolLimits, *, max_results: int,
                max_per_file: int, context: int) -> None:
    """Read ripgrep's JSON events into `out`: matches with their context (secret files and names no report can cite
    dropped), up to `max_results`; past that only counted, in bulk. Stops early at `lim.search_max_read_bytes`."""
    per_file: dict[str, int] = {}
    pending_context: list[SearchLine] = []
    last_match: SearchMatch | None = None
    read_bytes = 0
    dropped: dict[str, bool] = {}
    matches = out.matches
    stdout = run.stdout
    while raw := stdout.readline():
        read_bytes += len(raw)
        if read_bytes > lim.search_max_read_bytes:
            run.note_stop("output limit reached")
            break
        if len(matches) >= max_results and not raw.startswith(b'{"type":"context"'):
            # Past the cap only count, in bulk and without JSON parsing, so a million-line match stays cheap.
            extra, reached = _count_rest(raw, stdout, max_per_file, out.capped, lim.search_max_read_bytes - read_bytes)
            out.omitted += extra
            if reached:
                out.complete = False
                run.note_stop(None if reached == "count" else "output limit reached")
            else:
                out.at_eof = True
            break
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        kind = msg.get("type")
        data = msg.get("data", {})
        if kind == "begin":
            pending_context = []
            last_match = None
            continue
        if kind == "end":
            rel = _text(data.get("path")).removeprefix("./")
            if per_file.get(rel, 0) >= max_per_file:
                out.capped.append(rel)
            continue
        if kind not in ("match", "context"):
            continue
        rel = _text(data.get("path")).removeprefix("./")
        drop = dropped.get(rel)
        if drop is None:  # withheld by name or as a link to a secret, or a name no report can cite (as the map)
            named_in_text = "text" in (data.get("path") or {})  # ripgrep sends undecodable names as bytes
            drop = dropped[rel] = sb.withholds(rel) or not named_in_text or not citable(rel)
        if drop:
            continue
        number = data.get("line_number") or 0
        if kind == "context":
            line = SearchLine(number, _cut(_text(data.get("lines")), lim.search_line_chars))
            if last_match is not None and last_match.path == rel and number - last_match.line_number <= context:
                last_match.after.append(line)
            elif len(matches) < max_results:
                pending_context.append(line)
            continue
        per_file[rel] = per_file.get(rel, 0) + 1
        m = SearchMatch(rel, number, _cut(_text(data.get("lines")), lim.search_line_chars))
        m.before = [c for c in pending_context if c.line_number >= number - context]
        pending_context = []
        matches.append(m)
        last_match = m
    else:
        out.at_eof = True

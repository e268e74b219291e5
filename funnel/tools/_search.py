"""`search`: regex or fixed-string search through the real ripgrep binary, bounded in time and output."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from funnel.errors import ToolError, UnrecoverableError, UserError
from funnel.tools.sandbox import Sandbox, cap_bytes, printable
from repomap.config import DEPENDENCY_DIRS

__all__ = ("SearchLine", "SearchMatch", "SearchResult", "find_rg", "rg_args", "search")

_TRUNCATED = "...[truncated]"
_SKIP_DIRS = DEPENDENCY_DIRS
"""Dependency, virtualenv and cache directories never searched even when no `.gitignore` names them."""
_POLL_S = 0.05
# After the result cap is hit, keep counting (not storing) matches this much longer so the model learns
# roughly how many it did not see; then ripgrep is killed.
_EXTRA_COUNT_EVENTS = 200_000


def find_rg() -> str:
    """The ripgrep binary: the one installed next to the running Python first, then `PATH`.

    Raises `UnrecoverableError` when there is none: no search is possible and the harness must stop.
    """
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("rg")
    if found is None:
        raise UnrecoverableError("ripgrep (`rg`) is not installed: neither next to the Python interpreter nor on PATH")
    return found


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
class SearchResult:
    """What `search` found, and what it left out."""

    pattern: str
    """The pattern as given."""
    matches: list[SearchMatch]
    """Matches shown, in path order then line order."""
    omitted: int = 0
    """Matches found but not shown because of `max_results` (a lower bound when `complete` is False)."""
    capped_files: list[str] = field(default_factory=list)
    """Files where `max_per_file` stopped the search early (they may hold more matches)."""
    complete: bool = True
    """False when the search stopped early (time limit, output limit) so more matches may exist."""
    stopped_reason: str | None = None
    """Why the search stopped early, when it did."""
    max_output_bytes: int = 24_000
    """Byte cap applied by `render`."""

    def render(self) -> str:
        """The text the agent sees: `path:line: text` per match, `path-line- text` for context."""
        if not self.matches:
            head = f"No matches for {self.pattern!r}."
            if self.stopped_reason:
                head += f" (search stopped early: {self.stopped_reason})"
            return head
        out: list[str] = []
        last_path = None
        for m in self.matches:
            if m.path != last_path:
                if last_path is not None:
                    out.append("")
                last_path = m.path
            elif m.before:
                out.append("--")
            path = printable(m.path)
            out.extend(f"{path}-{c.line_number}- {c.text}" for c in m.before)
            out.append(f"{path}:{m.line_number}: {m.line}")
            out.extend(f"{path}-{c.line_number}- {c.text}" for c in m.after)
        files = len({m.path for m in self.matches})
        summary = f"[{_plural(len(self.matches), 'match', 'matches')} shown in {_plural(files, 'file', 'files')}"
        if self.omitted:
            more = f"{self.omitted}+" if not self.complete else str(self.omitted)
            summary += f"; {more} more matches not shown (max_results reached), narrow with a glob or a more specific pattern"
        elif not self.complete:
            summary += "; more matches may exist"
        if self.capped_files:
            summary += f"; {len(self.capped_files)} files had more matches than max_per_file"
        if self.stopped_reason:
            summary += f"; search stopped early: {self.stopped_reason}"
        summary += "]"
        out.append("")
        out.append(summary)
        return cap_bytes("\n".join(out), self.max_output_bytes, hint="narrow the pattern or add a glob")


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _text(obj: dict | None) -> str:
    if not obj:
        return ""
    if "text" in obj:
        return obj["text"]
    return base64.b64decode(obj.get("bytes", "")).decode("utf-8", "backslashreplace")


def _cut(line: str, limit: int) -> str:
    line = line.rstrip("\r\n")
    return line if len(line) <= limit else line[:limit] + _TRUNCATED


def _check_globs(globs: tuple[str, ...] | list[str], what: str) -> list[str]:
    if isinstance(globs, str):
        globs = (globs,)
    out = []
    for g in globs:
        if not isinstance(g, str) or not g.strip():
            raise ToolError(f"{what} must be non-empty glob strings like '*.py', got {g!r}")
        if "\x00" in g or "\n" in g:
            raise ToolError(f"{what} {g!r} contains a control character")
        out.append(g.strip())
    return out


_END = re.compile(rb'\{"type":"end","data":\{"path":\{"text":"((?:[^"\\\n]|\\.)*)"\}[^\n]*?"matched_lines":(\d+)')
# A bare `{"type":"match"` never occurs inside a JSON string (its quotes would be escaped), so counting it is exact.
_MATCH = b'{"type":"match"'


def _count_rest(first: bytes, stream, max_per_file: int, capped: list[str], budget: int) -> tuple[int, str | None]:
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
        chunk = stream.read1(1 << 16)
        if not chunk:
            return count + buf.count(_MATCH), None
        read += len(chunk)
        buf += chunk


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass



def rg_args(
    sb: Sandbox,
    pattern: str,
    *,
    target_rel: str = ".",
    fixed_strings: bool = False,
    globs: list[str] | tuple[str, ...] = (),
    exclude: list[str] | tuple[str, ...] = (),
    ignore_case: bool = False,
    context: int = 0,
    max_per_file: int = 10,
) -> list[str]:
    """The exact ripgrep command line `search` runs (from the repository root), for reuse by benchmarks."""
    # The real ripgrep binary in a subprocess, not an in-process binding such as `ripgrep-python`:
    # a binding cannot be interrupted mid-search (no timeout, no cancellation) and ignores context options.
    # A subprocess in its own process group can be killed at any moment, so a runaway pattern or a
    # million-line match never outlives its timeout or output cap.
    args = [
        find_rg(),
        "--json",
        "--no-config",
        "--no-require-git",
        "--no-ignore-parent",
        "--no-ignore-global",
        "--hidden",
        "--sort",
        "path",
        "--max-count",
        str(max_per_file),
    ]
    for g in globs:
        args += ["--glob", g]
    for g in exclude:
        args += ["--glob", "!" + g.lstrip("!")]
    # Later globs win in ripgrep: the secret exclusions come last so no include glob can re-admit a secret.
    for g in ("!.git", *(f"!{d}/" for d in _SKIP_DIRS), *sb.rg_exclude_globs):
        args += ["--glob", g]
    if fixed_strings:
        args.append("--fixed-strings")
    if ignore_case:
        args.append("--ignore-case")
    if context:
        args += ["--context", str(context)]
    args += ["--regexp", pattern, "--", target_rel]
    return args


def search(
    sb: Sandbox,
    pattern: str,
    *,
    path: str = ".",
    fixed_strings: bool = False,
    globs: tuple[str, ...] | list[str] = (),
    exclude: tuple[str, ...] | list[str] = (),
    ignore_case: bool = False,
    context: int = 0,
    max_results: int = 50,
    max_per_file: int = 10,
    timeout_s: float = 10.0,
    cancel: threading.Event | None = None,
) -> SearchResult:
    """Search the repository for a regex (Rust regex syntax) or a fixed string; read-only and bounded.

    Respects `.gitignore` files (even outside a git checkout), skips `.git/`, binaries and secret files.
    `path` narrows the search to a directory or file; `globs` keep only matching file paths, `exclude`
    drops them. Raises `ToolError` for a bad regex or path, `UnrecoverableError` when ripgrep is missing.
    """
    if not isinstance(pattern, str) or pattern == "":
        raise ToolError("The search pattern is empty. Give a regex such as 'def parse' or set fixed_strings.")
    if "\x00" in pattern:
        raise ToolError("The search pattern contains a NUL byte.")
    lim = sb.limits
    for name, value in (("max_results", max_results), ("max_per_file", max_per_file)):
        if not isinstance(value, int) or value < 1:
            raise ToolError(f"{name} must be a positive integer, got {value!r}")
    if not isinstance(context, int) or context < 0:
        raise ToolError(f"context must be a non-negative integer, got {context!r}")
    if timeout_s <= 0:
        raise UserError(f"timeout_s must be positive, got {timeout_s!r}")
    max_results = min(max_results, lim.search_max_results)
    context = min(context, lim.search_max_context)
    timeout_s = min(timeout_s, lim.search_timeout_s)
    include_globs = _check_globs(globs, "globs")
    exclude_globs = _check_globs(exclude, "exclude")

    if cancel is not None and cancel.is_set():
        return SearchResult(pattern, [], complete=False, stopped_reason="cancelled", max_output_bytes=lim.max_output_bytes)
    target = sb.resolve(path)
    target_rel = sb.relative(target)
    if target.is_file() and sb.is_binary(target):
        raise ToolError(f"Refused: {target_rel!r} is a binary file; search only covers text files.")

    args = rg_args(
        sb,
        pattern,
        target_rel=target_rel,
        fixed_strings=fixed_strings,
        globs=include_globs,
        exclude=exclude_globs,
        ignore_case=ignore_case,
        context=context,
        max_per_file=max_per_file,
    )

    try:
        proc = subprocess.Popen(
            args,
            cwd=sb.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            bufsize=1 << 16,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"},
        )
    except OSError as exc:
        raise UnrecoverableError(f"ripgrep could not be started: {exc}") from exc

    state = {"stop": None}
    done = threading.Event()
    stderr_chunks: list[bytes] = []

    def watchdog() -> None:
        deadline = time.monotonic() + timeout_s
        while not done.wait(_POLL_S):
            if cancel is not None and cancel.is_set():
                state["stop"] = state["stop"] or "cancelled"
                _kill(proc)
                return
            if time.monotonic() > deadline:
                state["stop"] = state["stop"] or f"time limit of {timeout_s:g}s reached"
                _kill(proc)
                return

    def drain_stderr() -> None:
        size = 0
        for chunk in iter(lambda: proc.stderr.read(4096), b""):
            if size < 65536:
                stderr_chunks.append(chunk)
                size += len(chunk)

    threads = [threading.Thread(target=watchdog, daemon=True), threading.Thread(target=drain_stderr, daemon=True)]
    for t in threads:
        t.start()

    matches: list[SearchMatch] = []
    omitted = 0
    capped: list[str] = []
    per_file: dict[str, int] = {}
    pending_context: list[SearchLine] = []
    last_match: SearchMatch | None = None
    read_bytes = 0
    complete = True
    secret_cache: dict[str, bool] = {}
    at_eof = False
    try:
        assert proc.stdout is not None
        while raw := proc.stdout.readline():
            read_bytes += len(raw)
            if read_bytes > lim.search_max_read_bytes:
                state["stop"] = state["stop"] or "output limit reached"
                break
            if len(matches) >= max_results and not raw.startswith(b'{"type":"context"'):
                # Past the cap only count, in bulk and without JSON parsing, so a million-line match stays cheap.
                extra, reached = _count_rest(raw, proc.stdout, max_per_file, capped, lim.search_max_read_bytes - read_bytes)
                omitted += extra
                if reached:
                    complete = False
                    state["stop"] = state["stop"] or (None if reached == "count" else "output limit reached")
                else:
                    at_eof = True
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
                    capped.append(rel)
                continue
            if kind not in ("match", "context"):
                continue
            rel = _text(data.get("path")).removeprefix("./")
            secret = secret_cache.get(rel)
            if secret is None:
                secret = secret_cache[rel] = sb.is_secret(rel)
            if secret:
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
            at_eof = True
    finally:
        if not at_eof:
            _kill(proc)
        # At EOF ripgrep is exiting; the watchdog still bounds this wait. (`wait(timeout=...)` would poll with sleeps.)
        proc.wait()
        done.set()
        for t in threads:
            t.join(timeout=1)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()

    if state["stop"]:
        complete = False
    stderr = b"".join(stderr_chunks).decode("utf-8", "replace")
    if proc.returncode == 2 and not matches and not state["stop"] and complete and "error" in stderr.lower():
        if "glob" in stderr.lower():
            raise ToolError(f"Invalid glob:\n{stderr.strip()[:2000]}\nUse globs like '*.py' or 'src/**/*.ts'.")
        if "regex" in stderr.lower() or "parse" in stderr.lower():
            raise ToolError(
                f"Invalid regex {pattern!r}:\n{stderr.strip()[:2000]}\n"
                "Fix the pattern, or set fixed_strings to search for the literal text."
            )
        raise ToolError(f"search failed: {stderr.strip()[:2000]}")

    # Binary files are skipped by ripgrep in directory searches; an explicitly named file is sniffed above.
    binary_cache: dict[str, bool] = {}
    kept = []
    for m in matches:
        if m.path not in binary_cache:
            binary_cache[m.path] = sb.is_binary(sb.root / m.path)
        if not binary_cache[m.path]:
            kept.append(m)
    return SearchResult(
        pattern=pattern,
        matches=kept,
        omitted=omitted,
        capped_files=sorted(set(capped) - {p for p, b in binary_cache.items() if b}),
        complete=complete,
        stopped_reason=state["stop"],
        max_output_bytes=lim.max_output_bytes,
    )

"""`search`: regex or fixed-string search through the real ripgrep binary, bounded in time and output.

Three steps: the arguments are checked and capped here, ripgrep runs in `_rg` (its command line, a watchdog and
a stderr drain), and its JSON output is read in `_rg_json`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from funnel.errors import ToolError, UserError
from funnel.limits import ToolLimits
from funnel.tools._rg import RipgrepRun, find_rg, rg_args
from funnel.tools._rg_json import Collected, SearchLine, SearchMatch, read_output
from funnel.tools.sandbox import Sandbox, cap_bytes, printable

__all__ = ("SearchLine", "SearchMatch", "SearchResult", "find_rg", "rg_args", "search")


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
    note: str | None = None
    """A caveat about how the search ran (e.g. `.gitignore` rules not applied), shown after the matches."""

    def render(self) -> str:
        """The text the agent sees: `path:line: text` per match, `path-line- text` for context."""
        if not self.matches:
            head = f"No matches for {self.pattern!r}."
            if self.stopped_reason:
                head += f" (search stopped early: {self.stopped_reason})"
            return head + (f" [{self.note}]" if self.note else "")
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
        if self.note:
            out.append(f"[{self.note}]")
        return cap_bytes("\n".join(out), self.max_output_bytes, hint="narrow the pattern or add a glob")


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


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


@dataclass(frozen=True)
class _Request:
    """The checked, capped arguments of one search."""

    pattern: str
    include: list[str]
    exclude: list[str]
    max_results: int
    max_per_file: int
    context: int
    timeout_s: float


def _check(pattern: str, lim: ToolLimits, *, globs: tuple[str, ...] | list[str], exclude: tuple[str, ...] | list[str],
           context: int, max_results: int, max_per_file: int, timeout_s: float) -> _Request:
    """The arguments checked (`ToolError` for the model's mistakes, `UserError` for a programmer's) and capped by
    the tool limits."""
    if not isinstance(pattern, str) or pattern == "":
        raise ToolError("The search pattern is empty. Give a regex such as 'def parse' or set fixed_strings.")
    if "\x00" in pattern:
        raise ToolError("The search pattern contains a NUL byte.")
    for name, value in (("max_results", max_results), ("max_per_file", max_per_file)):
        if not isinstance(value, int) or value < 1:
            raise ToolError(f"{name} must be a positive integer, got {value!r}")
    if not isinstance(context, int) or context < 0:
        raise ToolError(f"context must be a non-negative integer, got {context!r}")
    if timeout_s <= 0:
        raise UserError(f"timeout_s must be positive, got {timeout_s!r}")
    return _Request(pattern=pattern, include=_check_globs(globs, "globs"), exclude=_check_globs(exclude, "exclude"),
                    max_results=min(max_results, lim.search_max_results), max_per_file=max_per_file,
                    context=min(context, lim.search_max_context), timeout_s=min(timeout_s, lim.search_timeout_s))  # fmt: skip


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
    lim = sb.limits
    req = _check(pattern, lim, globs=globs, exclude=exclude, context=context, max_results=max_results,
                 max_per_file=max_per_file, timeout_s=timeout_s)  # fmt: skip
    if cancel is not None and cancel.is_set():
        return SearchResult(pattern, [], complete=False, stopped_reason="cancelled", max_output_bytes=lim.max_output_bytes)
    target = sb.resolve(path)
    target_rel = sb.relative(target)
    if target.is_file() and sb.is_binary(target):
        raise ToolError(f"Refused: {target_rel!r} is a binary file; search only covers text files.")
    # ripgrep would block forever reading a FIFO named .gitignore: then no .gitignore is applied, and it is said
    broken_rules = sb.unreadable_ignore_files()
    args = rg_args(sb, pattern, target_rel=target_rel, fixed_strings=fixed_strings, globs=req.include,
                   exclude=req.exclude, ignore_case=ignore_case, context=req.context, max_per_file=max_per_file,
                   vcs_ignore=not broken_rules)  # fmt: skip
    run = RipgrepRun(args, sb.root, timeout_s=req.timeout_s, cancel=cancel)
    out = Collected()
    try:
        read_output(run, out, sb, lim, max_results=req.max_results, max_per_file=max_per_file, context=req.context)
    finally:
        run.finish(at_eof=out.at_eof)
    if run.stop:
        out.complete = False
    _raise_for_errors(run, out, pattern)
    note = f".gitignore rules not applied: {printable(broken_rules[0])} is not a regular file" if broken_rules else None
    return _result(sb, pattern, out, run.stop, note)


def _raise_for_errors(run: RipgrepRun, out: Collected, pattern: str) -> None:
    """The instructive `ToolError` when ripgrep refused the glob or the regex."""
    stderr = run.stderr
    if run.returncode == 2 and not out.matches and not run.stop and out.complete and "error" in stderr.lower():
        if "glob" in stderr.lower():
            raise ToolError(f"Invalid glob:\n{stderr.strip()[:2000]}\nUse globs like '*.py' or 'src/**/*.ts'.")
        if "regex" in stderr.lower() or "parse" in stderr.lower():
            raise ToolError(
                f"Invalid regex {pattern!r}:\n{stderr.strip()[:2000]}\n"
                "Fix the pattern, or set fixed_strings to search for the literal text."
            )
        raise ToolError(f"search failed: {stderr.strip()[:2000]}")


def _result(sb: Sandbox, pattern: str, out: Collected, stopped: str | None, note: str | None) -> SearchResult:
    """The result, binary files left out (ripgrep skips them in directory searches; a named file is sniffed)."""
    binary_cache: dict[str, bool] = {}
    kept = []
    for m in out.matches:
        if m.path not in binary_cache:
            binary_cache[m.path] = sb.is_binary(sb.root / m.path)
        if not binary_cache[m.path]:
            kept.append(m)
    return SearchResult(
        pattern=pattern,
        matches=kept,
        omitted=out.omitted,
        capped_files=sorted(set(out.capped) - {p for p, b in binary_cache.items() if b}),
        complete=out.complete,
        stopped_reason=stopped,
        max_output_bytes=sb.limits.max_output_bytes,
        note=note,
    )

"""Which lines the offline report cites first: the reasoning layer's line in the prime suspect, in a narrow range.

The files and definitions cited stay those of `citation_order`; only the prime suspect's citations are
reordered (the definition holding the selected line first) and its first range narrowed around that line.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from funnel.localize.candidates import report_title
from funnel.localize.reasoning import Finding, named_items, reason
from funnel.localize.names import is_prose_word
from funnel.localize.terms import tokenize
from repomap.encoding import line_count
from repomap.focus import Focus
from repomap.pointers import fold
from schemas.enums import Role

if TYPE_CHECKING:  # the writer imports this module; its types are only needed for annotations
    from funnel.explorers.offline.writer import Citation, WriterConfig

__all__ = ("best_line", "evidence_window", "line_scores", "narrow_prime", "pad", "pointer", "shows_code", "window")

_COMMENT = ("#", "//", "*", '"""', "'''", "/*")
_QUOTED_CHARS = 20
"""Shortest code line a line of prose is taken to quote (`return x` may be written for its own sake)."""
_BLOCKS = (('"""', '"""'), ("'''", "'''"), ("/*", "*/"))
"""Openers of docstrings and block comments, with their closers."""


def line_scores(shown: dict[int, str], start: int, end: int, query: dict[str, float]) -> dict[int, float]:
    """How much each code line of a span shares with the report (0 for a line that shares nothing).

    A shared term counts its query weight times its rarity among the span's code lines (a term on most lines,
    like the definition's own subject, tells them apart less than a rare one). Comments and docstrings are
    skipped: they describe the code, the fix changes the code."""
    code = _code_lines(shown, start, end)
    terms = {ln: set(tokenize(text)) & query.keys() for ln, text in code.items()}
    df = Counter(t for found in terms.values() for t in found)
    n = len(code)
    # fsum is exact: a set's order follows the process's string hash, and a plain sum's rounding would follow it
    return {ln: math.fsum(query[t] * math.log(1 + n / df[t]) for t in terms[ln]) for ln in code}


def best_line(shown: dict[int, str], start: int, end: int, query: dict[str, float],
              symbol: str | None = None) -> int | None:
    """The code line of a span sharing the most with the report (`line_scores`; the first of equals); None when
    none shares anything. Given the definition (`symbol`, qualified), its header (the first line writing its own
    name, after any annotation or doc comment the span opens with) is left out when a line after it shares
    anything: the header says which definition, not where in it."""
    name = (symbol or "").rpartition(".")[2]
    written = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    header = next((ln for ln, text in _code_lines(shown, start - 1, end).items() if written.search(text)),
                  None) if name else None
    for first in ([header, start] if header is not None and header > start else [start]):
        best, best_score = None, 0.0
        for ln, score in line_scores(shown, first, end, query).items():
            if score > best_score:
                best, best_score = ln, score
        if best is not None:
            return best
    return None


def _code_lines(shown: dict[int, str], start: int, end: int) -> dict[int, str]:
    """The lines of (start, end] that hold code: not blank, not a comment, not inside a docstring or a block
    comment (tracked by their delimiters: the span's text is all there is)."""
    out: dict[int, str] = {}
    closing = ""
    for ln in range(start + 1, end + 1):
        text = shown.get(ln)
        if text is None:
            continue
        stripped = text.strip()
        if closing:
            if closing in stripped:
                closing = ""
            continue
        for opener, closer in _BLOCKS:
            if stripped.startswith(opener):
                rest = stripped[len(opener):]
                if closer not in rest:
                    closing = closer
                break
        else:
            if stripped and not stripped.startswith(_COMMENT):
                out[ln] = text
    return out


def window(anchor: int, start: int, end: int, width: int) -> tuple[int, int]:
    """At most `width` lines of [start, end] around `anchor` (a third before it, the rest after)."""
    if width <= 0 or end - start + 1 <= width:
        return start, end
    first = max(start, anchor - width // 3)
    last = min(end, first + width - 1)
    first = max(start, last - width + 1)
    return first, last


def pad(start: int, end: int, lo: int, hi: int, width: int) -> tuple[int, int]:
    """[start, end] widened to `width` lines inside [lo, hi] (a third of the added lines before it, the rest
    after); unchanged when it is already that wide."""
    extra = width - (end - start + 1)
    if extra <= 0:
        return start, end
    lo, hi = min(lo, start), max(hi, end)
    first = max(lo, start - extra // 3)
    last = min(hi, first + width - 1)
    return max(lo, min(first, last - width + 1)), max(last, end)


def evidence_window(anchor: int, start: int, end: int, width: int, evidence: dict[int, float]) -> tuple[int, int]:
    """At most `width` lines of [start, end] holding `anchor`, placed where the `evidence` (line → weight) sums
    highest; among equals, the one nearest `window`'s placement."""
    first, last = window(anchor, start, end, width)
    if width <= 0 or end - start + 1 <= width:
        return first, last

    def covered(s: int) -> float:
        return round(sum(v for ln, v in evidence.items() if s <= ln < s + width), 6)

    starts = range(max(start, anchor - width + 1), min(anchor, end - width + 1) + 1)
    best = max(starts, key=lambda s: (covered(s), -abs(s - first)), default=first)
    return best, best + width - 1


def _evidence(lines: list[str], cite: Citation, anchor: int, findings: list[Finding], terms: dict[str, float]
              ) -> dict[int, float]:
    """Line → how strongly the report points at it inside the cited definition: the anchor 1, plus each line's share
    of the terms it has in common with the report and each finding's share of the best finding (both relative to
    the best line of the definition)."""
    lo, hi = _definition(cite)
    shown = _numbered(lines, lo, hi)
    out: dict[int, float] = {anchor: 1.0}
    for found in (line_scores(shown, lo - 1, hi, terms),
                  {f.line: f.score for f in findings if f.symbol == cite.symbol and lo <= f.line <= hi}):
        top = max(found.values(), default=0.0)
        for ln, value in found.items():
            if top > 0 and value > 0:
                out[ln] = out.get(ln, 0.0) + value / top
    return out


def _numbered(lines: list[str], lo: int, hi: int) -> dict[int, str]:
    """Lines `lo` to `hi` (1-based) of a file, by number."""
    return {i: lines[i - 1] for i in range(lo, min(hi, len(lines)) + 1)}


def _free_lines(first: Citation, others: list[Citation], total: int) -> tuple[int, int]:
    """The stretch of the file around `first` that no other citation of the file covers (a range that took in
    another cited definition would make that citation a repeat of it)."""
    lo = max((c.end + 1 for c in others if c.end < first.start), default=1)
    hi = min((c.start - 1 for c in others if c.start > first.end), default=total)
    return lo, hi


def _definition(cite: Citation) -> tuple[int, int]:
    return cite.span or (cite.start, cite.end)


def _linked_lines(focus: Focus, path: str, start: int, end: int, source: str = "") -> list[int]:
    """Lines of [start, end] of `path` (whose text is `source`) that the report links to (`Focus.links`: a
    permalink, "line 77 of a/b.py", a line its diff removes)."""
    lines = (link.line_in(source) for link in focus.links if link.names(path))
    return [ln for ln in lines if start <= ln <= end]


def pointer(focus: Focus, path: str, line: int, code: str, report: str = "") -> Literal["link", "patch", "quote"] | None:
    """How the report itself points at line `line` of `path` (whose text is `code`): a link to it, a line its diff
    changes, a quote of it (in code, or a line of the `report`'s prose that is the line, at least `_QUOTED_CHARS`
    long, as an issue pasted without a fence writes it), or not at all."""
    folded = fold(code)
    for link in focus.links:
        if link.names(path) and (link.text == folded if link.text else link.line == line):
            return "patch" if link.text else "link"  # a patch's line is known by its text: the file may have moved
    if folded in focus.quoted_code:
        return "quote"
    written = len(folded) >= _QUOTED_CHARS and any(fold(ln) == folded for ln in report.split("\n"))
    return "quote" if written else None


def _titled(report: str, symbol: str) -> bool:
    """Whether the report's title writes a definition's own name, one no plain English word could be
    (`is_valid_path`, `setStreamReadConstraints`; not `grid`)."""
    name = symbol.rpartition(".")[2]
    return not is_prose_word(name) and name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", report_title(report))


def narrow_prime(cites: list[Citation], report: str, focus: Focus, terms: dict[str, float], texts: dict[str, str],
                 config: WriterConfig) -> list[Citation]:
    """The citations with the prime suspect's first range on the line the reasoning selected (or, when no rule
    fires, the evidence line or the line sharing the most terms), at most `config.first_range_lines` wide."""
    path = cites[0].path
    source = texts.get(path, "")
    lines = source.split("\n")
    prime = [k for k, c in enumerate(cites) if c.path == path and c.symbol]
    spans = [(*_definition(cites[k]), cites[k].symbol or "") for k in prime]
    exclude = {c.symbol.rpartition(".")[2] for c in cites if c.symbol}
    named = named_items(list(focus.code_identifiers), list(focus.options), exclude)
    findings = reason(report, path, source, spans, named=named, terms=terms) if spans else []
    linked = _linked_lines(focus, path, *spans[0][:2], source) if prime and prime[0] == 0 else []
    if linked:  # the reporter's own pointer into the first definition outranks a rule's choice of line
        lo, hi = window(linked[0], spans[0][0], spans[0][1], config.first_range_lines)
        findings = [f for f in findings if f.symbol == spans[0][2] and lo <= f.line <= hi]
    out = list(cites)
    best = findings[0] if findings else None
    if best is not None:
        in_first = [f for f in findings if f.symbol == spans[0][2] and spans[0][0] <= f.line <= spans[0][1]]
        titled = _titled(report, spans[0][2])
        if best.rule == "behaviour" and prime[0] == 0 and (
                titled or in_first and in_first[0].score >= config.stay_in_first * best.score):
            best = in_first[0] if in_first else None  # a named value is weaker evidence than the ranking's choice
    if best is not None:
        k = next(k for k in prime if out[k].symbol == best.symbol and _definition(out[k])[0] <= best.line
                 <= _definition(out[k])[1])
        out.insert(0, out.pop(k))
        for n, c in enumerate(out):
            c.role = Role.cause if n == 0 else (Role.related if c.role == Role.cause else c.role)
        anchor: int | None = best.line
        out[0].finding = best
    else:
        first = out[0]
        lo, hi = _definition(first)
        shown = _numbered(lines, lo, hi)
        anchor = first.focus_lines[0] if first.focus_lines else best_line(shown, lo, hi, terms,
                                                                          first.symbol)
    first = out[0]
    lo, hi = _definition(first)
    anchor = linked[0] if linked else anchor
    if anchor is not None:
        if config.evidence_window and not linked:
            evidence = _evidence(lines, first, anchor, findings, terms)
            first.start, first.end = evidence_window(anchor, lo, hi, config.first_range_lines, evidence)
        else:
            first.start, first.end = window(anchor, lo, hi, config.first_range_lines)
        first.focus_lines = [anchor] + [ln for ln in first.focus_lines if ln != anchor and first.start <= ln <= first.end]
    elif config.first_range_lines > 0:
        first.end = min(first.end, first.start + config.first_range_lines - 1)
    if config.pad_first_range and config.first_range_lines > 0 and source:
        lo, hi = _free_lines(first, [c for c in out[1:] if c.path == path], line_count(source))
        first.start, first.end = pad(first.start, first.end, lo, hi, config.first_range_lines)
    for f in [f for f in findings[1:] if not first.start <= f.line <= first.end][: config.extra_ranges]:
        owner = next((c for c in out if c.path == path and c.symbol == f.symbol), first)
        s, e = window(f.line, *_definition(owner), config.first_range_lines)
        out.append(replace(owner, start=s, end=e, role=Role.related, focus_lines=[f.line], finding=f))
    if config.cite_rest:  # the rest of the definition, after every file: what the narrow range left out
        cut = min(first.end - first.start + 1 + 2 * config.first_range_lines, config.max_cited_lines)
        lo, hi = _definition(first)
        for s, e in ((max(lo, first.start - cut), first.start - 1), (first.end + 1, min(hi, first.end + cut))):
            if s <= e and _holds_code(lines, s, e):
                out.append(replace(first, start=s, end=e, role=Role.related, focus_lines=[], finding=None))
    return out


def shows_code(text: str) -> bool:
    """Whether a line holds more than blanks, brackets and separators (a block's closing `}` alone shows no code)."""
    return bool(text.strip().strip("{}()[];,"))


def _holds_code(lines: list[str], start: int, end: int) -> bool:
    """Whether lines `start` to `end` (1-based) hold code beyond blank lines, comments and closing brackets: a
    definition's last `}` alone is no rest worth citing."""
    shown = _numbered(lines, start, end)
    return any(shows_code(text) for text in _code_lines(shown, start - 1, end).values())

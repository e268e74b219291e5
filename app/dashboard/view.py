"""What the dashboard templates show, computed from stored rows: plain dataclasses, no I/O except reading excerpts.

Templates stay dumb: they loop over these and print fields (Jinja2 autoescapes every one of them).
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from app.dashboard.charts import Bar, Point, bar_chart, histogram, line_chart
from app.dashboard.highlight import highlight_lines
from repomap.encoding import SNIFF_BYTES, looks_binary, to_utf8
from repomap.gate import DenyRules, Gate, Refusal, Refused
from schemas.enums import Feedback, Status

TERMINAL = frozenset({Status.done, Status.failed, Status.cancelled, Status.skipped})
"""Statuses after which nothing more happens to an investigation."""
EXCERPT_CONTEXT = 3
"""Lines shown before and after a cited range."""
EXCERPT_MAX_LINES = 80
"""Longest excerpt shown for one citation."""


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _value(x: Any) -> str:
    return str(getattr(x, "value", x)) if x is not None else ""


def duration_text(seconds: float | None) -> str:
    """`1.4 s`, `2 min 05 s`, or an empty string when unknown."""
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes} min {secs:02d} s"


def when_text(ts: datetime | None) -> str:
    """A UTC timestamp as `2026-11-30 07:41 UTC`."""
    if ts is None:
        return ""
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=timezone.utc)
    return ts.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# ---------------------------------------------------------------------------------------------- the list page


@dataclass
class Row:
    """One line of the investigations table."""

    id: int
    title: str
    repo: str
    status: str
    classification: str
    top_file: str
    confidence: float | None
    tool_calls: int
    duration: str
    termination: str
    created: str


def row_of_summary(item: Any) -> Row:
    """The table row of one investigation summary (`app.views.InvestigationSummary`)."""
    return Row(
        id=item.id,
        title=(item.title or "").strip() or "(untitled)",
        repo=item.repo or "",
        status=_value(item.status),
        classification=_value(item.classification),
        top_file=item.prime_suspect or "",
        confidence=item.confidence,
        tool_calls=item.tool_calls or 0,
        duration=duration_text(item.duration_s),
        termination=_value(item.termination),
        created=when_text(item.created_at),
    )


def first_line(text: str | None) -> str:
    """The first non-blank line of a text, cut to 120 characters ('' for none)."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:120]
    return ""


# ---------------------------------------------------------------------------------------------- excerpts and links


@dataclass
class CodeLine:
    """One line of a shown excerpt."""

    number: int
    html: Markup
    cited: bool


@dataclass
class Citation:
    """One affected file with its excerpt and web link."""

    path: str
    line_start: int
    line_end: int
    symbol: str | None
    role: str
    evidence: str
    lines: list[CodeLine]
    url: str | None
    from_repository: bool
    """True when the excerpt was read from the repository; False when it is the quoted evidence only."""


def web_url(location: str | None, commit: str | None, path: str, start: int, end: int) -> str | None:
    """A link to the lines at that commit on GitHub or GitLab, when the repository location is such a URL."""
    if not location or not commit or not re.fullmatch(r"[0-9a-fA-F]{7,64}", commit):
        return None
    m = re.match(r"^(?:https?://|ssh://git@|git@)(github\.com|gitlab\.com)[/:]([^\s?#]+?)(?:\.git)?/?$", location.strip())
    if not m:
        return None
    host, slug = m.groups()
    safe_path = quote(path, safe="/")
    if host == "github.com":
        anchor = f"#L{start}" + (f"-L{end}" if end != start else "")
        return f"https://github.com/{slug}/blob/{commit}/{safe_path}{anchor}"
    anchor = f"#L{start}" + (f"-{end}" if end != start else "")
    return f"https://gitlab.com/{slug}/-/blob/{commit}/{safe_path}{anchor}"


_MAX_SOURCE_BYTES = 8 << 20
"""Largest file an excerpt is read from."""


def read_source(location: str | None, commit: str | None, path: str, trees: Sequence[Path] = ()) -> str | None:
    """The text of `path` at `commit`, from a materialized tree or the local git repository; None when unavailable
    or binary. Both readers give the same text: a UTF-16 file transcoded, a UTF-8 byte-order mark dropped."""
    if ".." in Path(path).parts or path.startswith("/") or DenyRules().denies(path):
        return None
    for tree in trees:
        try:  # through the gate: a cited symlink to a secret (or out of the tree) is never excerpted
            return _text(Gate(tree).read_bytes(path, max_bytes=_MAX_SOURCE_BYTES))
        except Refused as refused:
            if refused.reason is Refusal.denied:
                return None
            continue
    if location and commit and Path(location).is_dir() and re.fullmatch(r"[0-9a-fA-F]{7,64}", commit):
        try:
            done = subprocess.run(
                ["git", "-C", location, "show", f"{commit}:{path}"],
                capture_output=True,
                timeout=5,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode == 0:
            return _text(done.stdout)
    return None


def _text(data: bytes) -> str | None:
    """A file's bytes as the text an excerpt shows (UTF-16 transcoded, a UTF-8 mark dropped); None when binary."""
    if looks_binary(data[:SNIFF_BYTES]):
        return None
    return to_utf8(data).decode("utf-8-sig", errors="replace")


def citation_of(item: Any, source: str | None, url: str | None) -> Citation:
    """An affected file with the cited lines (plus context) highlighted, or its quoted evidence when unreadable."""
    start, end = item.line_start, item.line_end
    lines: list[CodeLine] = []
    if source is not None:
        all_lines = source.split("\n")
        first = max(1, start - EXCERPT_CONTEXT)
        last = min(len(all_lines), end + EXCERPT_CONTEXT, first + EXCERPT_MAX_LINES - 1)
        if first <= last:
            shown = highlight_lines(source, item.path, first=first, last=last)
            lines = [CodeLine(first + k, html, start <= first + k <= end) for k, html in enumerate(shown)]
    from_repository = bool(lines)
    if not lines and item.evidence:
        shown = highlight_lines(item.evidence.rstrip("\n"), item.path)[:EXCERPT_MAX_LINES]
        lines = [CodeLine(start + k, html, True) for k, html in enumerate(shown)]
    return Citation(
        path=item.path,
        line_start=start,
        line_end=end,
        symbol=item.symbol,
        role=_value(item.role),
        evidence=item.evidence,
        lines=lines,
        url=url,
        from_repository=from_repository,
    )


# ---------------------------------------------------------------------------------------------- stats


@dataclass
class Stats:
    """The charts of the stats page, with the numbers behind them for the tables."""

    total: int
    by_status: list[tuple[str, int]]
    tool_calls_chart: Markup
    tool_calls_bars: list[Bar]
    duration_chart: Markup
    duration_bars: list[Bar]
    termination_chart: Markup
    termination_bars: list[Bar]
    accuracy_chart: Markup
    accuracy_points: list[Point]
    feedback_total: int
    figures: list[tuple[str, str]] = field(default_factory=list)
    """Headline numbers: (label, value)."""


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def stats_of(investigations: Sequence[Any], feedback: Sequence[Any]) -> Stats:
    """Charts over all investigations and all feedback."""
    finished = [i for i in investigations if _value(_get(i, "status")) in (Status.done, Status.failed, Status.cancelled)]
    calls = [int(_get(i, "tool_calls") or 0) for i in finished]
    durations = [float(d) for i in finished if (d := _get(i, "duration_s")) is not None]
    terminations = Counter(_value(_get(i, "termination")) or "unknown" for i in finished)
    statuses = Counter(_value(_get(i, "status")) for i in investigations)
    tool_bars = histogram(calls, bins=12, integer=True)
    duration_bars = histogram(durations, bins=10)
    termination_bars = [Bar(reason, n, css=f"stop-{reason}") for reason, n in sorted(terminations.items())]
    per_day: dict[str, list[float]] = defaultdict(list)
    score = {Feedback.correct: 1.0, Feedback.partly: 0.5, Feedback.wrong: 0.0}
    for fb in feedback:
        created = _get(fb, "created_at")
        day = created.strftime("%m-%d") if created else "?"
        per_day[day].append(score.get(Feedback(_value(_get(fb, "verdict"))), 0.0))
    points = [Point(day, sum(v) / len(v), note=f"{len(v)} verdicts") for day, v in sorted(per_day.items())]
    all_scores = [x for v in per_day.values() for x in v]
    median_calls, median_duration = _median(calls), _median(durations)
    figures = [
        ("Investigations", str(len(investigations))),
        ("Finished", str(len(finished))),
        ("Median tool calls", f"{median_calls:g}" if median_calls is not None else "—"),
        ("Median duration", duration_text(median_duration) or "—"),
        ("Feedback accuracy", f"{100 * sum(all_scores) / len(all_scores):.0f}%" if all_scores else "—"),
    ]
    return Stats(
        total=len(investigations),
        by_status=sorted(statuses.items()),
        tool_calls_chart=bar_chart("chart-tools", "Tool calls per investigation", tool_bars, unit=" investigations"),
        tool_calls_bars=tool_bars,
        duration_chart=bar_chart("chart-duration", "Investigation duration (seconds)", duration_bars, unit=" investigations"),
        duration_bars=duration_bars,
        termination_chart=bar_chart("chart-stop", "Termination reasons", termination_bars, unit=" investigations"),
        termination_bars=termination_bars,
        accuracy_chart=line_chart("chart-accuracy", "Feedback accuracy per day (correct = 1, partly = ½)", points),
        accuracy_points=points,
        feedback_total=len(feedback),
        figures=figures,
    )

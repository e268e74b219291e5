"""Summaries of a run: summary.json (the machine contract), summary.md (the table people read) and an SVG plot."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from app.evaluation import breakdown, locagent, metrics
from app.evaluation.data import Instance
from app.evaluation.records import score_record

ACCURACY_KEYS = ("file_acc_at_1", "file_acc_at_3", "file_acc_at_5", "function_acc_at_5", "line_overlap",
                 *breakdown.LINE_KEYS, "mrr")
"""Accuracy figures, in table order; the baseline carries the same keys (None where it cannot score)."""

PLOT_FILE = "summary.svg"


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _accuracy(scores: Sequence[Mapping[str, Any]], digits: int | None = 3) -> dict[str, float | None]:
    means = {key: metrics.mean(s.get(key) for s in scores) for key in ACCURACY_KEYS}
    return means if digits is None else {key: _round(value, digits) for key, value in means.items()}


def _effort(records: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    calls = [float(r.get("tool_calls") or 0) for r in records]
    seconds = [float(r.get("seconds") or 0.0) for r in records]
    tokens = [float(r.get("tokens") or 0) for r in records]
    return {
        "tool_calls_median": _round(metrics.median(calls), 1),
        "tool_calls_p95": _round(metrics.percentile(calls, 95), 1),
        "tool_calls_max": max(calls) if calls else None,
        "seconds_median": _round(metrics.median(seconds), 2),
        "tokens_median": _round(metrics.median(tokens), 0),
    }


def summarize(records: Mapping[str, Mapping[str, Any]], instances: Sequence[Instance], *,
              protocol: str | None = None) -> dict[str, Any]:
    """summary.json: accuracy, line hits, calibration, effort, terminations, per-repository and per-language
    figures for the pipeline and the baseline, over the instances of `instances` that have a record (in data
    order); with `protocol` (`locagent`) that protocol's figures too."""
    rows = []
    for inst in instances:
        record = records.get(inst.instance_id)
        if record is None or not inst.has_gold:
            continue
        rows.append((inst, record, score_record(dict(record), inst)))
    ours = [s["ours"] for _, _, s in rows]
    base = [s["baseline"] for _, _, s in rows]
    summary: dict[str, Any] = {"n": len(rows), **_accuracy(ours), **_effort([r for _, r, _ in rows])}
    summary["function_n"] = sum(1 for s in ours if s["function_acc_at_5"] is not None)
    summary["errors"] = sum(1 for _, r, _ in rows if r.get("error"))
    summary["terminations"] = dict(sorted(Counter(str(r.get("termination") or "none") for _, r, _ in rows).items()))
    ran_baseline = any(r.get("baseline_files") for _, r, _ in rows)  # `--no-baseline` records empty lists
    baseline = _accuracy(base) if ran_baseline else _blank(_accuracy(base))
    for key in ("function_acc_at_5", "line_overlap", *breakdown.LINE_KEYS):
        baseline[key] = None  # whole-file ranking names no functions and cites no lines
    summary["baseline"] = baseline
    lines = breakdown.line_summary(ours)
    summary["line_n"], summary["first_range_width_median"] = lines["line_n"], lines["first_range_width_median"]
    summary["line_outcomes"] = breakdown.line_outcomes(rows)
    summary["calibration"] = breakdown.calibration_summary(rows)
    raw_ours, raw_base = _accuracy(ours, None), _accuracy(base, None)
    summary["ratio_to_baseline"] = {
        key: _round(raw_ours[key] / raw_base[key]) if raw_ours[key] is not None and raw_base[key] else None
        for key in ACCURACY_KEYS if baseline[key] is not None
    }
    groups: dict[str, list[tuple[Instance, Mapping[str, Any], dict[str, Any]]]] = defaultdict(list)
    for row in rows:
        groups[row[0].repo].append(row)
    summary["per_repo"] = {
        repo: {
            "n": len(group),
            **_accuracy([s["ours"] for _, _, s in group]),
            **_effort([r for _, r, _ in group]),
            "baseline": {k: v for k, v in _accuracy([s["baseline"] for _, _, s in group]).items()
                         if k.startswith("file_acc") or k == "mrr"},
        }
        for repo, group in sorted(groups.items())
    }
    per_language = breakdown.language_summary(rows)
    if per_language:
        summary["per_language"] = per_language
    if protocol == locagent.NAME:
        summary["protocols"] = {locagent.NAME: breakdown.protocol_summary(rows)}
    if not ran_baseline:  # BM25 figures of empty rankings would read as zeros
        for figures in (*summary["per_repo"].values(), *per_language.values(), *summary.get("protocols", {}).values()):
            figures["baseline"] = _blank(figures["baseline"])
    return summary


def _blank(figures: Mapping[str, Any]) -> dict[str, Any]:
    """Figures with every value but the count `n` unknown (a run without the baseline has none)."""
    return {k: v if k == "n" else None for k, v in figures.items()}


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _num(value: Any) -> str:
    """Counts and durations: no needless decimals."""
    if value is None:
        return "–"
    return f"{value:.1f}".removesuffix(".0") if isinstance(value, float) else str(value)


def render_markdown(summary: Mapping[str, Any], *, title: str = "bugsleuth eval") -> str:
    """summary.md: the headline table (pipeline, BM25, ratio), effort, terminations and per-repository rows."""
    base = summary["baseline"]
    ratio = summary["ratio_to_baseline"]
    lines = [f"# {title}", "", f"{summary['n']} instances ({summary['errors']} errors); "
             f"function accuracy over {summary['function_n']} with function-level gold.", "",
             "| metric | bugsleuth | BM25 files | ratio |", "|---|---:|---:|---:|"]
    for key in ACCURACY_KEYS:
        lines.append(f"| {key} | {_fmt(summary[key])} | {_fmt(base.get(key))} | {_fmt(ratio.get(key))} |")
    lines.append(f"| first_range_width (median lines) | {_num(summary.get('first_range_width_median'))} | – | – |")
    lines += breakdown.line_outcomes_markdown(summary.get("line_outcomes") or {})
    lines += breakdown.calibration_markdown(summary["calibration"])
    if summary.get("per_language"):
        lines += breakdown.language_markdown(summary["per_language"])
    for name, protocol in (summary.get("protocols") or {}).items():
        if name == locagent.NAME:
            lines += breakdown.protocol_markdown(protocol, summary.get("code_commit"))
    lines += ["", "| effort | median | p95 | max |", "|---|---:|---:|---:|",
              f"| tool calls | {_num(summary['tool_calls_median'])} | {_num(summary['tool_calls_p95'])} "
              f"| {_num(summary['tool_calls_max'])} |",
              f"| seconds | {_num(summary['seconds_median'])} | | |",
              "", "Terminations: " + ", ".join(f"{k} {v}" for k, v in summary["terminations"].items()), "",
              "| repo | n | file@1 | file@5 | BM25 file@5 | MRR | BM25 MRR | function@5 | tool calls (median) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for repo, row in summary["per_repo"].items():
        lines.append(
            f"| {repo} | {row['n']} | {_fmt(row['file_acc_at_1'])} | {_fmt(row['file_acc_at_5'])} "
            f"| {_fmt(row['baseline']['file_acc_at_5'])} | {_fmt(row['mrr'])} | {_fmt(row['baseline']['mrr'])} "
            f"| {_fmt(row['function_acc_at_5'])} | {_num(row['tool_calls_median'])} |"
        )
    return "\n".join(lines) + "\n"


def render_svg(summary: Mapping[str, Any]) -> str:
    """A two-panel bar chart per repository: file Acc@5 (bugsleuth beside BM25) and median tool calls."""
    repos = list(summary["per_repo"].items())
    bar, gap, left, top, panel_h = 14, 18, 190, 40, 0
    row_h = 2 * bar + gap
    panel_h = max(1, len(repos)) * row_h
    width = left + 2 * 300 + 120
    height = top + panel_h + 60 + _CURVE_H
    max_calls = max([row["tool_calls_median"] or 0 for _, row in repos] + [1])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="20" font-weight="bold">file Acc@5 per repository</text>',
           f'<text x="{left + 360}" y="20" font-weight="bold">median tool calls</text>']
    for i, (repo, row) in enumerate(repos):
        y = top + i * row_h
        out.append(f'<text x="{left - 8}" y="{y + bar + 4}" text-anchor="end">{escape(repo)} (n={row["n"]})</text>')
        for j, (value, colour) in enumerate(((row["file_acc_at_5"], "#3465a4"),
                                             (row["baseline"]["file_acc_at_5"], "#babdb6"))):
            w = 300 * (value or 0)
            out.append(f'<rect x="{left}" y="{y + j * bar}" width="{w:.1f}" height="{bar - 2}" fill="{colour}"/>')
            out.append(f'<text x="{left + w + 4:.1f}" y="{y + j * bar + bar - 4}">{_fmt(value)}</text>')
        calls = row["tool_calls_median"] or 0
        w = 240 * calls / max_calls
        out.append(f'<rect x="{left + 360}" y="{y}" width="{w:.1f}" height="{2 * bar - 2}" fill="#73d216"/>')
        out.append(f'<text x="{left + 364 + w:.1f}" y="{y + bar + 4}">{_num(calls)}</text>')
    legend_y = top + panel_h + 25
    out += [f'<rect x="{left}" y="{legend_y - 10}" width="12" height="12" fill="#3465a4"/>',
            f'<text x="{left + 16}" y="{legend_y}">bugsleuth</text>',
            f'<rect x="{left + 100}" y="{legend_y - 10}" width="12" height="12" fill="#babdb6"/>',
            f'<text x="{left + 116}" y="{legend_y}">BM25 over files</text>']
    out += _reliability_svg(summary["calibration"], 60, legend_y + 40)
    protocol = (summary.get("protocols") or {}).get(locagent.NAME)
    if protocol:
        out += _protocol_svg(protocol, 440, legend_y + 40)
    return "\n".join(out + ["</svg>"]) + "\n"


_CURVE_H = 300
"""Height of the lower panels (reliability curve, protocol bars)."""
_PLOT = 220
"""Side of the reliability plot."""


def _reliability_svg(cal: Mapping[str, Any], x: int, y: int) -> list[str]:
    """Reliability curve: each non-empty bin's mean confidence against its share of right prime suspects."""
    size, bottom = _PLOT, y + 20 + _PLOT
    out = [f'<text x="{x}" y="{y - 14}" font-weight="bold">reliability: prime suspect right vs confidence</text>',
           f'<text x="{x}" y="{y}">ECE {_fmt(cal["ece"])} ({len(cal["bins"])} equal-width bins, '
           f'n={cal["n"]})</text>',
           f'<rect x="{x}" y="{y + 20}" width="{size}" height="{size}" fill="none" stroke="#888"/>',
           f'<line x1="{x}" y1="{bottom}" x2="{x + size}" y2="{y + 20}" stroke="#babdb6" stroke-dasharray="4"/>',
           f'<text x="{x + size / 2}" y="{bottom + 28}" text-anchor="middle">confidence</text>',
           f'<text x="{x - 8}" y="{y + 20 + size / 2}" text-anchor="end">right</text>']
    points = [(b["confidence"], b["accuracy"], b["n"]) for b in cal["bins"] if b["n"]]
    coords = [(x + size * c, bottom - size * a, n) for c, a, n in points]
    if len(coords) > 1:
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in coords)
        out.append(f'<polyline points="{path}" fill="none" stroke="#3465a4" stroke-width="2"/>')
    for px, py, n in coords:
        out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="#3465a4"/>')
        out.append(f'<text x="{px + 6:.1f}" y="{py - 6:.1f}" font-size="10">n={n}</text>')
    for tick in (0.0, 0.5, 1.0):
        out.append(f'<text x="{x + size * tick:.1f}" y="{bottom + 14}" text-anchor="middle" font-size="10">{tick}</text>')
    return out


def _protocol_svg(protocol: Mapping[str, Any], x: int, y: int) -> list[str]:
    """LocAgent protocol bars: bugsleuth and BM25 from this run, per figure."""
    out = [f'<text x="{x}" y="{y}" font-weight="bold">LocAgent protocol (n={protocol["ours"]["n"]})</text>']
    for i, (key, title) in enumerate(breakdown.PROTOCOL_COLUMNS):
        row_y = y + 20 + i * 40
        out.append(f'<text x="{x}" y="{row_y + 14}">{escape(title)}</text>')
        for j, (figures, colour) in enumerate(((protocol["ours"], "#3465a4"), (protocol["baseline"], "#babdb6"))):
            value = figures.get(key)
            w = 200 * (value or 0)
            out.append(f'<rect x="{x + 110}" y="{row_y + j * 16}" width="{w:.1f}" height="14" fill="{colour}"/>')
            out.append(f'<text x="{x + 114 + w:.1f}" y="{row_y + j * 16 + 11}">{_fmt(value)}</text>')
    return out


def write_reports(out_dir: Path, summary: Mapping[str, Any]) -> list[Path]:
    """Write summary.json, summary.md and summary.svg into `out_dir`; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "summary.json", out_dir / "summary.md", out_dir / PLOT_FILE]
    paths[0].write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    paths[1].write_text(render_markdown(summary), encoding="utf-8")
    paths[2].write_text(render_svg(summary), encoding="utf-8")
    return paths

"""Figures beside the headline table: line hits, calibration, per language, and the LocAgent protocol.

Each `*_summary` takes the scored rows of `report.summarize` (instance, record, scores) and returns the JSON part
of summary.json; each `*_markdown` renders that part as summary.md lines.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from app.evaluation import locagent, metrics
from app.evaluation.data import Instance

Row = tuple[Instance, Mapping[str, Any], Mapping[str, Any]]
"""(instance, record, scores) of one scored instance."""

LINE_KEYS = ("line_hit_at_1", "line_hit_at_1_capped", "line_hit_any")
"""Line figures, in table order."""
PROTOCOL_COLUMNS = (("file_acc_at_1", "file Acc@1"), ("file_acc_at_3", "file Acc@3"), ("file_acc_at_5", "file Acc@5"),
                    ("file_acc_at_10", "file Acc@10"), ("function_acc_at_5", "function Acc@5"),
                    ("function_acc_at_10", "function Acc@10"))
"""Protocol figures and their column titles."""


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _lines(value: float | None) -> str:
    """A line count: no needless decimals."""
    return "–" if value is None else f"{value:.1f}".removesuffix(".0")


def _mean(values: Sequence[float | None]) -> float | None:
    value = metrics.mean(values)
    return None if value is None else round(value, 3)


def line_summary(scores: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Line Hit@1, Hit@1 capped, Hit@any (over instances with gold lines) and the first range's median width."""
    widths = [float(s["first_range_width"]) for s in scores if s.get("first_range_width") is not None]
    out: dict[str, Any] = {key: _mean([s.get(key) for s in scores]) for key in LINE_KEYS}
    out["line_n"] = sum(1 for s in scores if s.get("line_hit_at_1") is not None)
    out["first_range_width_median"] = metrics.median(widths)
    out["line_cap"] = metrics.LINE_CAP
    return out


LineOutcome = Literal["hit", "wrong_file", "definition_later", "definition_missed", "range_missed",
                      "right_file_missed"]
"""Where the first cited range (at most `metrics.LINE_CAP` lines) wins or loses a changed line, first cause first:
it hits; the first file changed no line; the first cited definition is not one the fix changed, but one the fix
changed is cited later in that file; none of the file's cited definitions is one the fix changed; the first is, but
the range misses the changed lines (or is too wide); the first file is right but the data has no function-level
gold to tell the definition from the range."""
LINE_OUTCOMES: tuple[LineOutcome, ...] = ("hit", "wrong_file", "definition_later", "definition_missed", "range_missed",
                                          "right_file_missed")

_OUTCOME_WORDS: dict[str, str] = {
    "hit": "hits", "wrong_file": "first file changed no line",
    "definition_later": "right file, a changed definition cited but not first",
    "definition_missed": "right file, no changed definition cited",
    "range_missed": "right definition, the range misses", "right_file_missed": "right file, range misses",
}
"""How summary.md words each `LineOutcome`."""


def line_outcome(record: Mapping[str, Any], instance: Instance, capped_hit: float | None) -> LineOutcome | None:
    """Where one record's line Hit@1 (capped: `capped_hit`) is won or lost (`LineOutcome`); None when the instance
    has no gold lines."""
    changed = {metrics.normalize_path(p) for p, ranges in instance.gold.line_ranges.items() if ranges}
    if not changed or capped_hit is None:
        return None
    if capped_hit:
        return "hit"
    ranked = record.get("ranked_files") or []
    first = metrics.normalize_path(ranked[0]) if ranked else ""
    if first not in changed:
        return "wrong_file"
    if not instance.gold.functions:
        return "right_file_missed"
    gold = metrics.gold_entities(instance.gold.functions)
    entries = (record.get("diagnosis") or {}).get("affected_files") or []
    cited = [(metrics.normalize_path(e.get("path", "")), e.get("symbol") or "") for e in entries]
    right = [path == first and any(metrics.entity_matches(f"{path}:{symbol}", g) for g in gold)
             for path, symbol in cited]
    if right[:1] == [True]:
        return "range_missed"
    return "definition_later" if any(right) else "definition_missed"


def line_outcomes(rows: Sequence[Row]) -> dict[str, int]:
    """How many records end in each `LineOutcome` (instances with gold lines only)."""
    counts = Counter(line_outcome(r, inst, s["ours"].get("line_hit_at_1_capped")) for inst, r, s in rows)
    return {k: counts.get(k, 0) for k in LINE_OUTCOMES}


def line_outcomes_markdown(outcomes: Mapping[str, int]) -> list[str]:
    """One sentence: where the first cited range wins and loses."""
    n = sum(outcomes.values())
    if not n:
        return []
    parts = [f"{_OUTCOME_WORDS[k]} {v}" for k, v in outcomes.items() if v or k in ("hit", "wrong_file")]
    return ["", f"First cited range (≤ {metrics.LINE_CAP} lines) over {n} instances with changed lines: "
                + ", ".join(parts) + "."]


def prime_suspect_right(record: Mapping[str, Any], instance: Instance) -> bool:
    """Whether the first ranked file is one of the files the fix changed."""
    ranked = record.get("ranked_files") or []
    gold = {metrics.normalize_path(p) for p in instance.gold.files}
    return bool(ranked) and metrics.normalize_path(ranked[0]) in gold


def _confidence_pairs(rows: Sequence[Row]) -> list[tuple[float, bool]]:
    """(stated confidence, prime suspect file right) of every row whose diagnosis states one."""
    return [(float(r["diagnosis"]["confidence"]), prime_suspect_right(r, inst)) for inst, r, _ in rows
            if isinstance(r.get("diagnosis"), Mapping) and r["diagnosis"].get("confidence") is not None]


def calibration_summary(rows: Sequence[Row]) -> dict[str, Any]:
    """Expected calibration error of `confidence` against "the prime suspect file is right", with its bins."""
    pairs = _confidence_pairs(rows)
    ece, bins = metrics.calibration(pairs)
    ece_count, _ = metrics.calibration(pairs, scheme="count")
    noise = metrics.calibration_noise([c for c, _ in pairs])
    auc = metrics.discrimination(pairs)
    return {
        "ece": None if ece is None else round(ece, 3),
        "auc": None if auc is None else round(auc, 3),
        "ece_equal_count": None if ece_count is None else round(ece_count, 3),
        "ece_noise": None if noise is None else {"mean": round(noise[0], 3), "p95": round(noise[1], 3)},
        "n": len(pairs),
        "bins": [{"low": b.low, "high": b.high, "n": b.n, "confidence": _r(b.confidence), "accuracy": _r(b.accuracy)}
                 for b in bins],
        "definition": f"{metrics.CALIBRATION_BINS} equal-width bins; correct = the prime suspect file is a gold file",
    }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def language_summary(rows: Sequence[Row]) -> dict[str, Any]:
    """Per language (instances whose data names one): strict file Acc@1/Acc@5 beside BM25, and the line figures."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        if row[0].language:
            groups[row[0].language].append(row)
    out = {}
    for language, group in sorted(groups.items()):
        ours = [s["ours"] for _, _, s in group]
        base = [s["baseline"] for _, _, s in group]
        out[language] = {
            "n": len(group),
            "file_acc_at_1": _mean([s["file_acc_at_1"] for s in ours]),
            "file_acc_at_5": _mean([s["file_acc_at_5"] for s in ours]),
            "baseline": {"file_acc_at_1": _mean([s["file_acc_at_1"] for s in base]),
                         "file_acc_at_5": _mean([s["file_acc_at_5"] for s in base])},
            **line_summary(ours),
            **_trust(group),
        }
    return out


def _trust(rows: Sequence[Row]) -> dict[str, float | None]:
    """The mean stated confidence beside the share whose prime suspect is right: a calibrated confidence keeps
    them close in every language."""
    pairs = _confidence_pairs(rows)
    return {"confidence_mean": _mean([c for c, _ in pairs]),
            "prime_suspect_right": _mean([float(ok) for _, ok in pairs])}


def protocol_summary(rows: Sequence[Row]) -> dict[str, Any]:
    """The LocAgent protocol over the rows it keeps: bugsleuth's deeper ranking and BM25's, from the same run."""
    kept = set(locagent.select(inst.instance_id for inst, _, _ in rows))
    scored = [(r, s[locagent.NAME]) for inst, r, s in rows if inst.instance_id in kept]
    sources = Counter(str((r.get("ranking") or {}).get("source") or "diagnosis (no ranking recorded)")
                      for r, _ in scored)
    baseline_functions = sum(1 for r, _ in scored if (r.get("baseline_ranking") or {}).get("functions"))
    data = locagent.protocol_data()
    return {
        "ours": locagent.summarize([s["ours"] for _, s in scored]),
        "baseline": locagent.summarize([s["baseline"] for _, s in scored]),
        "excluded": len({inst.instance_id for inst, _, _ in rows} - kept),
        "ranking_sources": dict(sorted(sources.items())),
        "baseline_with_functions": baseline_functions,
        "published": data["published"],
        "published_source": data["published_source"],
        "excluded_source": data["excluded_source"],
    }


def calibration_markdown(cal: Mapping[str, Any]) -> list[str]:
    """The calibration error and the reliability table."""
    lines = ["", f"Calibration of `confidence` ({cal['definition']}; {cal['n']} diagnoses): "
                 f"expected calibration error **{_fmt(cal['ece'])}** (with five equal-count bins instead: "
                 f"{_fmt(cal.get('ece_equal_count'))}).{_noise_sentence(cal)}{_auc_sentence(cal)}", "",
             "| confidence bin | n | mean confidence | prime suspect right |", "|---|---:|---:|---:|"]
    for b in cal["bins"]:
        lines.append(f"| {b['low']:.1f}–{b['high']:.1f} | {b['n']} | {_fmt(b['confidence'])} | {_fmt(b['accuracy'])} |")
    return lines


def _auc_sentence(cal: Mapping[str, Any]) -> str:
    if cal.get("auc") is None:
        return ""
    return (f" Discrimination (AUC): {_fmt(cal['auc'])}, the chance that a right diagnosis is more confident than a "
            "wrong one (0.5: a coin).")


def _noise_sentence(cal: Mapping[str, Any]) -> str:
    noise = cal.get("ece_noise")
    if not noise:
        return ""
    return (f" A perfectly calibrated confidence would show {_fmt(noise['mean'])} on these {cal['n']} diagnoses "
            f"by chance alone (95th percentile {_fmt(noise['p95'])}).")


def language_markdown(per_language: Mapping[str, Any]) -> list[str]:
    """The per-language table."""
    lines = ["", "| language | n | file@1 | file@5 | BM25 file@1 | BM25 file@5 | line Hit@1 | Hit@1 ≤ 15 | Hit@any "
                 "| width (median) | confidence (mean) | prime suspect right |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for language, row in per_language.items():
        lines.append(f"| {language} | {row['n']} | {_fmt(row['file_acc_at_1'])} | {_fmt(row['file_acc_at_5'])} "
                     f"| {_fmt(row['baseline']['file_acc_at_1'])} | {_fmt(row['baseline']['file_acc_at_5'])} "
                     f"| {_fmt(row['line_hit_at_1'])} | {_fmt(row['line_hit_at_1_capped'])} "
                     f"| {_fmt(row['line_hit_any'])} | {_lines(row['first_range_width_median'])} "
                     f"| {_fmt(row.get('confidence_mean'))} | {_fmt(row.get('prime_suspect_right'))} |")
    return lines


def protocol_markdown(protocol: Mapping[str, Any], commit: str | None = None) -> list[str]:
    """The README-style table: the published rows, then BM25 and bugsleuth measured in this run."""
    ours, base = protocol["ours"], protocol["baseline"]
    label = f", commit {commit}" if commit else ""
    lines = ["", f"LocAgent protocol: {ours['n']} instances ({protocol['excluded']} left out), function level over "
                 f"{ours['function_n']}; Acc@k = the first k predictions hold min(k, gold) gold locations.", "",
             "| system | generative model at query time | " + " | ".join(t for _, t in PROTOCOL_COLUMNS) + " |",
             "|---|---|" + "---:|" * len(PROTOCOL_COLUMNS)]
    for row in protocol["published"]:
        cells = " | ".join(_fmt(row.get(key)) for key, _ in PROTOCOL_COLUMNS)
        lines.append(f"| {row['system']} (published) | {'yes' if row['generative'] else 'no'} | {cells} |")
    for name, figures in ((f"BM25 (this run{label})", base), (f"**bugsleuth offline** (this run{label})", ours)):
        lines.append(f"| {name} | no | " + " | ".join(_fmt(figures.get(k)) for k, _ in PROTOCOL_COLUMNS) + " |")
    sources = ", ".join(f"{k} {v}" for k, v in protocol["ranking_sources"].items())
    lines += ["", f"bugsleuth's ranking: {sources}. BM25 functions recorded for {protocol['baseline_with_functions']} "
                  "instances (by BM25 over definitions). Published figures: " + protocol["published_source"] + "."]
    return lines

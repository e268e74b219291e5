"""One line of `results.jsonl`: what an investigation's result becomes, how it is scored, and how the file is read
back (a torn last line cut off)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.evaluation import locagent, metrics
from app.evaluation.data import Instance
from app.evaluation.errors import EvalInputError

__all__ = ("RANKED_FILES", "RANKED_FUNCTIONS", "RESULTS_FILE", "deep_ranking", "describe_result", "read_results",
           "score_record")

RESULTS_FILE = "results.jsonl"
"""The records' file in an eval's output directory."""
RANKED_FILES = 10
"""Files of the deeper ranking recorded beside the diagnosis (`ranking.files`, `baseline_ranking.files`)."""
RANKED_FUNCTIONS = 15
"""Functions of the deeper ranking (`ranking.functions`, `baseline_ranking.functions`)."""


def describe_result(result: Any) -> dict[str, Any]:
    """Rankings, line ranges and counters of an InvestigationResult, as JSON-ready fields."""
    diagnosis = result.diagnosis
    ranked_functions: list[str] = []
    line_ranges: dict[str, list[list[int]]] = {}
    for item in diagnosis.affected_files:
        path = metrics.normalize_path(item.path)
        if item.symbol:
            ranked_functions.append(f"{path}:{item.symbol}")
        line_ranges.setdefault(path, []).append([item.line_start, item.line_end])
    stats = diagnosis.stats
    tool_calls = stats.tool_calls
    events = list(getattr(result, "events", None) or [])
    if not tool_calls and events:
        tool_calls = sum(1 for e in events if getattr(e, "kind", None) == "tool_call")
    ranked_files = [metrics.normalize_path(p) for p in diagnosis.ranked_files()]
    ranked_functions = list(dict.fromkeys(ranked_functions))
    located = getattr(result, "ranking", None)
    if located is not None:
        ranking = {"files": [metrics.normalize_path(p) for p in located.files][:RANKED_FILES],
                   "functions": list(located.functions)[:RANKED_FUNCTIONS], "source": located.source,
                   "raw_confidence": getattr(located, "raw_confidence", None),
                   "confidence_features": dict(getattr(located, "confidence_features", None) or {})}
    else:  # an explorer without a ranking of its own: the diagnosis' lists are all there is
        ranking = {"files": ranked_files, "functions": ranked_functions, "source": "diagnosis"}
    return {
        "ranked_files": ranked_files,
        "ranked_functions": ranked_functions,
        "ranking": ranking,
        "line_ranges": line_ranges,
        "diagnosis": json.loads(diagnosis.model_dump_json()),
        "termination": str(diagnosis.termination.reason),
        "termination_detail": diagnosis.termination.detail,
        "tool_calls": tool_calls,
        "input_tokens": stats.input_tokens,
        "output_tokens": stats.output_tokens,
        "tokens": stats.input_tokens + stats.output_tokens,
        "events": len(events),
    }


def score_record(record: dict[str, Any], instance: Instance) -> dict[str, Any]:
    """Scores of a record against its instance's gold, for the pipeline and for the baseline."""
    gold = instance.gold
    ours = metrics.score_instance(
        record.get("ranked_files") or [],
        gold.files,
        ranked_entities=record.get("ranked_functions") or [],
        gold_functions=gold.functions,
        cited_ranges=record.get("line_ranges") or {},
        gold_ranges=gold.line_ranges,
    )
    base = metrics.score_instance(record.get("baseline_files") or [], gold.files)
    return {"ours": ours.as_dict(), "baseline": base.as_dict(), locagent.NAME: {
        "ours": locagent.score(*deep_ranking(record), gold.files, gold.entities),
        "baseline": locagent.score(*deep_ranking(record, baseline=True), gold.files, gold.entities),
    }}


def deep_ranking(record: dict[str, Any], *, baseline: bool = False) -> tuple[list[str], list[str] | None]:
    """(files, functions) of a record's deeper ranking; a record written before it was kept (no `ranking`) falls
    back to the diagnosis' lists, and the baseline's to its files with functions None (not ranked)."""
    if baseline:
        ranking = record.get("baseline_ranking") or {"files": (record.get("baseline_files") or [])[:RANKED_FILES],
                                                     "functions": None}
    else:
        ranking = record.get("ranking") or {"files": record.get("ranked_files"),
                                            "functions": record.get("ranked_functions")}
    functions = ranking.get("functions")
    return list(ranking.get("files") or []), None if functions is None else list(functions)


def read_results(path: Path) -> dict[str, dict[str, Any]]:
    """Records already written, by instance id; a torn last line (killed mid-write) is cut off."""
    records: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return records
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        with path.open("r+b") as handle:
            handle.truncate(cut)
        data = data[:cut]
    for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise EvalInputError(f"{path}:{lineno}: not valid JSON; move the file away to start over") from None
        if isinstance(record, dict) and "instance_id" in record:
            records[record["instance_id"]] = record
    return records

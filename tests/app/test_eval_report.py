"""Summaries: who is counted, ratios to the baseline, and the rendered table and plot."""

from __future__ import annotations

import pytest

from app.evaluation.data import parse_instance
from app.evaluation.report import render_markdown, render_svg, summarize


def _inst(iid, repo, gold):
    return parse_instance({"instance_id": iid, "repo": repo, "base_commit": "abcd", "problem_statement": "t",
                           "gold_files": gold, "gold_functions": {}, "gold_line_ranges": {}})


def _rec(iid, ranked, baseline, calls, termination="done", error=None):
    return {"instance_id": iid, "ranked_files": ranked, "baseline_files": baseline, "tool_calls": calls,
            "seconds": 1.0, "termination": termination, "error": error}


def test_summary_counts_scored_instances_and_reads_as_ratios_to_bm25():
    instances = [_inst("a-1", "o/a", ["x.py"]), _inst("a-2", "o/a", ["y.py"]), _inst("b-1", "o/b", ["z.py"]),
                 _inst("b-2", "o/b", []), _inst("b-3", "o/b", ["w.py"])]
    records = {
        "a-1": _rec("a-1", ["x.py"], ["q.py", "x.py"], 4),
        "a-2": _rec("a-2", ["q.py", "y.py"], ["y.py"], 10),
        "b-1": _rec("b-1", [], ["z.py"], 0, termination="crashed", error="boom"),
        "b-2": _rec("b-2", ["k.py"], [], 2),  # no gold: run but not scored
        # b-3 has no record yet: not counted
    }
    summary = summarize(records, instances)
    assert summary["n"] == 3 and summary["errors"] == 1
    assert summary["file_acc_at_1"] == pytest.approx(0.333)
    assert summary["baseline"]["file_acc_at_1"] == pytest.approx(0.667)
    assert summary["ratio_to_baseline"]["file_acc_at_1"] == pytest.approx(0.5, abs=1e-3)
    assert summary["mrr"] == pytest.approx(0.5) and summary["baseline"]["mrr"] == pytest.approx(0.833)
    assert summary["tool_calls_median"] == 4 and summary["tool_calls_max"] == 10
    assert summary["terminations"] == {"crashed": 1, "done": 2}
    assert summary["per_repo"]["o/a"]["n"] == 2 and summary["per_repo"]["o/b"]["n"] == 1
    assert summary["per_repo"]["o/b"]["baseline"]["file_acc_at_1"] == 1.0
    table = render_markdown(summary)
    assert "| file_acc_at_1 | 0.333 | 0.667 | 0.500 |" in table
    assert "| o/a | 2 |" in table
    svg = render_svg(summary)
    assert svg.startswith("<svg") and "o/a (n=2)" in svg and svg.rstrip().endswith("</svg>")


def test_per_language_line_and_calibration_figures_reach_the_summary_the_table_and_the_plot():
    def inst(iid, language, gold):
        return parse_instance({"instance_id": iid, "repo": "o/r", "base_commit": "abcd", "problem_statement": "t",
                               "language": language, "gold_files": gold, "gold_line_ranges": {gold[0]: [[5, 6]]}})

    instances = [inst("g-1", "Go", ["a.go"]), inst("g-2", "Go", ["b.go"]), inst("r-1", "Rust", ["c.rs"])]
    records = {
        "g-1": {"ranked_files": ["a.go"], "line_ranges": {"a.go": [[1, 30]]}, "diagnosis": {"confidence": 0.9}},
        "g-2": {"ranked_files": ["x.go", "b.go"], "line_ranges": {"x.go": [[5, 6]], "b.go": [[6, 6]]},
                "diagnosis": {"confidence": 0.3}},
        "r-1": {"ranked_files": ["c.rs"], "line_ranges": {"c.rs": [[4, 8]]}, "diagnosis": {"confidence": 0.5}},
    }
    summary = summarize(records, instances)
    go, rust = summary["per_language"]["Go"], summary["per_language"]["Rust"]
    assert go["n"] == 2 and go["file_acc_at_1"] == 0.5 and go["line_hit_at_1"] == 0.5
    assert go["line_hit_at_1_capped"] == 0.0 and go["line_hit_any"] == 1.0 and go["first_range_width_median"] == 16
    assert rust["line_hit_at_1_capped"] == 1.0
    assert go["confidence_mean"] == 0.6 and go["prime_suspect_right"] == 0.5, "the stated trust beside the right share"
    assert summary["line_hit_at_1"] == pytest.approx(0.667, abs=1e-3) and summary["baseline"]["line_hit_at_1"] is None
    cal = summary["calibration"]
    assert cal["n"] == 3 and cal["ece"] == pytest.approx((0.1 + 0.3 + 0.5) / 3, abs=1e-3)
    assert 0 < cal["ece_noise"]["mean"] <= cal["ece_noise"]["p95"]
    markdown = render_markdown(summary)
    assert "| Go | 2 | 0.500 |" in markdown and "expected calibration error **0.300**" in markdown
    assert "would show" in markdown and "by chance alone" in markdown
    assert cal["auc"] == 1.0 and "Discrimination (AUC): 1.000" in markdown
    assert "| 16 | 0.600 | 0.500 |" in markdown  # Go's row ends with its width, mean confidence and right share
    assert "reliability" in render_svg(summary) and "<circle" in render_svg(summary)


def test_a_run_without_the_baseline_shows_no_bm25_figures_rather_than_zeros():
    instances = [_inst("a-1", "o/a", ["x.py"]),
                 parse_instance({"instance_id": "a-2", "repo": "o/a", "base_commit": "abcd", "problem_statement": "t",
                                 "language": "Go", "gold_files": ["y.go"], "gold_line_ranges": {}})]
    records = {"a-1": _rec("a-1", ["x.py"], [], 4), "a-2": _rec("a-2", ["y.go"], [], 5)}
    summary = summarize(records, instances, protocol="locagent")
    assert summary["file_acc_at_1"] == 1.0
    assert summary["baseline"]["file_acc_at_1"] is None and summary["ratio_to_baseline"] == {}
    assert summary["per_repo"]["o/a"]["baseline"]["file_acc_at_5"] is None
    assert summary["per_language"]["Go"]["baseline"] == {"file_acc_at_1": None, "file_acc_at_5": None}
    table = render_markdown(summary)
    assert "| file_acc_at_1 | 1.000 | – | – |" in table
    assert "| Go | 1 | 1.000 | 1.000 | – | – |" in table
    assert render_svg(summary).rstrip().endswith("</svg>")


def test_line_outcomes_say_whether_the_file_the_definition_or_the_range_lost_the_line():
    def inst(iid, functions):
        return parse_instance({"instance_id": iid, "repo": "o/r", "base_commit": "abcd", "problem_statement": "t",
                               "gold_files": ["a.py"], "gold_functions": functions,
                               "gold_line_ranges": {"a.py": [[50, 52]]}})

    def rec(ranked, first, symbol, *more):
        cited = [{"path": ranked[0], "symbol": symbol, "line_start": first[0], "line_end": first[1]}]
        cited += [{"path": ranked[0], "symbol": name, "line_start": 1, "line_end": 9} for name in more]
        return {"ranked_files": ranked, "line_ranges": {ranked[0]: [first]}, "diagnosis": {"affected_files": cited}}

    gold = {"a.py": ["Parser.parse"]}
    ids = ["hit", "file", "later", "missed", "range", "wide", "nofn"]
    instances = [inst(iid, {} if iid == "nofn" else gold) for iid in ids]
    records = {
        "hit": rec(["a.py"], [48, 55], "Parser.parse"),
        "file": rec(["b.py", "a.py"], [48, 55], "Parser.parse"),
        "later": rec(["a.py"], [10, 20], "Parser.tokens", "Parser.parse"),
        "missed": rec(["a.py"], [10, 20], "Parser.tokens", "Parser.peek"),
        "range": rec(["a.py"], [30, 40], "Parser.parse"),
        "wide": rec(["a.py"], [30, 60], "Parser.parse"),  # holds the line, but wider than 15 lines
        "nofn": rec(["a.py"], [10, 20], "Parser.tokens"),
    }
    summary = summarize(records, instances)
    assert summary["line_outcomes"] == {"hit": 1, "wrong_file": 1, "definition_later": 1, "definition_missed": 1,
                                        "range_missed": 2, "right_file_missed": 1}
    table = render_markdown(summary)
    assert "over 7 instances with changed lines: hits 1, first file changed no line 1" in table
    assert "a changed definition cited but not first 1" in table
    assert "right definition, the range misses 2" in table

"""The LocAgent protocol: its excluded ids, its Acc@k and its function names, on hand-made rankings."""

from __future__ import annotations

import json

import pytest

from app.evaluation import locagent
from app.evaluation.data import parse_instance
from app.evaluation.report import render_markdown, render_svg, summarize
from app.evaluation.records import score_record


def test_the_excluded_ids_are_the_26_lite_ids_of_locagents_eval_metric():
    ids = locagent.excluded_ids()
    assert len(ids) == 26 == len(locagent.protocol_data()["excluded_ids"])  # no duplicate in the data file
    assert {"django__django-10914", "pytest-dev__pytest-5227", "sympy__sympy-20590"} <= ids
    assert all("__" in i for i in ids)
    assert "utils/eval_metric.py" in locagent.protocol_data()["excluded_source"]
    assert locagent.select(["django__django-10914", "django__django-11133"]) == ["django__django-11133"]


def test_acc_at_k_needs_min_k_gold_items_not_every_gold_item():
    gold = ["a.py", "b.py", "c.py"]
    assert locagent.acc_at_k(["a.py", "x.py"], gold, 1) == 1.0  # one slot, one gold file: enough
    assert locagent.acc_at_k(["x.py", "a.py"], gold, 1) == 0.0
    assert locagent.acc_at_k(["a.py", "b.py", "x.py"], gold, 3) == 0.0  # three slots need all three
    assert locagent.acc_at_k(["a.py", "c.py", "b.py"], gold, 3) == 1.0
    assert locagent.acc_at_k(["a.py", "a.py", "x.py", "y.py", "z.py"], ["a.py", "b.py"], 5) == 0.0  # no double count
    assert locagent.acc_at_k(["x.py", "y.py", "a.py", "q.py", "r.py", "b.py"], ["a.py", "b.py"], 5) == 0.0
    assert locagent.acc_at_k(["x.py"], [], 5) is None


def test_functions_match_exactly_with_init_as_its_class_and_module_changes_left_out():
    gold = locagent.gold_functions({"m.py": ["A.__init__", "A", "<module>", "f"], "n.py": ["B.run"]})
    assert gold == ["m.py:A", "m.py:f", "n.py:B.run"]
    assert locagent.entity("m.py:A.__init__") == "m.py:A"
    assert locagent.entity("./m.py:A.B.__init__") == "m.py:A.B"
    scores = locagent.score(["m.py"], ["m.py:A.m", "m.py:f"], ["m.py"], {"m.py": ["A", "f"]})
    assert scores["function_acc_at_5"] == 0.0  # A.m is not the class A: exact names, not the liberal match
    scores = locagent.score(["m.py"], ["m.py:A.__init__", "m.py:f"], ["m.py"], {"m.py": ["A", "f"]})
    assert scores["function_acc_at_5"] == 1.0 and scores["file_acc_at_1"] == 1.0
    assert locagent.score(["m.py"], None, ["m.py"], {"m.py": ["f"]})["function_acc_at_10"] is None


def _inst(iid, gold, entities):
    return parse_instance({"instance_id": iid, "repo": "o/r", "base_commit": "abcd", "problem_statement": "t",
                           "gold_files": gold, "gold_entities": entities})


def test_the_protocol_scores_the_deeper_ranking_and_leaves_the_excluded_ids_out():
    kept, left_out = _inst("o__r-1", ["a.py"], {"a.py": ["f"]}), _inst("django__django-10914", ["a.py"], {})
    deep = {"files": [f"x{i}.py" for i in range(6)] + ["a.py"], "functions": ["a.py:g", "a.py:f"],
            "source": "offline"}
    records = {
        "o__r-1": {"instance_id": "o__r-1", "ranked_files": ["x0.py"], "ranking": deep, "baseline_files": ["a.py"],
                   "baseline_ranking": {"files": ["a.py"], "functions": []}},
        "django__django-10914": {"instance_id": "django__django-10914", "ranked_files": []},
    }
    for iid, inst in (("o__r-1", kept), ("django__django-10914", left_out)):
        records[iid]["scores"] = score_record(records[iid], inst)
    summary = summarize(records, [kept, left_out], protocol="locagent")
    protocol = summary["protocols"]["locagent"]
    assert protocol["ours"]["n"] == 1 and protocol["excluded"] == 1
    assert protocol["ours"]["file_acc_at_5"] == 0.0 and protocol["ours"]["file_acc_at_10"] == 1.0  # rank 7
    assert protocol["ours"]["function_acc_at_5"] == 1.0
    assert protocol["baseline"]["file_acc_at_1"] == 1.0 and protocol["baseline"]["function_acc_at_10"] == 0.0
    assert protocol["ranking_sources"] == {"offline": 1}
    markdown = render_markdown(summary)
    assert "| LocAgent + Claude 3.5 (published) | yes | 0.777 |" in markdown
    assert "| BM25 (this run) | no | 1.000 |" in markdown and "**bugsleuth offline** (this run)" in markdown
    assert "LocAgent protocol (n=1)" in render_svg(summary)
    json.dumps(summary)


def test_without_the_protocol_the_summary_has_no_protocol_section():
    inst = _inst("o__r-1", ["a.py"], {})
    record = {"instance_id": "o__r-1", "ranked_files": ["a.py"]}
    record["scores"] = score_record(record, inst)
    assert "protocols" not in summarize({"o__r-1": record}, [inst])


@pytest.mark.parametrize("row", locagent.protocol_data()["published"])
def test_published_rows_carry_every_column_of_the_readme_table(row):
    assert {"system", "generative", "file_acc_at_1", "file_acc_at_5", "function_acc_at_10"} <= set(row)

"""Localization metrics on hand-computed rankings."""

from __future__ import annotations

import pytest

from app.evaluation import metrics


def test_file_accuracy_needs_every_gold_file_within_k():
    ranked = ["a.py", "b.py", "c.py", "d.py"]
    assert metrics.acc_at_k(ranked, ["b.py"], 1) == 0.0
    assert metrics.acc_at_k(ranked, ["b.py"], 3) == 1.0
    assert metrics.acc_at_k(ranked, ["a.py", "d.py"], 3) == 0.0
    assert metrics.acc_at_k(ranked, ["a.py", "d.py"], 5) == 1.0


def test_file_accuracy_counts_distinct_files_and_normalizes_paths():
    ranked = ["./a.py", "a.py", "/a.py", "b.py"]
    assert metrics.acc_at_k(ranked, ["b.py"], 2) == 1.0


def test_no_gold_scores_zero():
    assert metrics.acc_at_k(["a.py"], [], 1) == 0.0
    assert metrics.reciprocal_rank(["a.py"], []) == 0.0


def test_mrr_uses_the_first_gold_file():
    assert metrics.reciprocal_rank(["x.py", "y.py", "g2.py", "g1.py"], ["g1.py", "g2.py"]) == pytest.approx(1 / 3)
    assert metrics.reciprocal_rank(["x.py"], ["g.py"]) == 0.0
    assert metrics.first_gold_rank(["x.py", "g.py"], ["g.py"]) == 2


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        ("m.py:Cls.meth", "m.py:Cls.meth", True),
        ("m.py:meth", "m.py:Cls.meth", True),  # the plain name of a method counts
        ("m.py:Cls.meth", "m.py:Cls", True),  # a method counts for its class
        ("m.py:Cls.meth", "m.py:meth", True),
        ("m.py:Other.meth2", "m.py:Cls.meth", False),
        ("n.py:Cls.meth", "m.py:Cls.meth", False),  # other file
        ("m.py:Cls", "m.py:Cls.meth", False),  # a class does not name one of its methods
    ],
)
def test_entity_matching_accepts_class_qualified_and_plain_names(predicted, gold, expected):
    assert metrics.entity_matches(predicted, gold) is expected


def test_function_accuracy_within_five_and_module_level_left_out():
    gold = metrics.gold_entities({"m.py": ["Cls.meth", "<module>"], "n.py": ["helper"]})
    assert gold == ["m.py:Cls.meth", "n.py:helper"]
    ranked = ["a.py:x", "m.py:meth", "b.py:y", "c.py:z", "n.py:helper", "d.py:w"]
    assert metrics.function_acc_at_k(ranked, gold, 5) == 1.0
    assert metrics.function_acc_at_k(ranked, gold, 4) == 0.0
    assert metrics.score_instance([], ["m.py"], gold_functions={"m.py": ["<module>"]}).function_acc is None


def test_line_overlap_is_the_share_of_gold_ranges_touched():
    gold = {"m.py": [[10, 12], [30, 30]], "n.py": [[5, 6]]}
    cited = {"m.py": [[12, 20]], "./n.py": [[1, 4]]}
    assert metrics.line_overlap(cited, gold) == pytest.approx(1 / 3)
    assert metrics.line_overlap({"m.py": [[1, 100]], "n.py": [[6, 6]]}, gold) == 1.0
    assert metrics.line_overlap({}, gold) == 0.0
    assert metrics.line_overlap(cited, {}) is None


def test_percentiles_and_median():
    assert metrics.median([3, 1, 2]) == 2
    assert metrics.percentile([0, 10], 95) == pytest.approx(9.5)
    assert metrics.percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert metrics.percentile([], 95) is None
    assert metrics.mean([1.0, None, 0.0]) == 0.5

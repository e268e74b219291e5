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


def test_line_hit_at_1_reads_only_the_first_range_of_the_first_file():
    gold = {"a.py": [[40, 42]]}
    cited = {"a.py": [[1, 5], [40, 41]], "b.py": [[40, 42]]}
    score = metrics.line_score(["a.py", "b.py"], cited, gold)
    assert score.hit_at_1 == 0.0 and score.hit_any == 1.0 and score.first_width == 5
    assert metrics.line_score(["b.py", "a.py"], cited, gold).hit_at_1 == 0.0  # same lines, other file
    assert metrics.line_score(["a.py"], {"a.py": [[42, 60]]}, gold).hit_at_1 == 1.0
    assert metrics.line_score([], {}, gold).hit_at_1 == 0.0
    assert metrics.line_score(["a.py"], cited, {}) is None


def test_a_first_range_wider_than_the_cap_cannot_buy_the_capped_hit():
    gold = {"./a.py": [[50, 50]]}
    wide = metrics.line_score(["a.py"], {"a.py": [[40, 55]]}, gold)  # 16 lines
    narrow = metrics.line_score(["a.py"], {"a.py": [[41, 55]]}, gold)  # 15 lines
    assert wide.hit_at_1 == 1.0 and wide.hit_at_1_capped == 0.0 and wide.first_width == 16
    assert narrow.hit_at_1_capped == 1.0 and narrow.first_width == metrics.LINE_CAP


def test_calibration_error_is_the_share_weighted_gap_over_equal_width_bins():
    ece, bins = metrics.calibration([(0.1, False), (0.1, True), (0.9, True), (0.95, True)])
    assert ece == pytest.approx(0.5 * 0.4 + 0.5 * 0.075)
    assert [b.n for b in bins] == [2, 0, 0, 0, 2] and bins[1].accuracy is None
    _, edges = metrics.calibration([(0.2, True), (1.0, True), (0.0, False)])
    assert [b.n for b in edges] == [1, 1, 0, 0, 1]  # 0.2 opens the second bin, 1.0 closes the last
    perfect, _ = metrics.calibration([(0.5, True), (0.5, False)])
    assert perfect == pytest.approx(0.0)
    assert metrics.calibration([])[0] is None


def test_discrimination_is_the_chance_a_right_diagnosis_is_more_confident_than_a_wrong_one():
    assert metrics.discrimination([(0.9, True), (0.8, True), (0.2, False)]) == 1.0
    assert metrics.discrimination([(0.2, True), (0.9, False)]) == 0.0
    assert metrics.discrimination([(0.5, True), (0.5, False), (0.7, True), (0.3, False)]) == pytest.approx(0.875)
    assert metrics.discrimination([(0.5, True), (0.9, True)]) is None  # no wrong one to compare with


def test_the_calibration_noise_floor_shrinks_with_more_diagnoses_and_is_repeatable():
    few = metrics.calibration_noise([0.3, 0.5, 0.7] * 30)
    many = metrics.calibration_noise([0.3, 0.5, 0.7] * 300)
    assert few == metrics.calibration_noise([0.3, 0.5, 0.7] * 30)  # the same seed, the same figures
    assert 0 < many[0] < few[0] < few[1] < 0.2
    assert metrics.calibration_noise([1.0, 0.0] * 10) == (0.0, 0.0)  # certain confidences are never wrong by chance
    assert metrics.calibration_noise([]) is None


def test_equal_count_bins_cut_the_sorted_confidences_into_groups_of_equal_size():
    pairs = [(0.31, True), (0.32, False), (0.33, True), (0.34, True), (0.35, True)]
    ece, bins = metrics.calibration(pairs, bins=5, scheme="count")
    assert [b.n for b in bins] == [1, 1, 1, 1, 1] and bins[1].accuracy == 0.0 and bins[1].low == 0.32
    assert ece == pytest.approx((0.69 + 0.32 + 0.67 + 0.66 + 0.65) / 5)
    width_ece, width_bins = metrics.calibration(pairs)
    assert [b.n for b in width_bins] == [0, 5, 0, 0, 0] and width_ece == pytest.approx(abs(0.33 - 0.8))

"""The confidence's calibration: a default mapping, groups of languages with their own (a curve of the raw value or a
logistic model of the ranking's features), and the raw value and features kept."""

from __future__ import annotations

import json
import math

import pytest

from bench.fit_calibration import cross_validated_auc, logistic, logistic_model, with_group
from funnel.localize.calibration import (
    TEXT_SOURCE,
    Calibration,
    Logistic,
    apply_curve,
    apply_fit,
    load_calibration,
    prime_language,
)
from funnel.localize.candidates import CONFIDENCE_FEATURES
from funnel.localize.citations import ranked_locations
from funnel.localize.corpus import Corpus
from funnel.localize.rank import rank
from repomap.focus import Focus
from repomap.languages import BY_NAME


def test_a_language_group_has_its_own_curve_and_every_other_language_the_default(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"raw": [0.2, 0.8], "probability": [0.3, 0.9],
                                "groups": [{"languages": ["go", "rust"], "raw": [0.2, 0.8], "probability": [0.1, 0.5]}]}))
    cal = load_calibration(path)
    assert apply_curve(cal.fit_for("go"), 0.5) == pytest.approx(0.3)
    assert apply_curve(cal.fit_for("python"), 0.5) == pytest.approx(0.6)
    assert apply_curve(cal.fit_for(None), 0.9) == 0.9, "an unknown language takes the default, flat past its end"
    assert prime_language("pkg/queue/ring.go") == "go" and prime_language("src/lib.rs") == "rust"
    assert prime_language("README.md") is None and prime_language(None) is None


def test_a_logistic_group_reads_the_ranking_s_features_and_the_default_curve_its_raw_value(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"raw": [0.2, 0.8], "probability": [0.3, 0.9], "groups": [
        {"languages": ["go"], "model": {"features": ["margin", "stem"], "weights": [2.0, 1.0], "intercept": -1.0}}]}))
    cal = load_calibration(path)
    go = cal.fit_for("go")
    assert isinstance(go, Logistic)
    named = apply_fit(go, 0.4, {"margin": 0.5, "stem": 1.0})
    unnamed = apply_fit(go, 0.4, {"margin": 0.5, "stem": 0.0})
    assert named == pytest.approx(1 / (1 + math.exp(-1.0))) and unnamed == pytest.approx(0.5)
    assert apply_fit(go, 0.4, {}) == 0.4, "a ranking without features (no candidate) keeps its raw value"
    assert apply_fit(cal.fit_for("python"), 0.5, {"margin": 0.9}) == pytest.approx(0.6)
    steep = Logistic(("margin",), (1e6,), 0.0)
    assert steep.probability({"margin": -1.0}) < 1e-6 < 1 - 1e-6 < steep.probability({"margin": 1.0})


def test_a_model_naming_a_feature_the_ranking_does_not_record_or_lacking_a_part_is_refused(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"model": {"features": ["margin", "stars"], "weights": [1.0, 1.0], "intercept": 0}}))
    with pytest.raises(ValueError, match="unknown: stars"):
        load_calibration(path)
    path.write_text(json.dumps({"model": {"features": ["margin"], "weights": [1.0]}}))
    with pytest.raises(ValueError, match="numeric 'intercept'"):
        load_calibration(path)


def test_the_deeper_ranking_keeps_the_raw_confidence_and_which_pointers_name_the_prime_suspect(tmp_path):
    (tmp_path / "calc.py").write_text("def divide(a, b):\n    return a / b\n")
    (tmp_path / "util.py").write_text("def log(msg):\n    print(msg)\n")
    corpus = Corpus.build(tmp_path, ["calc.py", "util.py"])
    text = "divide raises ZeroDivisionError\n\n`divide(1, 0)` in calc.py crashes."
    ranking = rank(corpus, text, Focus.from_text(text))
    features = ranking.confidence_features
    assert ranking.candidates[0].path == "calc.py"
    assert set(features) == set(CONFIDENCE_FEATURES) and 0 < features["margin"] <= 1
    assert features["mention"] == 1.0 and features["frame"] == 0.0
    located = ranked_locations(ranking, corpus)
    assert located.confidence_features == features and located.raw_confidence == ranking.confidence > 0


def test_a_prime_suspect_with_no_grammar_takes_the_other_languages_curve_not_pythons():
    assert prime_language("src/builtin.jq") == TEXT_SOURCE and prime_language("app/Invoice.groovy") == TEXT_SOURCE
    cal = load_calibration()
    assert cal.fit_for(TEXT_SOURCE) == cal.fit_for("go") != cal.fit_for("python")


def test_csharp_kotlin_php_swift_and_scala_take_the_mapping_fitted_on_their_own_projects_fix_commits():
    languages = [prime_language(p) for p in ("a/B.cs", "a/B.kt", "a/b.php", "a/B.swift", "a/B.scala")]
    assert languages == ["csharp", "kotlin", "php", "swift", "scala"]
    cal = load_calibration()
    assert all(cal.fit_for(language) == cal.fit_for("csharp") != cal.fit_for("go") for language in languages)
    # a lead of term counts alone (no name of the report defined there) is worth less in these languages: where
    # the other languages' mapping said 0.6 to 0.8, the prime suspect was right about a third of the time
    lead = {"margin": 0.3, "stem": 0.0, "mention": 0.0}
    assert apply_fit(cal.fit_for("kotlin"), 0.6, lead) < apply_fit(cal.fit_for("go"), 0.6, lead)


def test_fitting_a_group_takes_its_languages_out_of_other_groups_and_keeps_the_rest_of_them():
    data = {"raw": [0.0, 1.0], "probability": [0.1, 0.9],
            "groups": [{"languages": ["go", "csharp"], "raw": [0.0], "probability": [0.5]},
                       {"languages": ["kotlin"], "raw": [0.0], "probability": [0.4]}]}
    out = with_group(data, ["csharp", "kotlin"], {"raw": [0.0], "probability": [0.3]})
    assert [g["languages"] for g in out["groups"]] == [["csharp", "kotlin"], ["go"]]
    assert out["groups"][1]["probability"] == [0.5] and out["raw"] == [0.0, 1.0]


def test_the_shipped_curves_are_monotone_and_name_only_known_languages():
    cal = load_calibration()
    assert isinstance(cal, Calibration)
    for names, fit in ((frozenset(), cal.default), *cal.groups):
        assert names <= BY_NAME.keys() | {TEXT_SOURCE}
        if isinstance(fit, Logistic):
            assert set(fit.features) <= set(CONFIDENCE_FEATURES) and len(fit.weights) == len(fit.features)
            assert fit.weights[fit.features.index("margin")] > 0, "a wider lead never lowers the confidence"
        else:
            raw, prob = fit
            assert list(raw) == sorted(raw) and list(prob) == sorted(prob) and 0.0 <= prob[0] <= prob[-1] <= 1.0


def test_a_fitted_confidence_model_weighs_the_feature_that_separates_right_from_wrong_and_not_the_noise():
    # the prime suspect is right when the report writes its file name; `mention` fires at random
    points = [(0.5, float(k % 3 != 0), "go", {"margin": 0.2, "stem": float(k % 3 != 0), "mention": float(k % 2)})
              for k in range(60)]
    model = logistic_model(points, ["stem", "mention"])
    stem, mention = model.weights
    assert stem > 1.0 and abs(mention) < 0.2 * stem
    assert model.probability({"stem": 1.0, "mention": 0.0}) > 0.8 > 0.2 > model.probability({"stem": 0.0})
    assert cross_validated_auc(points, ["stem", "mention"], 1.0) > cross_validated_auc(points, ["mention"], 1.0)


def test_platt_scaling_rises_with_the_raw_value_and_meets_the_rate_where_it_is_even():
    # right in 1 of 4 below 0.5 and in 3 of 4 above: the curve crosses one half at 0.5
    points = [(x / 100, float((k % 4 != 0) == (x >= 50)), "python", {}) for x in range(0, 100, 5) for k in range(4)]
    xs, ys = logistic(points)
    assert xs[0] == 0.0 and xs[-1] == 1.0 and len(xs) == 11
    assert ys == sorted(ys) and ys[0] < 0.25 < 0.75 < ys[-1]
    assert ys[5] == pytest.approx(0.5, abs=0.05)

"""The confidence's calibration curves: a default, groups of languages with their own, and the raw value kept."""

from __future__ import annotations

import json

import pytest

from funnel.localize.calibration import TEXT_SOURCE, Calibration, apply_curve, load_calibration, prime_language
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
    assert apply_curve(cal.curve_for("go"), 0.5) == pytest.approx(0.3)
    assert apply_curve(cal.curve_for("python"), 0.5) == pytest.approx(0.6)
    assert apply_curve(cal.curve_for(None), 0.9) == 0.9, "an unknown language takes the default, flat past its end"
    assert prime_language("pkg/queue/ring.go") == "go" and prime_language("src/lib.rs") == "rust"
    assert prime_language("README.md") is None and prime_language(None) is None


def test_a_prime_suspect_with_no_grammar_takes_the_other_languages_curve_not_pythons():
    assert prime_language("src/builtin.jq") == TEXT_SOURCE and prime_language("app/Invoice.kt") == TEXT_SOURCE
    cal = load_calibration()
    assert cal.curve_for(TEXT_SOURCE) == cal.curve_for("go") != cal.curve_for("python")


def test_the_shipped_curves_are_monotone_and_name_only_known_languages():
    cal = load_calibration()
    assert isinstance(cal, Calibration)
    for names, (raw, prob) in ((frozenset(), cal.default), *cal.groups):
        assert names <= BY_NAME.keys() | {TEXT_SOURCE}
        assert list(raw) == sorted(raw) and list(prob) == sorted(prob) and 0.0 <= prob[0] <= prob[-1] <= 1.0


def test_the_deeper_ranking_keeps_the_raw_confidence_before_calibration(tmp_path):
    (tmp_path / "calc.py").write_text("def divide(a, b):\n    return a / b\n")
    (tmp_path / "util.py").write_text("def log(msg):\n    print(msg)\n")
    corpus = Corpus.build(tmp_path, ["calc.py", "util.py"])
    text = "divide raises ZeroDivisionError\n\n`divide(1, 0)` in calc.py crashes."
    ranking = rank(corpus, text, Focus.from_text(text))
    located = ranked_locations(ranking, corpus)
    assert located.raw_confidence == ranking.confidence > 0

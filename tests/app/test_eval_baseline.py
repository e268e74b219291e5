"""The BM25 baseline: tokenization, the non-test document set, and a ranking that finds the obvious file."""

from __future__ import annotations

from app.evaluation.baseline import bm25_rank, bm25_rank_functions, is_test_path, source_files, tokenize


def test_tokenize_splits_camel_and_snake_case_and_lowercases():
    assert tokenize("parseHTTPResponse snake_case_name int64Value") == [
        "parse", "http", "response", "snake", "case", "name", "int64", "value"]
    assert tokenize("CompoundModel.separability_matrix()") == ["compound", "model", "separability", "matrix"]


def test_test_files_are_recognised():
    assert is_test_path("pkg/tests/test_core.py")
    assert is_test_path("testing/foo.py")
    assert is_test_path("pkg/test_x.py") and is_test_path("pkg/conftest.py") and is_test_path("web/a.spec.ts")
    assert not is_test_path("src/_pytest/python.py")
    assert not is_test_path("pkg/contest.py")


def test_bm25_ranks_the_file_the_report_talks_about_first(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "money.py").write_text("def convert_currency(amount, rate):\n    return amount * rate\n")
    (tmp_path / "pkg" / "names.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    (tmp_path / "pkg" / "app.js").write_text("function renderWidget(widget) { return widget.html; }\n")
    (tmp_path / "tests" / "test_money.py").write_text("convert_currency convert currency rate amount\n" * 20)
    assert source_files(tmp_path) == ["pkg/app.js", "pkg/money.py", "pkg/names.py"]
    ranked = bm25_rank(tmp_path, "convertCurrency returns the wrong amount when the rate is zero")
    assert ranked[0] == "pkg/money.py"
    assert "tests/test_money.py" not in ranked
    assert bm25_rank(tmp_path, "renderWidget is broken")[0] == "pkg/app.js"
    assert bm25_rank(tmp_path, "zzz qqq") == []


def test_bm25_over_definitions_ranks_the_function_the_report_describes(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "money.py").write_text(
        "class Converter:\n    rate_table = {'eur': 1.1}\n\n    def convert(self, amount, rate):\n"
        "        def rounding(x):\n            return round(x, 2)\n        return rounding(amount * rate)\n\n"
        "    def describe(self):\n        return 'converter'\n\n\ndef greet(name):\n    return 'hello ' + name\n")
    (tmp_path / "tests" / "test_money.py").write_text("def test_convert():\n    convert amount rate rounding\n")
    ranked = bm25_rank_functions(tmp_path, "convert rounds the amount times the rate wrong")
    assert ranked[0] == "pkg/money.py:Converter.convert"  # the nested rounding() is part of its document
    assert not any(r.startswith("tests/") or r.endswith(".rounding") for r in ranked)
    assert bm25_rank_functions(tmp_path, "rate_table eur")[0] == "pkg/money.py:Converter"  # the class' own lines
    assert bm25_rank_functions(tmp_path, "zzz qqq") == []

"""The learned reranker: its file, its reordering of the fused ranking, and the script that fits it."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from bench.fit_ranker import file_scores, fit, function_scores, in_file_order, items
from bench.function_features import line_entities
from bench.rank_features import dump_line
from funnel.localize.candidates import (
    Candidate,
    CandidateRanking,
    CandidateSymbol,
    RankConfig,
)
from funnel.localize.citations import citation_order
from funnel.localize.corpus import Corpus, SymbolSpan
from funnel.localize.learned import (
    DEFAULT_RANKER,
    FILE_FEATURES,
    FUNCTION_FEATURES,
    LearnedRanker,
    LinearModel,
    RankerFileError,
    definition_rows,
    keep_slots,
    load_ranker,
    order_definitions,
    rerank,
    reranks,
)
from funnel.localize.rank import rank
from repomap.focus import Focus

REPO = {
    "src/parser.py": "def parse_header(raw):\n    return raw.split(':')\n",
    "src/header_tests_helper.py": "def parse_header_twice(raw):\n    return parse_header(parse_header(raw))\n",
    "tests/test_parser.py": "def test_parse_header():\n    assert parse_header('a:b')\n",
}
REPORT = "parse_header splits on every colon\n\nparse_header('a:b:c') gives three parts instead of two."


def _corpus(tmp_path, files=REPO):
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return Corpus.build(tmp_path, sorted(files), cache_dir=tmp_path / ".cache")


def _model(names, pool=10, **weights: float) -> LinearModel:
    return LinearModel(tuple(weights.get(n, 0.0) for n in names), (0.0,) * len(names), (1.0,) * len(names),
                       tuple(names), pool)


def _ranker(**weights: float) -> LearnedRanker:
    return LearnedRanker(files=_model(FILE_FEATURES, **weights), functions=_model(FUNCTION_FEATURES, **weights))


def _write(tmp_path, ranker: LearnedRanker):
    path = tmp_path / "ranker.json"
    path.write_text(ranker.to_json())
    return path


def test_the_shipped_ranker_loads_and_names_only_known_features():
    ranker = load_ranker()
    assert ranker.files is not None and ranker.functions is not None
    assert set(ranker.files.names) <= set(FILE_FEATURES)
    assert set(ranker.functions.names) <= set(FUNCTION_FEATURES)
    assert len(ranker.files.weights) == len(ranker.files.names)
    assert ranker.trained_on, "the shipped models say what they were fitted on"
    assert load_ranker(DEFAULT_RANKER) is ranker


def test_a_ranker_file_round_trips_through_its_json(tmp_path):
    ranker = _ranker(file=1.5, is_test=-2.0)
    loaded = load_ranker(_write(tmp_path, ranker))
    assert loaded.files == ranker.files and loaded.functions == ranker.functions


def _section(**fields):
    return json.dumps({"files": {"names": ["file"], "weights": [1.0], "mean": [0.0], "scale": [1.0], **fields}})


@pytest.mark.parametrize(("text", "why"), [
    ("{not json", "not a ranker file"),
    ("[1, 2]", "a JSON object is expected"),
    (json.dumps({"rules": {}}), "unknown sections rules"),
    (_section(weights=[1.0, 2.0]), "'files': names, weights, mean and scale differ in length"),
    (_section(names=["stars"]), "'files': unknown features stars"),
    (json.dumps({"functions": {"names": ["file"], "weights": [1.0], "mean": [0.0], "scale": [1.0]}}),
     "'functions': unknown features file"),
    (_section(pool=0), "pool must be at least 1"),
    (json.dumps({"files": {"names": ["file"]}}), "section 'files' is not a model"),
])
def test_a_broken_ranker_file_is_refused_with_the_reason(tmp_path, text, why):
    path = tmp_path / "ranker.json"
    path.write_text(text)
    with pytest.raises(RankerFileError, match=why):
        load_ranker(path)


def test_a_missing_ranker_file_is_refused_with_its_path(tmp_path):
    with pytest.raises(RankerFileError, match="cannot read the ranker file"):
        load_ranker(tmp_path / "absent.json")


EVERY_FILE = RankConfig(learned_keep_first=False, learned_languages=())


def test_the_reranker_reorders_by_the_model_each_position_keeps_its_score_and_each_file_its_lift(tmp_path):
    corpus = _corpus(tmp_path)
    cands = [Candidate("tests/test_parser.py", 3.0, {"file": 1.4}, lift=0.5),
             Candidate("src/header_tests_helper.py", 2.0, {"file": 0.7}),
             Candidate("src/parser.py", 1.0, {"file": 0.35, "symbol": 0.8})]
    slots = rerank(cands, corpus, EVERY_FILE, _model(FILE_FEATURES, is_test=-5.0, symbol=2.0))
    assert [c.path for c in cands] == ["src/parser.py", "src/header_tests_helper.py", "tests/test_parser.py"]
    assert "the learned ranker put it first (the fusion had it at 3)" in cands[0].reasons
    keep_slots(cands, slots)
    assert [(c.score, c.lift) for c in cands] == [(3.0, 0.0), (2.0, 0.0), (1.0, 0.5)]


def test_the_reranker_does_not_lift_the_projects_tooling_over_its_code(tmp_path):
    files = {"src/theme.js": "export function theme(name) { return name }\n",
             "scripts/preview-theme.js": "const theme = require('../src/theme')\n" * 40}
    corpus = _corpus(tmp_path, files)
    model = _model(FILE_FEATURES, log_size=0.5, symbol=0.5)

    def order(config):
        cands = [Candidate("src/theme.js", 2.0, {"file": 0.7, "symbol": 0.8}),
                 Candidate("scripts/preview-theme.js", 1.0, {"file": 1.4})]
        rerank(cands, corpus, config, model)
        return [c.path for c in cands]

    assert order(dataclasses.replace(EVERY_FILE, learned_tooling_penalty=0.0))[0] == "scripts/preview-theme.js"
    assert order(EVERY_FILE) == ["src/theme.js", "scripts/preview-theme.js"]


def test_by_default_the_reranker_leaves_the_first_file_where_the_evidence_put_it(tmp_path):
    corpus = _corpus(tmp_path)
    cands = [Candidate("tests/test_parser.py", 3.0, {"file": 1.4}),
             Candidate("src/header_tests_helper.py", 2.0, {"file": 0.7}),
             Candidate("src/parser.py", 1.0, {"file": 0.35, "symbol": 0.8})]
    rerank(cands, corpus, RankConfig(), _model(FILE_FEATURES, is_test=-5.0, symbol=2.0))
    assert [c.path for c in cands] == ["tests/test_parser.py", "src/parser.py", "src/header_tests_helper.py"]
    assert "the learned ranker put it second (the fusion had it at 3)" in cands[1].reasons


def test_rank_uses_the_learned_file_model_only_when_asked(tmp_path):
    corpus = _corpus(tmp_path)
    ranker_file = _write(tmp_path, _ranker(is_test=10.0))
    off = dataclasses.replace(EVERY_FILE, learned_files=False, ranker=str(ranker_file))
    plain = rank(corpus, REPORT, Focus.from_text(REPORT), config=off)
    learned = rank(corpus, REPORT, Focus.from_text(REPORT), config=dataclasses.replace(off, learned_files=True))
    assert plain.candidates[0].path != "tests/test_parser.py"
    assert learned.candidates[0].path == "tests/test_parser.py"
    assert [c.score for c in learned.candidates] == [c.score for c in plain.candidates], "each place keeps its score"


GO = {"queue/ring.go": "package queue\n\nfunc Pop() int { return 0 }\n", "queue/ring_test.go": "package queue\n",
      "src/ring.h": "namespace q {\ntemplate <class T> class Ring { public: T pop(); };\n}\n",
      "src/lib.py": "def pop():\n    return 0\n"}


@pytest.mark.parametrize(("prime", "expected"), [
    ("queue/ring.go", True),
    ("src/lib.py", False),  # Python: the model lowers Acc@5 on SWE-bench Lite's tune half
    ("src/ring.h", False),  # a C++ header is C++, not C, read from its text
])
def test_the_file_model_reorders_only_where_the_prime_suspect_is_in_its_languages(tmp_path, prime, expected):
    corpus = _corpus(tmp_path, GO)
    cands = [Candidate(prime, 1.0)] + [Candidate(p, 0.5) for p in GO if p != prime]
    assert reranks(cands, corpus, RankConfig()) is expected
    assert reranks(cands, corpus, RankConfig(learned_files=False)) is False
    assert reranks(cands, corpus, RankConfig(learned_languages=())) is True


def _sym(name: str, start: int, end: int, score: float, kind: str = "function") -> CandidateSymbol:
    return CandidateSymbol(SymbolSpan(name, name, kind, start, end), score)


def test_the_function_model_orders_each_files_definitions_and_the_citations_follow():
    short, long_, other = _sym("short", 1, 2, 1.0), _sym("long_one", 10, 90, 0.5), _sym("helper", 1, 60, 0.9)
    cands = [Candidate("a.py", 2.0, symbols=[short, long_]), Candidate("b.py", 1.0, symbols=[other])]
    order_definitions(cands, "title\nbody", _model(FUNCTION_FEATURES, log_lines=1.0))
    assert [s.span.name for s in cands[0].symbols] == ["long_one", "short"]
    ranking = CandidateRanking(cands, 0.5, {}, RankConfig(cite_prime_first=1))
    cited = [(c.path, h.span.name) for c, h in citation_order(ranking, files=2, entities=3)]
    assert cited == [("a.py", "long_one"), ("b.py", "helper"), ("a.py", "short")]


def test_in_file_the_function_model_reorders_a_files_definitions_but_each_place_keeps_its_score():
    short, long_, other = _sym("short", 1, 2, 1.0), _sym("long_one", 10, 90, 0.5), _sym("helper", 1, 60, 0.9)
    cands = [Candidate("a.py", 2.0, symbols=[short, long_]), Candidate("b.py", 1.0, symbols=[other])]
    order_definitions(cands, "title\nbody", _model(FUNCTION_FEATURES, log_lines=1.0), in_file=True)
    assert [(s.span.name, s.score, s.learned) for s in cands[0].symbols] == [("long_one", 1.0, None), ("short", 0.5, None)]
    ranking = CandidateRanking(cands, 0.5, {}, RankConfig(cite_prime_first=1))
    cited = [(c.path, h.span.name) for c, h in citation_order(ranking, files=2, entities=3)]
    assert cited == [("a.py", "long_one"), ("a.py", "short"), ("b.py", "helper")]  # the fusion's interleaving


def test_definition_features_read_the_names_the_report_writes_in_the_body_and_in_the_name(tmp_path):
    files = {"src/conf.py": "def load(path):\n    data = read(path)\n    return data['max_retries']\n\n\n"
                            "def _merge_retries(a, b):\n    return a\n"}
    corpus = _corpus(tmp_path, files)
    load, merge = _sym("load", 1, 3, 1.0), _sym("_merge_retries", 6, 7, 0.8)
    cands = [Candidate("src/conf.py", 1.0, symbols=[load, merge])]
    text = "Retries are lost\n\n`max_retries` from the file is ignored by `load`."
    rows = {sym.span.name: values for _, sym, values in definition_rows(cands, text, 1, corpus)}
    assert rows["load"]["body_named"] > 0 == rows["_merge_retries"]["body_named"]
    assert rows["_merge_retries"]["private"] == 1.0 and rows["load"]["private"] == 0.0
    assert rows["_merge_retries"]["name_share"] == pytest.approx(1 / 3)  # of _merge_retries, merge, retries
    assert rows["load"]["name_share"] == 1.0
    assert all(values["body_named"] == 0.0 for _, _, values in definition_rows(cands, text, 1))  # no corpus


def _row(label_first: bool, split: str = "tune") -> dict:
    good = {"path": "a.py", "label": 1, "x": {"symbol": 1.0, "fused_rank": 0.7}}
    bad = {"path": "b.py", "label": 0, "x": {"file": 1.0}}
    return {"id": "x", "gold": ["a.py"], "split": split, "files": [good, bad] if label_first else [bad, good]}


def test_fit_learns_the_feature_that_marks_the_changed_file():
    rows = [_row(k % 2 == 0) for k in range(20)]
    model = fit(rows, "files", list(FILE_FEATURES), pool=10, c=1.0)
    weight = dict(zip(model.names, model.weights))
    assert weight["symbol"] > 0 > weight["file"]
    assert file_scores(rows, None)["acc1"] == 0.5
    assert file_scores(rows, model)["acc1"] == 1.0


def _defs_row(gold_second: bool, split: str = "tune") -> dict:
    """Two files of three kept definitions; the changed one is `a.py:fix`, marked by `private`."""
    names = ["a.py:top", "a.py:fix", "a.py:other"] if gold_second else ["a.py:fix", "a.py:top", "a.py:other"]
    defs = [{"entity": e, "label": int(e == "a.py:fix"),
             "x": {"sym_pos": round(math.log1p(k), 4)} | ({"private": 1.0} if e == "a.py:fix" else {})}
            for k, e in enumerate(names)]
    defs += [{"entity": f"b.py:f{k}", "label": 0, "x": {"file_pos": 0.6931, "sym_pos": round(math.log1p(k), 4)}}
             for k in range(3)]
    current = [names[0], names[1], "b.py:f0", names[2], "b.py:f1", "b.py:f2"]
    return {"id": "x", "split": split, "gold": ["a.py:fix"], "current": current, "defs": defs}


def test_the_in_file_fit_learns_which_definition_of_a_file_goes_first_and_keeps_each_files_places():
    rows = [_defs_row(k % 2 == 0) for k in range(20)]
    model = fit(rows, "defs", list(FUNCTION_FEATURES), pool=10, c=1.0, in_file=True)
    assert dict(zip(model.names, model.weights))["private"] > 0
    assert function_scores(rows, None, in_file=True)["prime_first"] == 0.5
    assert function_scores(rows, model, in_file=True)["prime_first"] == 1.0
    assert in_file_order(rows[0], model) == ["a.py:fix", "a.py:top", "b.py:f0", "a.py:other", "b.py:f1", "b.py:f2"]


def test_the_fit_reads_a_definitions_place_back_exactly_from_its_rounded_feature():
    row = {"defs": [{"entity": f"a.py:f{k}", "label": 0, "x": {"sym_pos": round(math.log1p(k), 4)}} for k in range(8)]}
    assert [d["entity"] for d in items(row, "defs", 10)] == [f"a.py:f{k}" for k in range(6)]  # log1p(6) rounds down


def test_a_set_without_function_gold_labels_the_innermost_definition_holding_a_changed_line(tmp_path):
    files = {"src/q.py": "class Queue:\n    def push(self, x):\n        self.items.append(x)\n\n"
                         "    def pop(self):\n        return self.items.pop()\n"}
    corpus = _corpus(tmp_path, files)
    row = {"instance_id": "x-1", "repo": "owner/repo", "base_commit": "abc1234", "problem_statement": "q.py breaks",
           "gold_files": ["src/q.py"], "gold_line_ranges": {"src/q.py": [[3, 3], [6, 6]]}}
    assert line_entities(corpus, row) == ["src/q.py:Queue.push", "src/q.py:Queue.pop"]


def test_a_feature_dump_writes_the_error_of_a_broken_instance_and_goes_on():
    line = json.loads(dump_line({"instance_id": "x-1"}, lambda: {}["missing"]))
    assert line == {"id": "x-1", "error": "KeyError: 'missing'"}
    assert json.loads(dump_line({"instance_id": "x-2"}, lambda: {"id": "x-2", "files": []})) == {"id": "x-2", "files": []}

"""The learned reranker: its file, its reordering of the fused ranking, and the script that fits it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bench.fit_ranker import file_scores, fit
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


def test_the_reranker_reorders_by_the_model_and_each_position_keeps_its_fused_score(tmp_path):
    corpus = _corpus(tmp_path)
    cands = [Candidate("tests/test_parser.py", 3.0, {"file": 1.4}, lift=0.5),
             Candidate("src/header_tests_helper.py", 2.0, {"file": 0.7}),
             Candidate("src/parser.py", 1.0, {"file": 0.35, "symbol": 0.8})]
    slots = rerank(cands, corpus, EVERY_FILE, _model(FILE_FEATURES, is_test=-5.0, symbol=2.0))
    assert [c.path for c in cands] == ["src/parser.py", "src/header_tests_helper.py", "tests/test_parser.py"]
    assert "the learned ranker put it first (the fusion had it at 3)" in cands[0].reasons
    keep_slots(cands, slots)
    assert [(c.score, c.lift) for c in cands] == [(3.0, 0.5), (2.0, 0.0), (1.0, 0.0)]


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


def test_a_feature_dump_writes_the_error_of_a_broken_instance_and_goes_on():
    line = json.loads(dump_line({"instance_id": "x-1"}, lambda: {}["missing"]))
    assert line == {"id": "x-1", "error": "KeyError: 'missing'"}
    assert json.loads(dump_line({"instance_id": "x-2"}, lambda: {"id": "x-2", "files": []})) == {"id": "x-2", "files": []}

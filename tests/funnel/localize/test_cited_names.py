"""What the ranking hands the report to cite and quote: a module declaration is no cited definition, and a file's
name is quoted as the report writes it."""

from __future__ import annotations

from funnel.localize.corpus import Corpus
from funnel.localize.rank import RankConfig, rank, rank_report
from repomap import build_repo_map
from repomap.focus import Focus
from tests.funnel.localize.test_offline_rank import _make


def test_a_file_name_the_report_writes_is_quoted_as_the_report_writes_it(tmp_path):
    files = {"src/JsonFactory.java": "class JsonFactory {\n  void build() {}\n}\n",
             "src/Other.java": "class Other {\n  void run() {}\n}\n"}
    root = _make(tmp_path, files)
    corpus = Corpus.build(root, list(files))
    text = "JsonFactory ignores the canonicalize setting\n\nA `JsonFactory` built with it still interns names."
    ranking = rank(corpus, text, Focus.from_text(text), config=RankConfig())
    top = ranking.candidates[0]
    assert top.path == "src/JsonFactory.java" and top.parts.get("stem")
    assert "report names `JsonFactory`, this file's name" in top.reasons


def test_a_module_declared_without_a_body_counts_for_its_file_but_is_never_a_cited_definition(tmp_path):
    files = {"src/lib.rs": "mod select;\n\npub fn helper() -> u32 {\n    select::pick()\n}\n",
             "src/select.rs": "pub fn pick() -> u32 {\n    1\n}\n",
             "src/other.rs": "pub fn unrelated() {}\n"}
    root = _make(tmp_path, files)
    ranking, _ = rank_report("The select module picks wrong\n\n`select::pick` returns 1.", root,
                             build_repo_map(root, cache_dir=tmp_path / ".cache"), cache_dir=tmp_path / ".cache")
    lib = next(c for c in ranking.candidates if c.path == "src/lib.rs")
    assert lib.parts.get("mention"), "the declaration still counts for its file"
    assert lib.symbols and all(s.span.qualname != "select" for s in lib.symbols)

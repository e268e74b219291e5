"""A line the report points at, by a link (a permalink, "line N of path") or by quoting it, is evidence: its
definition is cited first."""

from __future__ import annotations

from dataclasses import replace

from funnel import investigate
from funnel.explorers.offline import OfflineExplorer
from funnel.localize.citations import affected_entries
from funnel.localize.corpus import Corpus
from funnel.localize.rank import RankConfig, rank
from repomap.focus import Focus
from schemas.report import BugReport
from tests.funnel.localize.test_offline_rank import _make

REPO = {
    "pkg/render.py": (
        "def render_title(card, title):\n"
        "    text = card.title_prefix + title\n"
        "    return text.strip()\n"
        "\n"
        "\n"
        "def render_body(card, body):\n"
        "    lines = body.split(card.separator)\n"
        "    return [line for line in lines if line]\n"
    ),
    "pkg/other.py": "def helper(x):\n    return x\n",
}
REPORT = (
    "Card title rendering drops the separator\n\n"
    "The card title and body render wrong with a custom card title prefix and a title separator; "
    "the code is here: https://github.com/acme/cards/blob/5f3e2a1/pkg/render.py#L7\n"
)


def _ranking(root, config: RankConfig):
    corpus = Corpus.build(root, sorted(REPO))
    return rank(corpus, REPORT, Focus.from_text(REPORT), config=config)


def test_the_linked_line_puts_its_definition_first_and_becomes_evidence(tmp_path):
    root = _make(tmp_path, REPO)
    linked = _ranking(root, RankConfig())
    top = linked.candidates[0]
    assert top.path == "pkg/render.py" and 7 in top.lines
    assert affected_entries(linked)[0] == ("pkg/render.py", "render_body")
    assert "the report points at line 7" in top.symbols[0].reasons
    unlinked = _ranking(root, replace(RankConfig(), w_link=0.0))
    assert affected_entries(unlinked)[0] == ("pkg/render.py", "render_title")  # the words alone favour the title


def test_a_link_to_a_file_outside_the_tree_changes_nothing(tmp_path):
    root = _make(tmp_path, REPO)
    text = REPORT.replace("pkg/render.py#L7", "lib/elsewhere.py#L7")
    corpus = Corpus.build(root, sorted(REPO))
    ranking = rank(corpus, text, Focus.from_text(text), config=RankConfig())
    assert all(not c.lines for c in ranking.candidates)


def test_a_quoted_source_line_puts_its_definition_first(tmp_path):
    root = _make(tmp_path, REPO)
    text = ("Card title prefix rendered wrong\n\nWith a custom card title prefix the title text comes out wrong; "
            "the title prefix is not stripped. I think `lines = body.split(card.separator)` is the problem.\n")
    corpus = Corpus.build(root, sorted(REPO))
    quoted = rank(corpus, text, Focus.from_text(text), config=RankConfig())
    assert affected_entries(quoted)[0] == ("pkg/render.py", "render_body") and 7 in quoted.candidates[0].lines
    plain = rank(corpus, text, Focus.from_text(text), config=replace(RankConfig(), w_quote=0.0))
    assert affected_entries(plain)[0] == ("pkg/render.py", "render_title")


def test_a_quoted_line_standing_in_many_files_points_nowhere(tmp_path):
    line = "    lines = body.split(card.separator)\n"
    files = REPO | {f"pkg/copy{n}.py": f"def copy{n}(card, body):\n{line}    return lines\n" for n in range(4)}
    root = _make(tmp_path, files)
    text = "Card body\n\nI think `lines = body.split(card.separator)` is the problem."
    ranking = rank(Corpus.build(root, sorted(files)), text, Focus.from_text(text), config=RankConfig())
    assert all(not c.lines for c in ranking.candidates)


async def test_the_diagnosis_says_the_report_links_to_its_first_line(tmp_path):
    root = _make(tmp_path / "repo", REPO)
    title, _, body = REPORT.partition("\n")
    diagnosis = (await investigate(BugReport(title=title, body=body), root, explorer=OfflineExplorer())).diagnosis
    first = diagnosis.affected_files[0]
    assert (first.path, first.symbol) == ("pkg/render.py", "render_body") and first.line_start <= 7 <= first.line_end
    assert "Line 7 there is the line the report links to" in diagnosis.root_cause.explanation
    assert "only the best lexical match" not in diagnosis.root_cause.explanation


def test_a_line_the_reports_diff_removes_puts_its_definition_first_even_when_the_file_moved(tmp_path):
    root = _make(tmp_path, REPO)
    text = ("Card title rendering drops the separator\n\nThe card title and body render wrong with a custom card "
            "title prefix and a title separator. This fixes it for me:\n\n```diff\n--- a/pkg/render.py\n"
            "+++ b/pkg/render.py\n@@ -4,4 +4,4 @@\n \n def render_body(card, body):\n"
            "-    lines = body.split(card.separator)\n+    lines = body.split(card.separator or None)\n"
            "     return [line for line in lines if line]\n```\n")
    ranking = rank(Corpus.build(root, sorted(REPO)), text, Focus.from_text(text), config=RankConfig())
    top = ranking.candidates[0]
    assert top.path == "pkg/render.py" and 7 in top.lines
    assert affected_entries(ranking)[0] == ("pkg/render.py", "render_body")
    assert "the report points at line 7" in top.symbols[0].reasons  # the hunk said line 6

"""Co-change: the files past commits changed together with a leading suspect are lifted after the first file,
counted only over the investigated commit's ancestors and only from commits that change a few files."""

from __future__ import annotations

from pathlib import Path

import pytest

from funnel.explorers.offline import OfflineExplorer
from funnel.explorers.offline.policy import OfflineConfig
from funnel import investigate
from funnel.localize.corpus import Corpus
from funnel.localize.history import CommitLog, HistoryConfig, HistorySource, cochange_partners
from funnel.localize.rank import RankConfig, rank, rank_report
from repomap.focus import Focus
from schemas.report import BugReport
from tests.funnel.localize.test_offline_history import _commit, _git


pytestmark = pytest.mark.usefixtures("fresh_history_memo")


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, object]:
    """`render.py` changes with `options.py` in three of its four multi-file commits and once with `colors.py`;
    a sweeping commit touches everything; after the investigated commit `render.py` changes with `late.py`."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    for name, text in (("render", "def render(card):\n    return card\n"),
                       ("options", "def parse_options(query):\n    return query\n"),
                       ("colors", "def color(name):\n    return name\n"), ("late", "def late():\n    return 0\n")):
        _commit(root, f"Add {name}", {f"src/{name}.py": text})
    for n in range(3):
        _commit(root, f"Card option {n}", {"src/render.py": f"def render(card):\n    return card  # {n}\n",
                                           "src/options.py": f"def parse_options(query):\n    return query  # {n}\n"})
    _commit(root, "Colors of the card", {"src/render.py": "def render(card):\n    return card  # c\n",
                                         "src/colors.py": "def color(name):\n    return name  # c\n"})
    _commit(root, "Render alone", {"src/render.py": "def render(card):\n    return card  # alone\n"})
    _commit(root, "Reformat", {f"src/gen{i}.py": f"x = {i}\n" for i in range(10)}
            | {"src/render.py": "def render(card):\n    return card  # fmt\n"})
    base = _commit(root, "Document", {"README.md": "usage\n"})
    for n in range(3):
        _commit(root, f"Later {n}", {"src/render.py": f"def render(card):\n    return card  # later {n}\n",
                                     "src/late.py": f"def late():\n    return {n + 1}\n"})
    return {"root": root, "git_dir": root / ".git", "base": base}


def test_a_files_partners_are_the_files_changed_with_it_and_how_often(repo):
    found = cochange_partners(["src/render.py"], repo["git_dir"], repo["base"])

    # four commits change render.py with at most eight files: three with options.py, one with colors.py
    assert found == {"src/render.py": {"src/options.py": 0.75}}


def test_partners_count_only_the_investigated_commits_ancestors(repo):
    at_base = cochange_partners(["src/render.py"], repo["git_dir"], repo["base"])["src/render.py"]
    at_head = cochange_partners(["src/render.py"], repo["git_dir"], "HEAD")["src/render.py"]

    assert "src/late.py" not in at_base
    assert at_head["src/late.py"] == pytest.approx(3 / 7)


def test_a_sweeping_commit_couples_nothing(repo):
    wide = HistoryConfig(cochange_max_files=20, cochange_min_together=1)
    narrow = HistoryConfig(cochange_min_together=1)

    def partners(config: HistoryConfig) -> dict[str, float]:
        return cochange_partners(["src/render.py"], repo["git_dir"], repo["base"], config=config)["src/render.py"]

    assert "src/gen0.py" in partners(wide)
    assert "src/gen0.py" not in partners(narrow)


def test_a_file_changed_in_too_few_commits_has_no_partners(repo):
    log, among = CommitLog.load(repo["git_dir"], repo["base"])

    assert log.partners("src/colors.py", among) == {}
    assert log.partners("src/colors.py", among, HistoryConfig(cochange_min_commits=1, cochange_min_together=1)) == {
        "src/render.py": 1.0}


def test_without_git_there_are_no_partners(tmp_path):
    assert cochange_partners(["a.py"], tmp_path, "HEAD") == {}


def _corpus(root: Path) -> Corpus:
    return Corpus.build(root, ["src/render.py", "src/options.py", "src/colors.py", "src/late.py"])


TEXT = "The card render is wrong: render(card) drops the card name"


def test_a_partner_of_the_first_file_is_lifted_to_second_and_the_first_stays(repo):
    corpus = _corpus(repo["root"])
    config = RankConfig(w_cochange=1.0, w_history=0.0)

    def partners(paths):
        return cochange_partners(paths, repo["git_dir"], repo["base"])
    plain = rank(corpus, TEXT, Focus.from_text(TEXT), config=RankConfig(w_history=0.0))
    lifted = rank(corpus, TEXT, Focus.from_text(TEXT), partners=partners, config=config)

    assert plain.candidates[0].path == lifted.candidates[0].path == "src/render.py"
    assert [c.path for c in plain.candidates].index("src/options.py") > 1
    assert lifted.candidates[1].path == "src/options.py"
    assert lifted.candidates[1].parts["cochange"] == pytest.approx(0.75)
    assert any("changed it together with src/render.py" in why for why in lifted.candidates[1].reasons)
    assert lifted.confidence == plain.confidence


def test_the_lift_is_off_at_weight_zero_and_without_partners(repo):
    corpus = _corpus(repo["root"])
    order = [c.path for c in rank(corpus, TEXT, Focus.from_text(TEXT), config=RankConfig(w_history=0.0)).candidates]

    off = rank(corpus, TEXT, Focus.from_text(TEXT), partners=lambda paths: {"src/render.py": {"src/options.py": 1.0}},
               config=RankConfig(w_history=0.0, w_cochange=0.0))
    none = rank(corpus, TEXT, Focus.from_text(TEXT), partners=lambda paths: {}, config=RankConfig(w_history=0.0))

    assert [c.path for c in off.candidates] == order
    assert [c.path for c in none.candidates] == order


def test_rank_report_reads_partners_from_the_history_source(repo):
    config = RankConfig(w_cochange=1.0, w_history=0.0)
    source = HistorySource(repo["git_dir"], repo["base"])

    ranking, _ = rank_report(TEXT, repo["root"], config=config, history=source)
    without, _ = rank_report(TEXT, repo["root"], config=config)

    assert "cochange" in ranking.candidates[1].parts
    assert all("cochange" not in c.parts for c in without.candidates)


async def test_an_investigation_of_a_checkout_lifts_its_cochanged_files(repo):
    report = BugReport(title="The card render is wrong", body="render(card) drops the card")
    explorer = OfflineExplorer(OfflineConfig(rank=RankConfig(w_cochange=1.0)))

    await investigate(report, repo["root"], explorer=explorer)
    ranking = explorer.last_policy.ranking

    assert any("cochange" in c.parts for c in ranking.candidates)


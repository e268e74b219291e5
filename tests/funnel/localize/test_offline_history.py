"""The history signal scores the files of past commits that read like the report, and nothing later than the
investigated commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from funnel.explorers.offline import OfflineExplorer
from funnel.localize.corpus import Corpus
from funnel.localize.history import CommitLog, HistoryConfig, HistorySource, find_git_dir, history_scores
from funnel.explorers.offline.policy import OfflineConfig
from funnel.localize.rank import RankConfig, rank
from funnel import investigate
from funnel.limits import Limits
from repomap.focus import Focus
from schemas.report import BugReport


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


def _commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


LOOSE = HistoryConfig(min_similarity=0.0)
"""The tiny fixture history scores far below the default similarity floor (made for real projects' logs)."""


pytestmark = pytest.mark.usefixtures("fresh_history_memo")


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, object]:
    """A small repository: two fixes, a sweeping refactor, then (after the investigated commit) a later fix."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _commit(root, "Add the tokenizer and the parser", {"src/tokenizer.py": "def tokens(s): ...\n",
                                                       "src/parser.py": "def parse(s): ...\n"})
    _commit(root, "Fix crash of the tokenizer on empty input", {"src/tokenizer.py": "def tokens(s):\n    return []\n"})
    _commit(root, "Parser: accept trailing commas in lists", {"src/parser.py": "def parse(s):\n    return s\n"})
    _commit(root, "Reformat everything (empty input crash tokenizer)",
            {f"src/gen{i}.py": f"x = {i}\n" for i in range(25)})
    base = _commit(root, "Document the command line", {"README.md": "usage\n"})
    _commit(root, "Fix the tokenizer empty input crash in the streaming reader", {"src/stream.py": "def read(): ...\n"})
    return {"root": root, "git_dir": root / ".git", "base": base}


def test_files_of_resembling_past_commits_score_highest(repo):
    scores = history_scores("The tokenizer crashes on empty input", repo["git_dir"], repo["base"], config=LOOSE)

    assert max(scores, key=scores.get) == "src/tokenizer.py"


def test_commits_after_the_investigated_commit_never_count(repo):
    text = "tokenizer crash on empty input in the streaming reader"
    at_base = history_scores(text, repo["git_dir"], repo["base"], config=LOOSE)
    at_head = history_scores(text, repo["git_dir"], "HEAD", config=LOOSE)

    assert "src/stream.py" not in at_base
    assert "src/stream.py" in at_head


def test_sweeping_commits_are_left_out(repo):
    scores = history_scores("empty input crash tokenizer", repo["git_dir"], repo["base"],
                            config=HistoryConfig(max_files=20, min_similarity=0.0))

    assert scores
    assert not any(path.startswith("src/gen") for path in scores)


def test_commits_below_the_similarity_floor_are_no_evidence(repo):
    text = "The tokenizer crashes on empty input"
    loose = history_scores(text, repo["git_dir"], repo["base"], config=LOOSE)
    best = max(loose.values())

    assert history_scores(text, repo["git_dir"], repo["base"], config=HistoryConfig(min_similarity=1e6)) == {}
    assert history_scores(text, repo["git_dir"], repo["base"], config=HistoryConfig(min_similarity=0.1)) == loose
    assert best > 0


def test_a_report_sharing_no_word_with_the_history_scores_nothing(repo):
    assert history_scores("zzyzx qwerty", repo["git_dir"], repo["base"]) == {}


def test_a_directory_outside_git_has_no_history(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()

    assert find_git_dir(plain) is None
    assert history_scores("tokenizer crash", plain, "HEAD") == {}


def test_find_git_dir_names_the_git_directory_of_a_checkouts_top_only(repo):
    assert find_git_dir(repo["root"]) == repo["git_dir"].resolve()
    # a folder inside another project's checkout must not borrow that project's history
    assert find_git_dir(repo["root"] / "src") is None


def test_a_source_accepts_a_work_tree_a_git_directory_or_nothing(repo, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()

    assert HistorySource.locate(plain, repo["root"], "abc").git_dir == repo["git_dir"].resolve()
    assert HistorySource.locate(plain, repo["git_dir"]).git_dir == repo["git_dir"].resolve()
    assert HistorySource.locate(repo["root"]).commit == "HEAD"
    assert HistorySource.locate(plain) is None
    assert HistorySource.locate(plain, plain) is None


def test_the_cached_log_is_reused_and_extended_with_new_commits(repo, tmp_path):
    cache = tmp_path / "cache"
    first, among = CommitLog.load(repo["git_dir"], repo["base"], cache)
    assert len(among) == 5
    assert list((cache / "history").iterdir())

    later, among_head = CommitLog.load(repo["git_dir"], "HEAD", cache)

    assert len(later.shas) == 6
    assert len(among_head) == 6
    assert later.shas[:5] == first.shas[:5]


def test_a_corrupt_cache_file_is_rebuilt(repo, tmp_path):
    cache = tmp_path / "cache"
    CommitLog.load(repo["git_dir"], repo["base"], cache)
    for path in (cache / "history").iterdir():
        path.write_bytes(b"not a cache")

    log, among = CommitLog.load(repo["git_dir"], repo["base"], cache)

    assert len(among) == 5
    assert len(log.shas) == 5


def test_history_lifts_the_file_a_past_fix_changed_in_the_ranking(repo):
    root = repo["root"]
    corpus = Corpus.build(root, ["src/tokenizer.py", "src/parser.py", "README.md"])
    text = "Something breaks when the input is empty"
    scores = history_scores(text, repo["git_dir"], repo["base"], config=LOOSE)

    plain = rank(corpus, text, Focus.from_text(text), config=RankConfig(w_history=0.0))
    lifted = rank(corpus, text, Focus.from_text(text), history=scores, config=RankConfig(w_history=0.5))

    assert lifted.candidates[0].path == "src/tokenizer.py"
    assert "history" in lifted.candidates[0].parts
    assert any("past commits" in why for why in lifted.candidates[0].reasons)
    assert all("history" not in c.parts for c in plain.candidates)


def _history_parts(explorer: OfflineExplorer) -> dict[str, float]:
    ranking = explorer.last_policy.ranking
    return {c.path: c.parts["history"] for c in ranking.candidates if "history" in c.parts}


async def test_an_investigation_of_a_checkout_uses_its_history_unless_turned_off(repo):
    report = BugReport(title="Something breaks when the input is empty", body="The tokenizer crashes.")
    explorer = OfflineExplorer(OfflineConfig(history=LOOSE))

    await investigate(report, repo["root"], explorer=explorer)
    used = _history_parts(explorer)
    await investigate(report, repo["root"], explorer=explorer, limits=Limits(history=False))
    unused = _history_parts(explorer)

    assert "src/tokenizer.py" in used
    assert unused == {}


async def test_an_exported_tree_uses_the_git_directory_it_is_given_up_to_its_commit(repo, tmp_path):
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    for name in ("tokenizer.py", "parser.py", "stream.py"):
        (tree / "src" / name).write_text(f"def {name[:-3]}(s):\n    return s\n")
    report = BugReport(title="The streaming reader crashes on empty input", body="tokenizer crash")
    explorer = OfflineExplorer(OfflineConfig(history=LOOSE))

    await investigate(report, tree, explorer=explorer, git_dir=repo["root"], commit=repo["base"])
    at_base = _history_parts(explorer)
    await investigate(report, tree, explorer=explorer)
    without = _history_parts(explorer)

    assert "src/tokenizer.py" in at_base and "src/stream.py" not in at_base
    assert without == {}

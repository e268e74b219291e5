"""The prose's own citations checked against a real repository on disk: what it does not bear out is never passed
on as a fact, and what it cannot judge is left alone."""

from __future__ import annotations

import pytest

from funnel.limits import VerifyLimits
from funnel.report.export import to_markdown
from funnel.report.mentions import ProseCheck
from funnel.report.repo_files import RepoFiles
from funnel.report.structure import structure
from funnel.report.verify import verify_report
from tests.funnel.diagnosis_support import make_repo
from tests.funnel.report.test_structure import REPORT


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    (root / "docs").mkdir()
    (root / "docs" / "User Guide.md").write_text("# Guide\n\nLoad the config first.\n")
    return RepoFiles(root, VerifyLimits(), None)


def test_an_evidence_bullet_citing_a_file_the_repository_lacks_is_dropped_with_the_reason(repo):
    prose = ProseCheck(repo)
    kept = prose.keep(["`src/app/config.py:15` indexes the key.", "`src/app/payments.py:120` charges twice."])
    assert kept == ["`src/app/config.py:15` indexes the key."]
    assert [(r.kind, r.claim["path"], r.claim["line_start"]) for r in prose.rejected] == [
        ("citation", "src/app/payments.py", 120)]
    assert "'src/app/payments.py' does not exist in the repository" in prose.rejected[0].reason
    assert prose.checked == 2


def test_a_line_past_the_end_of_a_real_file_is_not_borne_out(repo):
    prose = ProseCheck(repo)
    assert prose.keep(["`src/app/config.py:880-900` reads YAML."]) == []
    assert prose.rejected[0].reason.startswith("line 900 is past the end of `src/app/config.py` (")
    assert prose.annotate("See `src/app/config.py:900`.", "summary").startswith(
        "See `src/app/config.py:900`.\n\n(Not borne out by the repository: `src/app/config.py:900` (the file has ")


def test_the_explanation_keeps_its_text_and_closes_with_what_does_not_hold(repo):
    text = "`Config.load` indexes a missing key; as `src/app/billing.py:44` shows, it is called twice."
    prose = ProseCheck(repo)
    assert prose.annotate(text, "explanation") == (text + "\n\n(Not borne out by the repository: "
                                                          "`src/app/billing.py:44` (no such file).)")
    assert prose.rejected[0].claim == {"path": "src/app/billing.py", "line_start": 44, "line_end": 44,
                                       "text": "explanation"}


@pytest.mark.parametrize(
    "text",
    [
        "The frame `/usr/lib/python3.11/json/decoder.py:337` raises.",  # outside the repository
        "It fails in `venv/lib/site-packages/yaml/loader.py:12`.",  # an installed library
        "The report says “FileNotFoundError: data/input.csv:3 is missing”.",  # quoted, someone else's words
        "Put the value in your `settings.py`.",  # a file named in passing, no location claimed
        "`config.py:15` indexes the key.",  # written too briefly: the one config.py ends with it
        "The report's patch edits a/src/app/config.py; the checkout's repo/src/app/main.py:2 calls it.",  # prefixes
        "The guide says so (`docs/User Guide.md:3`).",  # a space in the path
        "`Config.load` and `data.get` are no files.",
        "It reads and/or writes the match/test/sub builtins.",  # words with a slash
        '`src/app/config.py:3` in `f`: `return msg("compiled without match/test/su`',  # a clipped quote of code
    ],
)
def test_what_is_no_claim_about_the_repository_or_holds_is_left_alone(repo, text):
    prose = ProseCheck(repo)
    assert (prose.annotate(text, "explanation"), prose.keep([text]), prose.rejected) == (text, [text], [])


def test_the_diagnosis_records_what_the_root_cause_cited_wrongly_and_keeps_the_rest(repo):
    report = REPORT.replace("- `src/app/config.py:15` indexes the key.",
                            "- `src/app/config.py:15` indexes the key.\n- `src/app/payments.py:120`: `charge(order)`")
    d = structure(report, repo.sb.root)
    assert d.root_cause is not None and d.root_cause.evidence == ["`src/app/config.py:15` indexes the key."]
    assert [(r.kind, r.claim["path"]) for r in d.rejected if r.kind == "citation"] == [
        ("citation", "src/app/payments.py")]
    assert "- `src/app/payments.py:120`: 'src/app/payments.py' does not exist" in to_markdown(d)


def test_a_summary_and_a_change_citing_lines_a_file_lacks_say_so(repo):
    report = REPORT.replace("An empty settings file makes `Config.load` raise `KeyError`.",
                            "`src/app/config.py:400` raises `KeyError`.").replace(
        "return `data.get(\"section\", {})`.", "return `data.get(\"section\", {})` at `src/app/config.py:415`.")
    d = structure(report, repo.sb.root)
    assert d.summary.endswith("(Not borne out by the repository: `src/app/config.py:400` (the file has 19 lines).)")
    assert d.proposed_changes[0].description.endswith("`src/app/config.py:415` (the file has 19 lines).)")
    assert [r.claim["text"] for r in d.rejected if r.kind == "citation"] == [
        "summary", "proposed change to `src/app/config.py`"]


def test_a_file_of_a_language_read_as_text_is_checked_too(repo):
    (repo.sb.root / "src" / "builtin.jq").write_text("def capture(re): match(re);\n")
    prose = ProseCheck(repo)
    assert prose.keep(["`src/builtin.jq:1` in `capture`", "`src/builtin_old.jq:1` in `capture`"]) == [
        "`src/builtin.jq:1` in `capture`"]


def test_a_short_name_means_the_file_the_diagnosis_cites(repo):
    (repo.sb.root / "lib" / "config.py").write_text("x = 1\n")  # a second config.py
    assert ProseCheck(repo).annotate("Line 15 of `config.py:15`.", "summary") == "Line 15 of `config.py:15`."
    prose = ProseCheck(repo, ["lib/config.py"])
    assert prose.annotate("`config.py:15`", "summary").endswith(": `config.py:15` (the file has 1 line).)")
    assert "line 15 is past the end of `lib/config.py`" in prose.rejected[0].reason


def test_a_change_may_name_the_new_file_it_creates(repo):
    prose = ProseCheck(repo)
    text = "Return a default; add a regression test in `tests/test_config_empty.py`."
    assert prose.annotate(text, "proposed change to `src/app/config.py`", lines_only=True) == text
    assert prose.rejected == []


def test_a_wrong_citation_in_the_root_cause_does_not_cost_the_model_an_attempt(repo):
    report = REPORT.replace("3. `src/app/ghost.py:3` — `haunt` (related)\n", "").replace(
        "- `src/app/config.py:15` indexes the key.", "- `src/app/payments.py:120` charges twice.")
    verdict = verify_report(report, repo.sb.root)
    assert verdict.ok, verdict.findings
    assert any("the prose cites `src/app/payments.py:120`, which the repository does not bear out" in n
               for n in verdict.notes)

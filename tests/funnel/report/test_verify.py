"""Validation of reports against a real repository (real files, real ripgrep, real tree-sitter index)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from funnel.report.template import DraftAffectedFile, DraftChange, ReportDraft, render_report
from funnel.report.verify import check_claims, find_snippet, verify_report
from schemas.enums import Role
from tests.funnel.diagnosis_support import CONFIG_PY, make_index, make_repo

LOAD_SNIPPET = 'def load(self):\n    with open(self.path) as f:\n        data = json.load(f)\n    return data["section"]'


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo")


@pytest.fixture
def index(repo):
    return make_index(repo)


def _draft(*items: DraftAffectedFile, changes: tuple[DraftChange, ...] = ()) -> ReportDraft:
    return ReportDraft(summary="s", affected_files=list(items), proposed_changes=list(changes))


def _loc(path: str, start: int | None, end: int | None = None, **kw) -> DraftAffectedFile:
    return DraftAffectedFile(path=path, line_start=start, line_end=end if end is not None else start, **kw)


def test_correct_citation_is_kept_unchanged(repo, index):
    out = check_claims(_draft(_loc("src/app/config.py", 12, 15, symbol="Config.load", evidence=LOAD_SNIPPET)), repo, index)
    (kept,) = out.affected_files
    assert (kept.path, kept.line_start, kept.line_end, kept.symbol) == ("src/app/config.py", 12, 15, "Config.load")
    assert out.rejected == [] and out.corrections == []


def test_invented_path_is_rejected_with_nearest_paths(repo):
    out = check_claims(_draft(_loc("src/app/settings.py", 3)), repo)
    assert out.affected_files == []
    (rejected,) = out.rejected
    assert rejected.kind == "affected_file"
    assert "does not exist" in rejected.reason
    assert rejected.claim["path"] == "src/app/settings.py"


def test_lines_past_the_end_are_rejected(repo):
    out = check_claims(_draft(_loc("src/app/config.py", 300, 310)), repo)
    assert out.affected_files == []
    assert "has only 19 lines" in out.rejected[0].reason


def test_range_ending_past_the_end_is_cut_to_the_file(repo):
    out = check_claims(_draft(_loc("src/app/config.py", 18, 40)), repo)
    assert (out.affected_files[0].line_start, out.affected_files[0].line_end) == (18, 19)
    assert out.corrections


def test_snippet_that_is_not_there_is_rejected(repo):
    out = check_claims(_draft(_loc("src/app/config.py", 12, 15, evidence="return data.get('section') or {}")), repo)
    assert out.affected_files == []
    assert "snippet does not occur" in out.rejected[0].reason


def test_snippet_within_slack_of_the_cited_lines_is_accepted(repo):
    out = check_claims(_draft(_loc("src/app/config.py", 16, 17, evidence='return data["section"]')), repo)
    assert (out.affected_files[0].line_start, out.affected_files[0].line_end) == (16, 17)
    assert out.corrections == []


def test_snippet_far_from_cited_lines_moves_the_lines(repo):
    out = check_claims(_draft(_loc("src/app/config.py", 1, 2, evidence=LOAD_SNIPPET)), repo)
    kept = out.affected_files[0]
    assert (kept.line_start, kept.line_end) == (12, 15)
    assert "where the quoted snippet is" in out.corrections[0]


def test_snippet_whitespace_and_line_numbers_are_tolerated(repo):
    quoted = "12|     def load(self):\n13|         with open(self.path)   as f:\n\n14|             data = json.load(f)"
    assert find_snippet(CONFIG_PY.splitlines(), quoted) == [(12, 14)]


def test_snippet_with_elision_matches_its_parts_in_order():
    quoted = "class Config:\n    ...\n    def load(self):"
    assert find_snippet(CONFIG_PY.splitlines(), quoted) == [(6, 12)]
    assert find_snippet(CONFIG_PY.splitlines(), "def load(self):\n...\nclass Config:") == []


def test_wrong_path_is_corrected_when_the_snippet_proves_the_real_file(repo):
    out = check_claims(_draft(_loc("app/config.py", 12, 15, evidence=LOAD_SNIPPET)), repo)
    kept = out.affected_files[0]
    assert (kept.path, kept.line_start, kept.line_end) == ("src/app/config.py", 12, 15)
    assert out.rejected == []
    assert "app/config.py" in out.corrections[0]


def test_snippet_found_in_another_file_moves_the_claim_there(repo):
    out = check_claims(_draft(_loc("src/app/main.py", 1, 3, evidence=LOAD_SNIPPET)), repo)
    assert out.affected_files[0].path == "src/app/config.py"


def test_wrong_path_without_snippet_is_not_guessed(repo):
    out = check_claims(_draft(_loc("app/config.py", 12, 15)), repo)
    assert out.affected_files == []
    assert "src/app/config.py" in out.rejected[0].reason  # offered as the nearest path, not taken


def test_short_snippet_does_not_move_a_claim_to_another_file(repo):
    out = check_claims(_draft(_loc("nothere.py", 1, 1, evidence="return 0")), repo)
    assert out.affected_files == []


@pytest.mark.parametrize(
    "path",
    ["../outside.py", "src/../../outside.py", "/etc/passwd", "C:\\Windows\\win.ini", "~/.bashrc"],
)
def test_paths_escaping_the_root_are_rejected(repo, path):
    out = check_claims(_draft(_loc(path, 1)), repo)
    assert out.affected_files == []
    assert out.rejected[0].reason.startswith("Refused")


def test_symlink_escape_is_rejected(repo, tmp_path):
    secret = tmp_path / "outside.py"
    secret.write_text("password = 'x'\n")
    os.symlink(secret, repo / "src" / "link.py")
    out = check_claims(_draft(_loc("src/link.py", 1, evidence="password = 'x'")), repo)
    assert out.affected_files == []
    assert "outside the repository" in out.rejected[0].reason


def test_secret_and_binary_files_are_rejected(repo):
    out = check_claims(_draft(_loc(".env", 1), _loc("data.bin", 1)), repo)
    assert out.affected_files == []
    assert "withheld" in out.rejected[0].reason
    assert "binary" in out.rejected[1].reason


def test_absolute_path_inside_the_root_is_respelled(repo):
    out = check_claims(_draft(_loc(str(repo / "src/app/config.py"), 12, 15)), repo)
    assert out.affected_files[0].path == "src/app/config.py"


def test_path_without_lines_gets_the_snippet_location(repo):
    out = check_claims(_draft(_loc("src/app/config.py", None, evidence='return data["section"]')), repo)
    assert (out.affected_files[0].line_start, out.affected_files[0].line_end) == (15, 15)


def test_symbol_at_wrong_range_is_replaced_by_the_enclosing_definition(repo, index):
    out = check_claims(_draft(_loc("src/app/config.py", 19, 19, symbol="Config.load")), repo, index)
    assert out.affected_files[0].symbol == "default_config"
    assert any("enclosing definition" in c for c in out.corrections)


def test_plain_qualified_and_nearby_symbols_are_accepted(repo, index):
    for symbol, start in (("load", 12), ("Config.load", 12), ("app.config.Config.load", 14), ("load()", 16)):
        out = check_claims(_draft(_loc("src/app/config.py", start, start + 1, symbol=symbol)), repo, index)
        assert out.affected_files[0].symbol == symbol, symbol


def test_unknown_symbol_without_index_is_dropped(repo):
    out = check_claims(_draft(_loc("src/app/config.py", 12, 15, symbol="Frobnicator")), repo)
    assert out.affected_files[0].symbol is None


def test_duplicate_citations_are_merged(repo):
    out = check_claims(_draft(_loc("src/app/config.py", 12, 15), _loc("src/app/config.py", 14, 14)), repo)
    assert len(out.affected_files) == 1


def test_proposed_change_to_missing_file_is_rejected_but_new_file_diff_is_kept(repo):
    changes = (
        DraftChange(path="src/app/nothere.py", description="edit"),
        DraftChange(path="tests/test_config.py", description="add a test", diff="--- /dev/null\n+++ b/tests/test_config.py\n"),
        DraftChange(path="src/app/config.py", symbol="Config.load", description="use .get"),
    )
    out = check_claims(_draft(changes=changes), repo)
    assert [c.path for c in out.proposed_changes] == ["tests/test_config.py", "src/app/config.py"]
    assert out.rejected[0].kind == "proposed_change"
    assert out.claims_total == 3 and out.claims_rejected == 1


def test_verify_report_accepts_a_good_report(repo, index):
    md = render_report(_draft(_loc("src/app/config.py", 12, 15, symbol="Config.load", evidence=LOAD_SNIPPET)))
    md = md.replace("## Root cause\n_None._", "## Root cause\nIt indexes a missing key.")
    result = verify_report(md, repo, index)
    assert result.ok, result.findings
    assert result.findings == []


def test_verify_report_findings_are_instructions_for_the_next_attempt(repo):
    md = render_report(_draft(_loc("src/app/nothere.py", 3), _loc("src/app/config.py", 12, 12, evidence="x = nope()")))
    result = verify_report(md, repo)
    assert not result.ok
    assert any(f.startswith("Drop or fix the affected file `src/app/nothere.py:3`") for f in result.findings)
    assert any("Quote the lines exactly" in f for f in result.findings)
    assert any("Name at least one suspect" in f for f in result.findings)


def test_verify_report_demands_the_template_sections(repo):
    result = verify_report("I think the bug is somewhere in the config loader.", repo)
    assert not result.ok
    assert any("`## Summary`" in f for f in result.findings)
    assert any("`## Affected files`" in f for f in result.findings)


def test_verify_report_on_garbage_never_raises(repo):
    result = verify_report("\x00```#", repo)
    assert result.ok is False


def test_snippet_copied_from_search_output_is_understood():
    quoted = "src/app/config.py:12:    def load(self):\nsrc/app/config.py-13-        with open(self.path) as f:"
    assert find_snippet(CONFIG_PY.splitlines(), quoted) == [(12, 13)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.text(alphabet=st.sampled_from(list("./\\~:\x00 abc_-*?")), max_size=30),
    start=st.one_of(st.none(), st.integers(-5, 10**9)),
    evidence=st.text(max_size=60),
)
def test_check_claims_never_raises_on_arbitrary_claims(repo, path, start, evidence):
    item = DraftAffectedFile.model_construct(path=path, line_start=start, line_end=start, symbol=None,
                                             role=Role.cause, evidence=evidence)  # fmt: skip
    out = check_claims(_draft(item), repo)
    assert len(out.affected_files) + len(out.rejected) <= 1


@pytest.mark.parametrize(("start", "end", "expected"), [(0, 0, (1, 1)), (-5, 2, (1, 2)), (5, 2, (2, 5))])
def test_nonsense_line_numbers_are_normalised_not_fatal(repo, start, end, expected):
    item = DraftAffectedFile(path="src/app/config.py", line_start=start, line_end=end)
    (kept,) = check_claims(_draft(item), repo).affected_files
    assert (kept.line_start, kept.line_end) == expected


def test_empty_file_is_kept_at_line_one_unless_a_snippet_is_quoted(repo):
    out = check_claims(_draft(_loc("src/app/__init__.py", 1)), repo)
    assert [(a.path, a.line_start, a.line_end) for a in out.affected_files] == [("src/app/__init__.py", 1, 1)]
    out = check_claims(_draft(_loc("src/app/__init__.py", 1, evidence="from .config import Config")), repo)
    assert out.affected_files == [] and "empty" in out.rejected[0].reason


def test_relocation_picks_the_occurrence_nearest_the_cited_lines(tmp_path):
    root = tmp_path / "r"
    (root / "pkg").mkdir(parents=True)
    block = "def handler(event):\n    return dispatch(event, strict=True)\n"
    (root / "pkg" / "dup.py").write_text(block + "\n" * 40 + block)
    out = check_claims(_draft(_loc("dup.py", 40, 41, evidence=block)), root)  # second copy is at 43-44
    assert (out.affected_files[0].path, out.affected_files[0].line_start) == ("pkg/dup.py", 43)


def test_proposed_change_without_a_file_does_not_block_the_report(repo):
    md = render_report(_draft(_loc("src/app/config.py", 12, 15, evidence=LOAD_SNIPPET)))
    md = md.replace("## Root cause\n_None._", "## Root cause\nBecause.")
    md = md.replace("## Proposed changes\n_None._", "## Proposed changes\n1. Add a guard for empty files.")
    result = verify_report(md, repo)
    assert result.ok, result.findings
    assert any("names no file" in n for n in result.notes)
    assert result.checked and result.checked.rejected[0].kind == "proposed_change"


def test_symbol_in_a_file_the_index_does_not_cover_is_checked_by_text(repo, index):
    out = check_claims(_draft(_loc("README.md", 1, symbol="demo")), repo, index)
    assert out.affected_files[0].symbol == "demo"
    out = check_claims(_draft(_loc("README.md", 1, symbol="Nowhere")), repo, index)
    assert out.affected_files[0].symbol is None


def test_wrong_symbol_on_a_range_starting_before_a_definition_gets_that_definition(repo, index):
    out = check_claims(_draft(_loc("src/app/main.py", 1, 6, symbol="Config")), repo, index)
    assert out.affected_files[0].symbol == "main"


APPROX_H = """namespace Catch {
class Approx {
    double m_margin = 0.0;
    double m_scale = 0.0;
public:
    bool operator()(double lhs) const {
        return lhs < m_margin;
    }
};
}
"""


def test_a_definition_whose_name_is_no_plain_word_keeps_its_name_in_a_range_opening_above_it(repo):
    (repo / "include").mkdir()
    (repo / "include/approx.hpp").write_text(APPROX_H)
    index = make_index(repo)
    for cited in ("Catch.Approx.operator()", "Catch.Approx.operator"):  # a report parser may drop the parentheses
        out = check_claims(_draft(_loc("include/approx.hpp", 3, 8, symbol=cited)), repo, index)
        assert out.affected_files[0].symbol == "Catch.Approx.operator()" and out.corrections == [], cited


def test_absolute_path_from_another_checkout_is_corrected_by_its_snippet(repo):
    out = check_claims(_draft(_loc("/home/someone/work/demo/src/app/config.py", 12, 15, evidence=LOAD_SNIPPET)), repo)
    assert out.affected_files[0].path == "src/app/config.py"
    out = check_claims(_draft(_loc("/home/someone/work/demo/src/app/config.py", 12, 15)), repo)
    assert out.affected_files == [] and "absolute path" in out.rejected[0].reason


def test_relocation_never_reads_through_a_symlink_leaving_the_repository(repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.py").write_text(CONFIG_PY.replace("Config", "Leaked"))
    os.symlink(outside / "config.py", repo / "lib" / "config.py")
    snippet = "class Leaked:\n    \"\"\"Settings read from a JSON file.\"\"\""
    out = check_claims(_draft(_loc("app/config.py", 6, 7, evidence=snippet)), repo)
    assert out.affected_files == []


@pytest.mark.parametrize("quoted", ['label = "Prix: \\xe9 %d" % amount', 'label = "Prix: \ufffd %d" % amount'])
def test_a_byte_that_is_not_utf8_matches_as_read_range_shows_it_or_as_a_replacement_character(quoted):
    file_lines = b'def price(amount):\n    label = "Prix: \xe9 %d" % amount\n'.decode("utf-8", "replace").splitlines()
    assert find_snippet(file_lines, quoted) == [(2, 2)]
    assert find_snippet(file_lines, 'label = "Prix: e %d" % amount') == []

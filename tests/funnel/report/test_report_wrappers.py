"""A report inside the XML-style wrapper other agents' prompts ask a final answer in is read as the report."""

from __future__ import annotations

from funnel.report._layout import unwrap_tags
from funnel.report.parse import parse_report
from tests.funnel.harness_support import GOOD_REPORT


def test_a_report_in_answer_tags_reads_as_the_bare_report():
    bare = parse_report(GOOD_REPORT)
    for wrapped in (f"<answer>\n{GOOD_REPORT}</answer>", f"Here it is:\n<report>\n{GOOD_REPORT}\n</report>\n",
                    f"<final_answer>{GOOD_REPORT}</final_answer>"):  # fmt: skip
        draft = parse_report(wrapped)
        assert (draft.summary, draft.open_questions, draft.notes) == (bare.summary, bare.open_questions, [])
        assert draft.affected_files == bare.affected_files and draft.risk == bare.risk


def test_a_tag_closed_at_the_end_but_opened_inside_a_line_is_the_reports_text():
    text = f"{GOOD_REPORT}\nSee <b>the loop</b>"
    assert unwrap_tags(text) == text
    assert unwrap_tags("no tags at all") == "no tags at all"

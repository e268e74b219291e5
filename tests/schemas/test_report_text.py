"""The text every extractor reads is the report as its reader sees it: no issue-template comments; a body over the
limit clipped to its beginning and end."""

from __future__ import annotations

import re
import time

import pytest

from schemas import BugReport
from schemas.enums import Source
from schemas.report import MAX_BODY_CHARS, clip_body
from schemas.text import markdown_parts, scrub, visible_markdown, without_blocks, without_escapes

TEMPLATE_ISSUE = """**Describe the bug**
Long repository names go outside the card.

<!--

PLEASE READ THE FAQs!!!

Q: How to count private stats?
Ans: We can only count private commits.

-->"""


def test_an_issue_templates_comment_is_not_part_of_the_report_text():
    report = BugReport(title="Bug: word wrapping", body=TEMPLATE_ISSUE)
    assert "Long repository names go outside the card." in report.text
    assert "private" not in report.text and "FAQs" not in report.text
    assert report.body == TEMPLATE_ISSUE  # what was delivered is kept as it came


def test_jira_wiki_markup_shows_an_html_comment_as_written():
    report = BugReport(title="Import fails", body="The parser stops at <!-- in the file -->", source=Source.jira)
    assert report.text.endswith("<!-- in the file -->")


@pytest.mark.parametrize(("text", "seen"), [
    ("a <!-- hidden --> b", "a  b"),
    ("x `<!-- in a code span -->` y <!-- gone --> z", "x `<!-- in a code span -->` y  z"),
    ("```html\n<!-- in a code block -->\n```\nafter <!-- gone -->", "```html\n<!-- in a code block -->\n```\nafter "),
    ("~~~\n<!-- in a code block never closed -->", "~~~\n<!-- in a code block never closed -->"),
    ("the parser fails on <!-- when it is never closed", "the parser fails on <!-- when it is never closed"),
    ("<!-- a comment holding ```\nno code block``` --> tail", " tail"),
])
def test_only_comments_a_renderer_hides_are_left_out(text, seen):
    assert visible_markdown(text) == seen


HOSTILE = ["<!--" * 50_000 + "-->", "<!-- -->" + "<!--" * 50_000, "`a" * 100_000 + "<!-- -->",
           "```\n" * 50_000 + "<!-- -->", "~~~ <!--" * 20_000 + "-->", ("``" * 1_000 + "\n") * 100 + "<!-- -->"]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_hostile_body_of_the_largest_size_is_read_at_once(hostile):
    started = time.perf_counter()
    visible_markdown(hostile)
    assert time.perf_counter() - started < 5.0  # linear: milliseconds here; quadratic would take minutes


def test_a_body_over_the_limit_keeps_its_beginning_and_its_end_and_states_the_cut():
    body = "Steps: run the job\n" + "INFO request served\n" * 20_000 + "ZeroDivisionError: division by zero\n"
    clipped = clip_body(body)
    assert len(clipped) <= MAX_BODY_CHARS and clipped.startswith("Steps: run the job")
    assert clipped.endswith("ZeroDivisionError: division by zero\n")
    cut = int(re.search(r"\.\.\.\[(\d+) characters truncated by bugsleuth", clipped).group(1))
    assert len(clipped) - len(re.search(r"\n\n\.\.\.\[.*?\]\.\.\.\n\n", clipped).group(0)) + cut == len(body)
    assert clip_body("short") == "short"


def test_a_reports_own_words_leave_out_its_code_blocks_whatever_its_line_ends():
    text = "Wrong sum\r\n\r\n```\r\ntotal = 1\r\nprint(total)\r\n```\r\nIt should be 2.\r"
    assert without_blocks(text, ["total = 1\nprint(total)"]) == "Wrong sum\n\n```\n\n```\nIt should be 2.\n"


def test_a_log_pasted_with_its_terminal_colours_is_read_without_them():
    report = BugReport(title="\x1b[1;31mcrash\x1b[0m in pricing",
                       body="\x1b]0;ci job\x07```\n\x1b[31mZeroDivisionError\x1b[0m: \x9b1mdivision\x9bm by zero\x1b(B\n```")
    assert report.text == "crash in pricing\n\n```\nZeroDivisionError: division by zero\n```"
    assert report.body.startswith("\x1b]0;ci job")  # stored as received
    assert without_escapes("no escapes [31m here") == "no escapes [31m here"
    started = time.perf_counter()
    assert "\x1b" not in without_escapes("\x1b]" * 100_000 + "\x1b[1;" * 50_000)
    assert time.perf_counter() - started < 5.0  # linear: milliseconds here


def test_markdown_parts_name_fences_code_spans_and_comments_in_the_order_they_open():
    text = "see `a <!-- b` and <!-- `c` -->\n```\n<!-- d\n```\ntail <!-- open"
    assert list(markdown_parts(text)) == [
        ("prose", "see "), ("code", "`a <!-- b`"), ("prose", " and "), ("comment", "<!-- `c` -->"), ("prose", "\n"),
        ("fence", "```\n<!-- d\n```"), ("prose", "\ntail <!-- open")]


@pytest.mark.parametrize("unit", ["<!--", "`<!--", "<!-- `", "`a"])
def test_markdown_parts_of_a_hostile_text_of_the_largest_size_are_read_at_once(unit):
    text = unit * (1_000_000 // len(unit))
    started = time.perf_counter()
    assert "".join(part for _, part in markdown_parts(text)) == text
    assert time.perf_counter() - started < 5.0  # linear: 0.2 s here; an unclosed `<!--` once took minutes


def test_scrub_makes_every_string_storable_and_every_float_that_is_not_finite_null():
    value = {"a\x00": ["\ud800", 1.5, float("nan"), {"b": float("-inf"), "c": 2**70}], "d": (float("inf"), True)}
    assert scrub(value) == {"a\ufffd": ["\ufffd", 1.5, None, {"b": None, "c": 2**70}], "d": [None, True]}

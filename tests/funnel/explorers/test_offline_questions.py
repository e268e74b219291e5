"""The questions a weak offline diagnosis asks: only what the report leaves out, in the terms of its kind."""

from __future__ import annotations

from funnel import investigate
from funnel.explorers.offline import OfflineExplorer, writer
from funnel.explorers.offline.questions import open_questions, states_expectation, states_steps, states_version
from repomap.focus import Focus
from schemas.enums import Classification
from schemas.report import BugReport
from tests.funnel.localize.test_offline_rank import _make


def _asked(text: str, kind: Classification = Classification.bug, **kw: bool) -> list[str]:
    return open_questions(text, Focus.from_text(text), kind, **kw)


def test_a_feature_request_is_asked_how_it_would_be_used_not_for_a_stack_trace():
    asked = _asked("Add builtin to output to file\n\nIt would help to write results to a file from a filter.",
                   Classification.feature_request)
    assert asked == ["Can you show how you would use it: the call, option or configuration you would write, and "
                     "what it should produce?"]


def test_a_question_is_asked_what_was_tried_not_whether_it_fails():
    asked = _asked("logx support global fields?\n\nCan logx add the same fields to every line?", Classification.question)
    assert asked == ["Can you show what you tried: the call, option or configuration you wrote, and what you expected "
                     "it to produce?"]


def test_a_feature_request_showing_its_use_in_code_is_asked_nothing_more():
    text = "Add a leaf method\n\n```java\nJsonPointer.compile(\"/a/b\").last();\n```\n"
    assert _asked(text, Classification.feature_request) == []


def test_a_report_naming_its_version_is_asked_only_what_it_expected():
    text = "capture returns inconsistent results\n\nI upgraded from JQ version 1.6 to 1.7 and the output changed."
    asked = _asked(text)
    assert "What did you expect to happen instead?" in asked
    assert not any("Which version" in q for q in asked)


def test_a_report_stating_version_and_expectation_is_not_asked_for_either():
    text = ("Low contrast for null coloring\n\nUsing jq v1.7.1 the null color is dark grey; it should be "
            "readable on a black terminal.")
    asked = _asked(text)
    assert not any("version" in q.lower() or "expect" in q for q in asked)


def test_a_report_with_numbered_steps_is_not_asked_for_steps():
    text = ("Server hangs on shutdown\n\nSteps:\n1. start the server\n2. send SIGTERM\n\nIt should exit at once "
            "on version 2.1.0.")
    asked = _asked(text)
    assert not any("steps" in q for q in asked)
    assert not any("version" in q.lower() or "expect" in q for q in asked)


def test_a_behaviour_report_without_an_error_is_asked_whether_one_is_raised():
    asked = _asked("Total ignores the currency\n\ntotal(orders) gives 12 for euros.")
    assert asked[0] == "Does it fail with an error? If so, can you share the full output or stack trace?"


def test_a_report_naming_an_error_without_a_trace_is_asked_for_the_trace():
    asked = _asked("Parsing fails\n\nI get a ValueError when the file is empty.")
    assert asked[0] == "Can you share the full error output or stack trace?"


def test_a_slowdown_is_asked_for_sizes_and_timings():
    asked = _asked("Rendering is slow\n\nRendering a big table takes ages.", Classification.performance)
    assert asked[0].startswith("Can you share the input (its size and shape) and the timings")


def test_nothing_found_also_asks_which_part_of_the_project():
    assert _asked("It is broken", none_found=True)[-1] == "Which part of the project (module, command, page) is involved?"


def test_versions_expectations_and_steps_are_read_from_the_words_not_the_code():
    code = "Crash\n\n```\nversion = 1.2.3  # expected\n1. a\n2. b\n```\n"
    focus = Focus.from_text(code)
    assert not states_version(code, focus) and not states_expectation(code, focus)
    assert states_steps(code, focus)  # a code block is a reproduction in itself
    for text in ("axios@1.5.0 drops the header", "seen at commit 3f2a9c1d on main", "fails on the master branch",
                 "jackson-core-2.9.0.pr2 breaks"):
        assert states_version(text, Focus.from_text(text)), text
    form = "Header dropped\n\n### Expected behavior\n\n_No response_\n\n### Axios Version\n\n_No response_\n"
    assert not states_expectation(form, Focus.from_text(form)) and not states_version(form, Focus.from_text(form))
    crlf = "Wrong sum\r\n\r\n```\r\nversion = 1.2.3  # expected\r\n```\r\n"
    assert not states_version(crlf, Focus.from_text(crlf)) and not states_expectation(crlf, Focus.from_text(crlf))
    pasted = "Wrong sum\n\n```\ncommit: None\nxarray: 0.16.0\nnumpy: 1.19.1\n```\n"
    assert states_version(pasted, Focus.from_text(pasted))
    banner = "Wrong sum\n\n```\nPython 3.6.0 (default, Dec 23 2016)\nIPython 5.1.0 -- An enhanced Interactive Python\n```\n"
    assert not states_version(banner, Focus.from_text(banner))  # the interpreter's, not the project's
    xml = 'Bad report\n\n```xml\n<?xml version="1.0" encoding="utf-8"?>\n```\n'
    assert not states_version(xml, Focus.from_text(xml))
    for text in ("took 0.5 seconds", "see issue 1.", "Python is great"):
        assert not states_version(text, Focus.from_text(text)), text


async def test_a_feature_request_matching_nothing_is_not_asked_for_a_stack_trace(tmp_path):
    root = _make(tmp_path / "repo", {"shop/orders.py": "def total(orders):\n    return sum(o.amount for o in orders)\n"})
    report = BugReport(title="Support exporting reports", body="It would be nice to have this, please add it.")
    dx = (await investigate(report, root, explorer=OfflineExplorer())).diagnosis
    assert dx.classification == Classification.feature_request
    assert any(q.startswith("Can you show how you would use it") for q in dx.open_questions)
    assert not any("stack trace" in q for q in dx.open_questions)


async def test_a_bug_report_the_repository_cannot_place_is_asked_only_what_it_leaves_out(tmp_path):
    root = _make(tmp_path / "repo", {"shop/orders.py": "def total(orders):\n    return sum(o.amount for o in orders)\n",
                                     "shop/names.py": "def names(orders):\n    return [o.name for o in orders]\n"})
    report = BugReport(title="It is broken", body="Since version 2.3.1 something is wrong sometimes; it should work.")
    dx = (await investigate(report, root, explorer=OfflineExplorer())).diagnosis
    assert "Can you share a minimal snippet or the exact steps that reproduce the problem?" in dx.open_questions
    assert not any("version" in q.lower() or "expect" in q for q in dx.open_questions)


async def test_the_summary_says_weak_exactly_when_the_confidence_shown_is_below_one_half(tmp_path, monkeypatch):
    root = _make(tmp_path / "repo", {"shop/orders.py": "def total(orders):\n    return sum(o.amount for o in orders)\n",
                                     "shop/names.py": "def names(orders):\n    return [o.name for o in orders]\n"})
    report = BugReport(title="total ignores refunds", body="total(orders) counts refunded orders as paid.")
    for shown, weak in ((0.3, True), (0.49, True), (0.5, False), (0.8, False)):
        monkeypatch.setattr(writer, "calibrated", lambda raw, language=None, features=None, p=shown: p)
        dx = (await investigate(report, root, explorer=OfflineExplorer())).diagnosis
        assert dx.confidence == shown
        assert dx.summary.startswith("Weak evidence only") is weak, (shown, dx.summary)
        assert bool(dx.open_questions) is weak

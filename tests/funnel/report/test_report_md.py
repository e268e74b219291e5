"""The markdown report template: rendering, lenient parsing and the round trip between them."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funnel.report.parse import parse_report
from funnel.report.template import (
    REPORT_TEMPLATE,
    DraftAffectedFile,
    DraftChange,
    DraftRating,
    DraftRootCause,
    ReportDraft,
    parse_location,
    render_report,
)
from funnel.tools.sandbox import Sandbox
from funnel.tools import ToolError, read_range
from tests.funnel.harness_support import FIXTURE_REPO, GOOD_REPORT
from schemas import AffectedFile, ComplexityRating, Diagnosis, ProposedChange, RiskRating, RootCause
from schemas.enums import Complexity, Risk, Role

MESSY = """# Investigation report: crash when parsing empty config\r
\r
**Summary:** Loading an empty config file raises `KeyError` instead of using defaults.\r
\r
### ROOT CAUSE ANALYSIS\r
`Config.load` indexes `data["section"]` without checking the file was empty.\r
\r
**Evidence:**\r
* `src/app/config.py:42` reads the key directly\r
* the caller in `src/app/main.py#L10` passes through\r
\r
### Affected Files / Locations\r
- src/app/config.py, lines 40-44 (root cause) in `Config.load`:\r
```py\r
    def load(self):\r
        return data["section"]\r
```\r
- `src/app/main.py#L10-L12` — symptom\r
\r
    > main(cfg)\r
\r
### Suggested fix\r
1. In `src/app/config.py`, method `Config.load`: use `.get()` with a default.\r
\r
```diff\r
--- a/src/app/config.py\r
+++ b/src/app/config.py\r
@@\r
-        return data["section"]\r
+        return data.get("section", {})\r
```\r
\r
### Complexity\r
**Trivial** - a one-line change\r
\r
### Risk: \r
Low. Only affects empty files.\r
\r
**Confidence:** 85%\r
\r
### Open questions\r
None.\r
"""


def _diagnosis() -> Diagnosis:
    return Diagnosis(
        summary="Empty config files crash the loader.",
        root_cause=RootCause(
            explanation="`Config.load` indexes a key that an empty file does not have.",
            evidence=["`src/app/config.py:42` indexes `data['section']`", "`main` passes the result on unchecked"],
        ),
        affected_files=[
            AffectedFile(
                path="src/app/config.py", line_start=40, line_end=42, symbol="Config.load", role=Role.cause,
                evidence="    def load(self):\n        # ```fences``` inside code\n        return data['section']",
            ),
            AffectedFile(path="src/app/main.py", line_start=10, line_end=10, symbol="main", role=Role.symptom),
        ],
        proposed_changes=[
            ProposedChange(path="src/app/config.py", symbol="Config.load", description="Default to `{}`.",
                           diff="-        return data['section']\n+        return data.get('section', {})"),
            ProposedChange(path="tests/test_config.py", description="Add a test for an empty file."),
        ],
        complexity=ComplexityRating(level=Complexity.trivial, reason="one line"),
        risk=RiskRating(level=Risk.low, reason="local change"),
        confidence=0.75,
        open_questions=["Which version?"],
    )  # fmt: skip


def test_the_template_examples_are_placeholders_never_read_as_locations():
    draft = parse_report(REPORT_TEMPLATE)
    assert draft.summary.startswith("One or two sentences") and draft.confidence == 0.7
    assert [f.path for f in draft.affected_files] == [] and [c.path for c in draft.proposed_changes] == [""]
    assert draft.proposed_changes[0].diff == "- old line\n+ new line"
    assert all("without a path" in n for n in draft.notes)
    assert draft.complexity == DraftRating(level="small", reason="one function, no API change.")


def test_a_tool_refuses_a_template_placeholder_with_a_pointed_hint():
    with pytest.raises(ToolError, match="placeholder from the report template"):
        read_range(Sandbox(FIXTURE_REPO), "<path>", 1, 40)


def test_render_uses_the_fixed_headings_in_order():
    text = render_report(_diagnosis())
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Summary", "## Root cause", "## Affected files", "## Proposed changes",
        "## Complexity", "## Risk", "## Confidence", "## Open questions",
    ]  # fmt: skip
    assert "1. `src/app/config.py:40-42` — `Config.load` (cause)" in text
    assert "2. `src/app/main.py:10` — `main` (symptom)" in text
    assert "- `src/app/config.py` — `Config.load`: Default to `{}`." in text


def test_round_trip_markdown_to_draft_to_markdown_is_stable():
    first = render_report(_diagnosis())
    draft = parse_report(first)
    assert draft.notes == []
    second = render_report(draft)
    assert second == first
    assert render_report(parse_report(second)) == second


def test_round_trip_keeps_snippets_that_contain_fences():
    draft = parse_report(render_report(_diagnosis()))
    assert draft.affected_files[0].evidence == _diagnosis().affected_files[0].evidence


def test_parse_of_messy_llm_markdown_recovers_every_section():
    draft = parse_report(MESSY)
    assert draft.summary.startswith("Loading an empty config file raises")
    assert draft.root_cause.explanation.startswith("`Config.load` indexes")
    assert len(draft.root_cause.evidence) == 2
    first, second = draft.affected_files
    assert (first.path, first.line_start, first.line_end, first.symbol) == ("src/app/config.py", 40, 44, "Config.load")
    assert first.role is Role.cause
    assert 'return data["section"]' in first.evidence
    assert (second.path, second.line_start, second.line_end, second.role) == ("src/app/main.py", 10, 12, Role.symptom)
    assert second.evidence == "main(cfg)"
    (change,) = draft.proposed_changes
    assert change.path == "src/app/config.py"
    assert change.symbol == "Config.load"
    assert "use `.get()` with a default" in change.description
    assert change.diff and "+++ b/src/app/config.py" in change.diff
    assert draft.complexity == DraftRating(level="trivial", reason="a one-line change")
    assert draft.risk and draft.risk.level == "low"
    assert draft.confidence == 0.85
    assert draft.open_questions == []


def test_parse_tolerates_heading_case_and_levels():
    text = "# SUMMARY\nIt breaks.\n\n#### root cause\nBecause.\n\n# AFFECTED FILES\n* `a/b.py:3`\n"
    draft = parse_report(text)
    assert (draft.summary, draft.root_cause.explanation) == ("It breaks.", "Because.")
    assert [(f.path, f.line_start, f.line_end) for f in draft.affected_files] == [("a/b.py", 3, 3)]


def test_parse_reads_a_report_wrapped_in_a_markdown_fence():
    draft = parse_report("```markdown\n" + REPORT_TEMPLATE + "```\n")
    assert draft.summary.startswith("One or two sentences")
    assert draft.confidence == 0.7 and draft.open_questions


def test_code_comments_inside_snippets_are_not_headings():
    text = "## Summary\nS.\n## Affected files\n1. `a.py:1-2` (cause)\n```python\n# Risk\nx = 1\n```\n## Risk\nhigh — r\n"
    draft = parse_report(text)
    assert draft.affected_files[0].evidence == "# Risk\nx = 1"
    assert draft.risk == DraftRating(level="high", reason="r")


def test_missing_sections_are_reported_in_notes():
    draft = parse_report("## Summary\nOnly a summary.\n")
    assert draft.summary == "Only a summary."
    assert "missing section 'affected files'" in draft.notes
    assert "missing section 'root cause'" in draft.notes


def test_free_form_report_falls_back_to_locations_cited_in_text():
    draft = parse_report("The bug is in `pkg/mod.py:12-14`, called from pkg/cli.py line 7.")
    assert [(f.path, f.line_start) for f in draft.affected_files] == [("pkg/mod.py", 12), ("pkg/cli.py", 7)]
    assert any("no 'Affected files' section" in note for note in draft.notes)


def test_free_form_report_reads_a_cited_path_with_a_space_whole_and_in_order():
    draft = parse_report("The cause is `pkg/mod.py:12`; the guide says otherwise at `docs/User Guide.md:3-9`.")
    assert [(f.path, f.line_start, f.line_end) for f in draft.affected_files] == [
        ("pkg/mod.py", 12, 12),
        ("docs/User Guide.md", 3, 9),
    ]


def test_an_escaped_identifier_in_a_longer_fence_is_read_as_the_whole_symbol():
    text = ("## Affected files\n1. `Source/Session.swift:2-2` — `` Session.`default` `` (cause)\n"
            "## Proposed changes\n- `Source/Session.swift` — `` Session.`default` ``: make it lazy.\n")
    draft = parse_report(text)
    assert [f.symbol for f in draft.affected_files] == ["Session.`default`"]
    assert (draft.proposed_changes[0].symbol, draft.proposed_changes[0].description) == ("Session.`default`",
                                                                                       "make it lazy.")


def test_location_forms_are_all_understood():
    assert parse_location("`path/x.py:12`") == ("path/x.py", 12, 12)
    assert parse_location("path/x.py:12-20") == ("path/x.py", 12, 20)
    assert parse_location("path/x.py#L12-L20") == ("path/x.py", 12, 20)
    assert parse_location("path/x.py, lines 12-20") == ("path/x.py", 12, 20)
    assert parse_location("path/x.py (lines 12–20)") == ("path/x.py", 12, 20)
    assert parse_location("./x.go:7:3") == ("x.go", 7, 7)
    assert parse_location("x.py") == ("x.py", None, None)
    assert parse_location("Config.load") is None
    assert parse_location("see https://example.com/a.py") is None
    assert parse_location("version 1.2.3") is None


def test_confidence_forms_are_normalised_to_unit_interval():
    def conf(text: str) -> float | None:
        return parse_report(f"## Confidence\n{text}\n").confidence

    assert conf("0.7") == 0.7
    assert conf("70%") == 0.7
    assert conf("7/10") == 0.7
    assert conf("**high**") == 0.8
    assert conf("_None._") is None


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("#`*-_:|/.\r\n ~>0123456789abcLpy()[]\t—"))))
def test_parse_never_raises_on_garbage(text):
    draft = parse_report(text)
    assert isinstance(draft, ReportDraft)


def test_garbage_gives_an_empty_draft_with_notes():
    draft = parse_report("\x00\x01 ``` ### ")
    assert draft.is_empty()
    assert draft.notes


def test_render_accepts_a_draft_with_missing_values():
    draft = ReportDraft(
        root_cause=DraftRootCause(evidence=["e"]),
        affected_files=[DraftAffectedFile(path="a.py")],
        proposed_changes=[DraftChange(path="a.py", description="d")],
    )
    text = render_report(draft)
    assert "## Summary\n_None._" in text
    assert "1. `a.py` (cause)" in text
    assert parse_report(text).affected_files[0].path == "a.py"


def test_affected_files_given_as_a_table_are_read():
    text = (
        "## Affected files\n"
        "| File | Lines | Symbol | Role |\n|---|---|---|---|\n"
        "| `src/a.py` | 10-20 | `Parser.feed` | cause |\n"
        "| src/b.py:7 | | `helper()` | symptom |\n"
    )
    draft = parse_report(text)
    assert [(f.path, f.line_start, f.line_end, f.symbol, f.role) for f in draft.affected_files] == [
        ("src/a.py", 10, 20, "Parser.feed", Role.cause), ("src/b.py", 7, 7, "helper", Role.symptom),
    ]  # fmt: skip


def test_affected_files_with_key_value_lines_are_read():
    text = (
        "## Affected files\n"
        "1. **File:** `src/a.py`\n"
        "   - **Lines:** 10–12\n"
        "   - **Symbol:** `Parser.feed`\n"
        "   - **Role:** symptom\n"
        "   ```python\n   x = 1\n   ```\n"
    )
    (item,) = parse_report(text).affected_files
    assert (item.path, item.line_start, item.line_end, item.symbol, item.role) == ("src/a.py", 10, 12, "Parser.feed", Role.symptom)
    assert item.evidence == "x = 1"


def test_affected_files_as_sub_headings_are_read():
    text = (
        "## Affected files\n"
        "### 1. `src/fix_utils.py:3-4` — `fix` (cause)\n```python\na = 1\nb = 2\n```\n"
        "### 2. `src/other.py:9` (related)\n"
        "## Risk\nlow\n"
    )
    draft = parse_report(text)
    assert [(f.path, f.line_start, f.role) for f in draft.affected_files] == [
        ("src/fix_utils.py", 3, Role.cause), ("src/other.py", 9, Role.related),
    ]  # fmt: skip
    assert draft.affected_files[0].evidence == "a = 1\nb = 2"
    assert draft.proposed_changes == []


_WORDS = st.text(alphabet=st.sampled_from(list("abcxyz ABC_.,()'\"=+-<>[]{}!?0123456789")), min_size=1, max_size=40).map(
    lambda s: " ".join(s.split())
).filter(lambda s: s.lower().strip(".*_` ") not in {"", "none", "n/a", "na", "no", "nothing", "tbd", "unknown", "-"})
_CODE = st.lists(
    st.text(alphabet=st.sampled_from(list("abc xyz_()=:#`'\"-+{}[]\t")), max_size=30).map(str.rstrip), min_size=1, max_size=6
).map(lambda lines: "\n".join(lines).rstrip("\n")).filter(lambda s: s.strip())
_PATHS = st.from_regex(r"[a-z]{1,8}(/[a-z_]{1,8}){0,3}\.(py|go|rs|js)", fullmatch=True)


@settings(max_examples=80, deadline=None)
@given(
    summary=_WORDS, explanation=_WORDS, evidence=st.lists(_WORDS, max_size=3),
    files=st.lists(st.tuples(_PATHS, st.integers(1, 5000), st.integers(0, 40), st.sampled_from(list(Role)), _CODE),
                   min_size=1, max_size=4),
    confidence=st.floats(0, 1).map(lambda x: round(x, 2)), questions=st.lists(_WORDS, max_size=3),
)  # fmt: skip
def test_render_then_parse_is_lossless_for_any_content(summary, explanation, evidence, files, confidence, questions):
    draft = ReportDraft(
        summary=summary,
        root_cause=DraftRootCause(explanation=explanation, evidence=evidence),
        affected_files=[
            DraftAffectedFile(path=p, line_start=a, line_end=a + n, symbol="mod.fn", role=r, evidence=code)
            for p, a, n, r, code in files
        ],
        complexity=DraftRating(level="medium", reason=explanation),
        risk=DraftRating(level="high", reason=summary),
        confidence=confidence,
        open_questions=questions,
    )
    back = parse_report(render_report(draft))
    assert back.notes == []
    assert back.model_dump(exclude={"notes"}) == draft.model_dump(exclude={"notes"})


def test_markdown_links_cite_their_target_path():
    text = (
        "## Affected files\n"
        "1. [config.py](src/app/config.py#L12-L15) — `Config.load` (cause)\n"
        "2. [`src/app/main.py:6`](https://github.com/acme/demo/blob/abc/src/app/main.py#L6) (symptom)\n"
    )
    draft = parse_report(text)
    assert [(f.path, f.line_start, f.line_end, f.role) for f in draft.affected_files] == [
        ("src/app/config.py", 12, 15, Role.cause), ("src/app/main.py", 6, 6, Role.symptom),
    ]  # fmt: skip
    assert draft.affected_files[0].symbol == "Config.load"


@pytest.mark.parametrize("line", ["a" * 30000, "a/" * 15000, "ab.cd/" * 5000, "# " + "#" * 30000 + "x", "x.py:1 " * 4000])
def test_long_pathological_lines_parse_in_linear_time(line):
    import time

    started = time.perf_counter()
    parse_report(f"## Summary\n{line}\n## Affected files\n1. {line}\nfree text {line}\n")
    assert time.perf_counter() - started < 2.0  # quadratic scanning took minutes on these


def test_pytest_style_node_ids_give_path_and_symbol():
    draft = parse_report("## Affected files\n1. `src/app/config.py::Config::load` lines 12-15 (cause)\n")
    (item,) = draft.affected_files
    assert (item.path, item.line_start, item.line_end, item.symbol) == ("src/app/config.py", 12, 15, "Config.load")


def test_an_explanation_line_that_looks_like_a_bullet_stays_in_the_explanation():
    draft = ReportDraft(summary="s", root_cause=DraftRootCause(explanation="- 0 is read as a count", evidence=["e"]))
    text = render_report(draft)
    assert "\\- 0 is read as a count" in text
    back = parse_report(text)
    assert (back.root_cause.explanation, back.root_cause.evidence) == ("- 0 is read as a count", ["e"])


def test_setext_headings_are_read_as_sections():
    setext = re.sub(r"^## (.+)$", lambda m: f"{m.group(1)}\n{'-' * len(m.group(1))}", GOOD_REPORT, flags=re.M)
    draft = parse_report(setext)
    assert draft.summary == "A 10% discount removes the whole price."
    assert [(f.path, f.line_start) for f in draft.affected_files] == [("shop/pricing.py", 8)] and draft.notes == []


def test_a_report_fenced_after_a_preamble_is_unwrapped():
    draft = parse_report("Here is my report:\n\n````markdown\n" + GOOD_REPORT + "````\nHope this helps.\n")
    assert draft.summary and [f.path for f in draft.affected_files] == ["shop/pricing.py"] and draft.notes == []


def test_a_report_written_as_json_is_read_and_says_so():
    body = {"summary": "Divides by 10.", "affected_files": [{"path": "shop/pricing.py", "line_start": 8, "line_end": 8}]}
    draft = parse_report("```json\n" + json.dumps(body) + "\n```")
    assert draft.summary == "Divides by 10." and draft.affected_files[0].line_start == 8
    assert draft.notes == ["the report is JSON, not the markdown template"]


def test_json_of_another_shape_is_read_as_markdown():
    assert parse_report('{"answer": 42}').notes[0] == "no template headings found"


def test_json_nested_deeper_than_the_parser_goes_is_read_as_markdown():
    assert parse_report('{"summary": ' + "[" * 5000 + "\n## Summary\nDivides by 10.\n").summary == "Divides by 10."

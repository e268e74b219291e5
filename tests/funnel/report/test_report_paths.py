"""Paths in a report read as the files they name: names with spaces, colons, brackets, accents and other characters
a path token stops at."""

from __future__ import annotations

import pytest

from funnel.report.parse import parse_report


@pytest.mark.parametrize("path", ["docs/User Guide.md", "src/with space.py", "src/x:12.py", "-rf.py", "src/#t.py",
                                  "app/(shop)/[id]/page.tsx", "src/100%.py", "src/it's.py", "src/t\U0001F600.py"])
def test_a_backticked_path_with_a_character_a_path_token_stops_at_or_a_leading_dash_is_read_whole(path):
    draft = parse_report(f"## Summary\nx\n\n## Root cause\ny\n\n## Affected files\n1. `{path}:3-4` — `f` (cause)\n\n"
                         f"## Proposed changes\n- `{path}` — `f`: check the handling there\n")
    assert [(a.path, a.line_start, a.line_end) for a in draft.affected_files] == [(path, 3, 4)]
    assert [c.path for c in draft.proposed_changes] == [path]


@pytest.mark.parametrize("head, path", [("`src/a.py::Foo.bar` lines 3-4", "src/a.py"),
                                        ("`src/a.py or src/b.py`: fix both", "src/a.py"),
                                        ("`src/a.py: the bug`", "src/a.py")])
def test_a_backticked_span_naming_more_than_one_file_or_a_symbol_keeps_the_path_found_in_it(head, path):
    draft = parse_report(f"## Summary\nx\n\n## Root cause\ny\n\n## Affected files\n1. {head}\n")
    assert [a.path for a in draft.affected_files] == [path]


def test_a_path_with_a_decomposed_accent_is_one_token():
    path = "src/cafe\u0301_total.py"  # as committed from macOS
    draft = parse_report(f"## Summary\nx\n\n## Root cause\ny\n\n## Affected files\n1. `{path}:1-2` — `f` (cause)\n\n"
                         f"## Proposed changes\n- `{path}` — `f`: check the handling there\n")
    assert [(a.path, a.line_start) for a in draft.affected_files] == [(path, 1)]
    assert [c.path for c in draft.proposed_changes] == [path]


def test_a_word_that_spells_an_extension_is_prose_not_a_path():
    draft = parse_report("## Summary\nx\n\n## Root cause\ny\n\n## Affected files\n1. As we go into `pkg/a.go:3-4` (cause)\n\n"
                         "## Proposed changes\n- Let go of the lock in `pkg/a.go` before returning\n"
                         "- Write it in C, at 3 pm, in `src/b.c`\n")  # fmt: skip
    assert [a.path for a in draft.affected_files] == ["pkg/a.go"]
    assert [c.path for c in draft.proposed_changes] == ["pkg/a.go", "src/b.c"]


@pytest.mark.parametrize("head", ["File: `pkg/a.go`, Lines: 3–4", "pkg/a.go — L3-L4", "`pkg/a.go`: lines `3-4`",
                                  "`pkg/a.go` L3–L4", "pkg/a.go (3-4)", "at pkg/a.go lines 3 through 4"])
def test_a_line_range_spelled_in_words_after_the_path_is_read(head):
    draft = parse_report(f"## Summary\nx\n\n## Root cause\ny\n\n## Affected files\n1. {head}\n")
    assert [(a.path, a.line_start, a.line_end) for a in draft.affected_files] == [("pkg/a.go", 3, 4)]


@pytest.mark.parametrize("head", ["[the loop](https://github.com/o/r/blob/4f2c1e9/pkg/a.go#L3-L4) (cause)",
                                  "https://github.com/o/r/blob/main/pkg/a.go#L3-L4",
                                  "`https://gitlab.com/g/sub/r/-/blob/main/pkg/a.go#L3-4`",
                                  "https://bitbucket.org/o/r/src/main/pkg/a.go#lines-3:4"])
def test_a_code_hosts_address_of_a_file_cites_the_path_and_lines_it_names(head):
    draft = parse_report(f"## Summary\nx\n\n## Root cause\ny\n\n## Affected files\n1. {head}\n\n"
                         "## Proposed changes\n- https://github.com/o/r/blob/main/pkg/a.go: check it\n")
    assert [(a.path, a.line_start, a.line_end) for a in draft.affected_files] == [("pkg/a.go", 3, 4)]
    assert [c.path for c in draft.proposed_changes] == ["pkg/a.go"]


@pytest.mark.parametrize("head", ["`pkg/a.go`:3-4 — `f`", "**pkg/a.go**:3-4", "**pkg/a.go** (3-4)",
                                  'File "pkg/a.go", lines 3-4, in f', "`pkg/a.go(3)`: error C2065", "`pkg/a.go` line ~3"])
def test_a_line_written_past_the_paths_closing_tick_or_in_a_compilers_parentheses_is_read(head):
    draft = parse_report(f"## Summary\nx\n\n## Root cause\ny\n\n## Affected files\n1. {head}\n")
    [found] = draft.affected_files
    assert (found.path, found.line_start) == ("pkg/a.go", 3)


@pytest.mark.parametrize("head", ["`np.zeros(3)` in `pkg/a.go`", "`Foo.bar` lines 3-4 of `pkg/a.go`"])
def test_a_call_or_a_dotted_name_before_a_line_is_no_citation(head):
    draft = parse_report(f"## Summary\nx\n\n## Root cause\ny\n\n## Affected files\n1. {head}\n")
    assert [a.path for a in draft.affected_files] == ["pkg/a.go"]

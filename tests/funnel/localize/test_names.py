"""What the report writes as a name, and what only as a plain word."""

from __future__ import annotations

import pytest

from funnel.localize.names import is_plain_mention, plain_mention_reason, prose_form, report_names
from repomap.focus import Focus


@pytest.mark.parametrize(
    ("text", "symbol", "named"),
    [
        ("`ManagementForm.clean` drops the count", "ManagementForm.clean", "ManagementForm.clean"),
        ("ManagementForm warns about default.html", "ManagementForm.clean", "ManagementForm"),
        ("Catch2's Approx compares NaN as equal", "Catch.Detail.Approx.operator()", "Catch.Detail.Approx"),
        ("Negative indices wrap twice", "indices", None),
        ("Negative `indices` wrap twice", "indices", "indices"),
        ("The formset ignores extra forms", "BaseFormSet.forms", None),
    ],
    ids=["own-name", "enclosing-class", "enclosing-namespaces", "plain-word", "quoted-word", "nothing"],
)
def test_report_names_the_part_of_a_definition_it_writes_as_a_name(text, symbol, named):
    assert report_names(symbol, Focus.from_text(text)) == named


def test_a_prose_word_is_plain_unless_quoted_or_qualified():
    assert is_plain_mention("visible", set())
    assert not is_plain_mention("visible", {"visible"})
    assert not is_plain_mention("Widget.visible", set())
    assert not is_plain_mention("is_visible", set())


@pytest.mark.parametrize(
    ("text", "name", "said"),
    [
        ("delete() on instances of models without dependencies keeps the pk after .delete()", "delete", "(“delete()”)"),
        ("QuerySet.defer() doesn't clear deferred field when chaining with only()", "defer", "(“QuerySet.defer()”)"),
        ("Request#accepts() fixed due to ext changes", "accepts", "(“Request#accepts()”)"),
        ("The widget is not visible after visible() is called", "visible", "the plain word “visible”"),
    ],
    ids=["prose-call", "member-call", "javadoc-member", "word-and-call"],
)
def test_the_evidence_for_an_unquoted_name_says_how_the_report_writes_it(text, name, said):
    reason = plain_mention_reason(f"Model.{name}", name, prose_form(name, text))
    assert reason.endswith(said)
    assert ("plain word" in reason) == said.startswith("the plain word")

from __future__ import annotations

from funnel.localize.reasoning import named_items, reason
from funnel.localize.reasoning.uses import line_uses, name_use
from repomap.languages import grammar

_CPP = ("int print(const char* fmt) {\n"
        "  return is_utf8() ? vprint(fmt, 1) : vprint_legacy(fmt, 2);\n"
        "}\n")


def _root(language: str, source: str):
    return grammar(language).parser.parse(source.encode()).root_node


def test_a_name_handed_to_a_call_in_a_branch_is_passed_though_the_line_decides():
    root = _root("cpp", _CPP)
    assert line_uses(root, 1, 3)[2] == "compared"
    assert name_use(root, 2, "fmt") == "passed"
    assert name_use(root, 2, "is_utf8") == "compared"


def test_the_condition_of_a_python_conditional_is_compared_and_its_branches_returned():
    root = _root("python", "def f(a, b, flag, options):\n    return a if flag else b\n"
                           "    if options.get('header_rows'):\n        pass\n")
    assert name_use(root, 2, "flag") == "compared"
    assert name_use(root, 2, "a") == "returned"
    assert name_use(root, 3, "header_rows") == "compared"


def test_a_part_of_a_key_is_used_as_the_key_is():
    root = _root("rust", 'fn f(&self) {\n    if self.is_present("fixed-strings") {\n        g();\n    }\n}\n')
    assert name_use(root, 2, "strings") == "compared"
    assert name_use(root, 3, "strings") == ""


def test_a_behaviour_finding_says_what_its_line_does_with_the_name():
    found = reason("print garbles the `fmt` string on a legacy console", "core.h", _CPP,
                   [(1, 3, "print")], named=named_items(["fmt"], [], {"print"}), terms={})
    assert found[0].line == 2
    assert "`fmt`, which the report names, is passed at core.h:2" in found[0].mechanism
    assert "is compared" not in found[0].mechanism

from __future__ import annotations

import time

from funnel.localize.reasoning import named_items, reason
from funnel.localize.reasoning.uses import line_uses, name_use, overlapping
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


def test_the_exception_a_raise_or_throw_builds_is_raised_and_its_arguments_passed():
    python = _root("python", "def f(x):\n    raise ValueError(msg, x)\n")
    assert name_use(python, 2, "ValueError") == "raised"
    assert name_use(python, 2, "msg") == "passed"
    java = _root("java", "class A {\n  void f() {\n    throw new IllegalArgumentException(\"bad\");\n  }\n}\n")
    assert name_use(java, 3, "IllegalArgumentException") == "raised"
    kotlin = _root("kotlin", "fun f() {\n    throw IllegalStateException(\"bad\")\n}\n")
    assert name_use(kotlin, 2, "IllegalStateException") == "raised"
    swift = _root("swift", "func f() throws {\n    throw MyError.bad\n}\n")
    assert name_use(swift, 2, "MyError") == "raised"


def test_a_raise_of_the_named_exception_is_worded_as_a_raise_not_a_read():
    source = "def convert(value):\n    if not value:\n        raise ValueError('empty value')\n    return value\n"
    found = reason("convert raises `ValueError` for a zero", "conv.py", source, [(1, 4, "convert")],
                   named=named_items(["ValueError"], [], {"convert"}), terms={})
    assert found[0].line == 3
    assert "`ValueError`, which the report names, is raised at conv.py:3" in found[0].mechanism
    assert "is read" not in found[0].mechanism and "decided here" not in found[0].mechanism
    assert "raises `ValueError`" in found[0].change


def test_the_nodes_on_a_line_of_a_block_of_thousands_are_found_without_walking_every_sibling():
    """A method whose one line was repeated thousands of times (a mangled file of `bench/tree_chaos.py`) took a
    minute: each line asked about walked all the block's children. The nodes found are the brute-force walk's, and
    asking about each of 12,000 lines takes well under the bound (about a second here; 40 s and more before)."""
    body = "".join(f"    total = total + price / count{i % 7};\n" for i in range(12000))
    root = _root("java", f"class A {{\n  int f(int price) {{\n{body}    return total;\n  }}\n}}\n")

    def brute(first: int, last: int) -> list:
        out, stack = [], [root]
        while stack:
            node = stack.pop()
            if node.end_point[0] + 1 >= first and node.start_point[0] + 1 <= last:
                out.append(node)
                stack.extend(node.children)
        return out

    assert [n.id for n in overlapping(root, 1500, 1502)] == [n.id for n in brute(1500, 1502)]
    started = time.monotonic()
    uses = [name_use(root, line, "count3") for line in range(3, 12003)]
    assert time.monotonic() - started < 20.0
    assert set(uses) == {""} and name_use(root, 12003, "total") == "returned"  # read in arithmetic; returned

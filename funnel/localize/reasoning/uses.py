"""What a line of code does with a name: compares it (in a condition, a comparison or a case's pattern), returns
it, passes it on (to a call, as a keyword argument), gives it as a parameter's default or raises it (the exception
a `raise` or `throw` builds).

The behaviour rule weighs a line by the strongest use any node starting on it gives it (`line_uses`) and says what
the line does with the report's name by that name's own place in the tree (`name_use`): `fmt` handed to `vprint`
in a branch of `is_utf8() ? vprint(f, fmt, vargs) : …` is passed on there, not compared, though the line decides.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import Literal

from tree_sitter import Node

__all__ = ("USE_WEIGHT", "Use", "line_uses", "name_use", "overlapping")

Use = Literal["compared", "returned", "passed", "defaulted", "raised", ""]
"""What a line does with a name ("": it only reads it)."""

_USES: dict[str, Use] = {  # node types that make a line a decision, a result or a hand-over, across grammars
    "if_statement": "compared", "elif_clause": "compared", "while_statement": "compared",
    "conditional_expression": "compared", "ternary_expression": "compared", "comparison_operator": "compared",
    "case_clause": "compared", "switch_case": "compared", "match_arm": "compared", "if_expression": "compared",
    "expression_case": "compared", "when": "compared", "if": "compared", "unless": "compared",
    "return_statement": "returned", "return_expression": "returned", "return": "returned",
    "keyword_argument": "passed", "default_parameter": "defaulted", "typed_default_parameter": "defaulted",
}
USE_WEIGHT: dict[str, float] = {"compared": 1.6, "returned": 1.3, "passed": 1.3, "defaulted": 1.2, "raised": 1.0,
                                 "": 1.0}
"""How much a line's use of the report's name weighs its behaviour finding. A raise weighs as a read: the error
surfaces there, and the fix is as often where the value it rejects comes from."""
_RAISES = frozenset({"raise_statement", "throw_statement", "throw_expression"})
"""Statements that raise what they build, across grammars (Swift's is a `control_transfer_statement` opened by
`throw`; Go's `panic(...)`, Rust's `panic!` and Ruby's `raise` are calls, read as calls)."""
_KEY = re.compile(r"[\w.:/-]+")
"""A token that is one key (`fixed-strings`, `a.b`), not a message: its parts are names it holds."""
_ARGUMENTS = frozenset({"argument_list", "arguments"})
"""A call's arguments: a name there is passed on."""
_VALUE_IS_PATTERN = frozenset({"switch_case", "expression_case"})
"""Cases whose `value` field is what they match (a Rust arm's `value` is its result)."""


def overlapping(root: Node, first: int, last: int) -> Iterator[Node]:
    """Every node of the tree with a line in [first, last]."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.end_point[0] + 1 < first or node.start_point[0] + 1 > last:
            continue
        yield node
        stack.extend(_children_within(node, first, last))


def _children_within(node: Node, first: int, last: int) -> list[Node]:
    """The children of `node` that may have a line in [first, last], found by bisection: siblings follow each other,
    and a block of thousands of statements was walked child by child for every line asked about (a minute for one
    method of 3,000 lines)."""
    count = node.child_count
    if count <= 8:
        return node.children
    lo = bisect_left(range(count), first, key=lambda i: node.child(i).end_point[0] + 1)
    hi = bisect_right(range(count), last, key=lambda i: node.child(i).start_point[0] + 1)
    return [node.child(i) for i in range(lo, hi)]


def line_uses(root: Node, first: int, last: int) -> dict[int, Use]:
    """Line → the strongest use a node starting on it gives it (`compared` > `returned`, `passed` > `defaulted`)."""
    uses: dict[int, Use] = {}
    for node in overlapping(root, first, last):
        s = node.start_point[0] + 1
        use = _USES.get(node.type)
        if use and USE_WEIGHT[use] > USE_WEIGHT[uses.get(s, "")]:
            uses[s] = use
    return uses


def name_use(root: Node, line: int, name: str) -> Use:
    """What line `line` does with `name`, by the strongest use of its occurrences there, as a token or a part of a
    key (`--fixed-strings`); "" when the line only reads it or does not hold it."""
    best: Use = ""
    for node in overlapping(root, line, line):
        if node.child_count == 0 and node.start_point[0] + 1 == line and _holds(node.text or b"", name):
            use = _use_of(node)
            if (USE_WEIGHT[use], use != "") > (USE_WEIGHT[best], best != ""):  # a raise says more than a read
                best = use
    return best


def _holds(token: bytes, name: str) -> bool:
    """Whether a token is `name`, or a key that holds it as a part (`"fixed-strings"` holds `strings`)."""
    text = token.decode("utf-8", "replace")
    return text == name or (_KEY.fullmatch(text) is not None and name in re.split(r"[^\w]+", text))


def _use_of(leaf: Node) -> Use:
    """The use of one occurrence: the first decision it decides, else the hand-over or result it feeds."""
    passed = False
    child, parent = leaf, leaf.parent
    while parent is not None:
        use = _USES.get(parent.type)
        if use == "compared" and _decides(parent, child):
            return "compared"
        if use == "returned":
            return "passed" if passed else "returned"
        if use == "defaulted":
            return "defaulted"
        if _raises(parent):
            return "passed" if passed else "raised"
        passed = passed or use == "passed" or parent.type in _ARGUMENTS
        child, parent = parent, parent.parent
    return "passed" if passed else ""


def _raises(node: Node) -> bool:
    """Whether a node raises what it holds (`raise X(...)`, `throw new X(...)`, Swift's `throw X.y`)."""
    return node.type in _RAISES or (node.type == "control_transfer_statement" and node.child_count > 0
                                    and node.children[0].type == "throw_keyword")


def _decides(decision: Node, child: Node) -> bool:
    """Whether `child` is the part of `decision` that decides (its condition or pattern), not a branch or body."""
    if decision.type == "comparison_operator":
        return True
    if decision.type == "conditional_expression" and decision.child_by_field_name("condition") is None:
        named = decision.named_children  # Python's `a if condition else b` names no fields
        return len(named) == 3 and child == named[1]
    if child.type == "case_pattern":
        return True
    index = next((i for i, c in enumerate(decision.children) if c == child), None)
    field = decision.field_name_for_child(index) if index is not None else None
    return field in ("condition", "pattern") or (field == "value" and decision.type in _VALUE_IS_PATTERN)

"""Rust items written inside a macro invocation, read as the items they are.

Rust code bases put whole modules' worth of items inside macros invoked where items go: `cfg_rt! { pub fn
spawn(...) { ... } }`, `pin_project! { pub struct Sleep { ... } }`, `thread_local! { static CTX: ... }`. The
grammar parses a macro's body as an opaque token tree, so the map saw neither those definitions nor the calls in
them. When such a body, read alone, parses as Rust items, the invocation's own bytes (`cfg_rt! {` and its closing
`}`) are blanked and the file parsed again: the items then stand in the scope that holds the invocation (a module,
or an `impl` whose methods they are), at the very lines and bytes they occupy in the file.
"""

from __future__ import annotations

from typing import Any

__all__ = ("unwrap_item_macros",)

_ITEM_SCOPES = frozenset({"source_file", "declaration_list"})
"""Where an invocation stands in place of items: a file or module body, an `impl`, `trait` or `extern` block."""
_ITEM_CONTAINERS = frozenset({"mod_item", "impl_item", "trait_item", "foreign_mod_item", "declaration_list"})
"""Nodes whose bodies hold items, walked to find invocations nested in them."""
_ROUNDS = 4
"""Nesting depth unwrapped (`cfg_rt! { cfg_time! { ... } }`)."""


def _item_bodies(root: Any) -> list[tuple[Any, Any]]:
    """(invocation, body) of every brace-delimited macro invocation that stands where items go."""
    found: list[tuple[Any, Any]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.named_children:
            if child.type in _ITEM_CONTAINERS:
                stack.append(child)
            elif child.type == "macro_invocation" and node.type in _ITEM_SCOPES:
                body = child.named_children[-1] if child.named_children else None
                if body is not None and body.type == "token_tree" and _braced(body):
                    found.append((child, body))
    return found


def _braced(body: Any) -> bool:
    """The token tree opens with `{` and closes with a `}` the file holds (not one the parser supplied to a file cut
    short: blanking the byte before it would erase the body's own last byte)."""
    first, last = body.children[0], body.children[-1]
    return first.type == "{" and last.type == "}" and not last.is_missing


def _holds_items(parser: Any, inner: bytes) -> bool:
    """The bytes parse as Rust items with no syntax error (not an expression, a `select!` arm or a DSL)."""
    root = parser.parse(inner).root_node
    return not root.has_error and any(c.type != "expression_statement" for c in root.named_children)


def _blank(buffer: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if buffer[i] not in b"\r\n":
            buffer[i] = 0x20


def unwrap_item_macros(source: bytes, tree: Any, parser: Any) -> tuple[bytes, Any]:
    """The source with the wrappers of item-holding macro invocations blanked (every other byte in place) and
    its tree; the inputs themselves when no invocation holds items."""
    for _ in range(_ROUNDS):
        buffer: bytearray | None = None
        for invocation, body in _item_bodies(tree.root_node):
            if not _holds_items(parser, source[body.start_byte + 1: body.end_byte - 1]):
                continue
            if buffer is None:
                buffer = bytearray(source)
            _blank(buffer, invocation.start_byte, body.start_byte + 1)
            _blank(buffer, body.end_byte - 1, invocation.end_byte)
        if buffer is None:
            break
        source = bytes(buffer)
        tree = parser.parse(source)
    return source, tree

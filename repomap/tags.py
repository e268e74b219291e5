"""Definitions and references of one file, extracted with tree-sitter tags queries.

Syntax errors do not stop extraction (whatever parses is kept); invalid UTF-8 is decoded with replacement.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from repomap._macros import unwrap_item_macros
from repomap.languages import grammar


class DefKind(StrEnum):
    """What a definition defines."""

    class_ = "class"
    function = "function"
    method = "method"
    interface = "interface"
    struct = "struct"
    enum = "enum"
    trait = "trait"
    type = "type"
    module = "module"
    constant = "constant"
    macro = "macro"


class RefKind(StrEnum):
    """How a name is referenced."""

    call = "call"
    import_ = "import"
    base = "base"
    decorator = "decorator"
    annotation = "annotation"


DEF_KINDS: dict[str, DefKind] = {k.value: k for k in DefKind}
REF_KINDS: tuple[RefKind, ...] = tuple(RefKind)
"""Reference kinds by their one-byte code in the cache (the position in this tuple)."""
_REF_CODE: dict[str, int] = {k.value: i for i, k in enumerate(REF_KINDS)} | {"call.member": len(REF_KINDS)}
_CODE_KINDS: tuple[RefKind, ...] = (*REF_KINDS, RefKind.call)
"""Kind per stored code; the extra last code is a call through an attribute (`x.save()`), a `call` to users."""
_TRAILING_COMMENT = re.compile(r"([:{)])[ \t]*(?:#|//)[^\n]*", re.MULTILINE)
_CLASS_LIKE = frozenset({"class", "struct", "interface", "trait", "enum", "scope"})


class Definition(NamedTuple):
    """One named definition in a file."""

    name: str
    """The plain name (`parse`)."""
    qualname: str
    """Name qualified by its enclosing definitions (`Parser.parse`, Go `(*T).M` as `T.M`)."""
    kind: DefKind
    """What it defines."""
    path: str
    """Repository-relative POSIX path of the file."""
    start_line: int
    """First line (1-based) of the definition node (decorators excluded)."""
    end_line: int
    """Last line (1-based), inclusive."""
    signature: str
    """The header up to the body, whitespace collapsed and trimmed (`def parse(text: str) -> Doc`)."""


class Reference(NamedTuple):
    """One use of a name in a file."""

    name: str
    """The referenced name; imports keep the module path as written (`a.b`, `./util`)."""
    kind: RefKind
    """Call, import, base class, decorator or type annotation."""
    path: str
    """Repository-relative POSIX path of the referencing file."""
    line: int
    """Line (1-based) of the reference."""


@dataclass(frozen=True)
class FileTags:
    """Everything extracted from one file, in the compact form stored in the cache.

    `defs` holds `(name, qualname, kind, start_line, end_line, signature)` tuples in line order; references are
    three parallel columns grouped by kind, in document order within a kind; `agg_*` sum references per
    (name, kind) for ranking.
    """

    defs: tuple[tuple[str, str, str, int, int, str], ...] = ()
    """Definitions, in line order."""
    ref_names: str = ""
    """Referenced names joined by NUL."""
    ref_kinds: bytes = b""
    """One code per reference: its index in `REF_KINDS`, or 5 for a call through an attribute (`x.save()`)."""
    ref_lines: bytes = b""
    """`array('I')` of 0-based rows, one per reference."""
    agg_names: str = ""
    """Distinct (name, kind) pairs: names joined by NUL."""
    agg_kinds: bytes = b""
    """Kind code per distinct pair."""
    agg_counts: bytes = b""
    """`array('I')` count per distinct pair."""
    parse_error: bool = False
    """The tree had syntax errors (what parsed was still extracted)."""

    def definitions(self, path: str) -> list[Definition]:
        """The definitions as `Definition` objects of file `path`."""
        kinds = DEF_KINDS
        return [Definition(d[0], d[1], kinds[d[2]], path, d[3], d[4], d[5]) for d in self.defs]

    def references(self, path: str) -> list[Reference]:
        """The references as `Reference` objects of file `path`."""
        if not self.ref_names:
            return []
        lines = array("I")
        lines.frombytes(self.ref_lines)
        kinds = _CODE_KINDS
        refs = [
            Reference(name, kinds[code], path, row + 1)
            for name, code, row in zip(self.ref_names.split("\0"), self.ref_kinds, lines)
        ]
        refs.sort(key=lambda r: (r.line, REF_KINDS.index(r.kind), r.name))
        return refs

    def aggregated(self) -> tuple[list[str], bytes, array]:
        """Distinct referenced (name, kind) pairs and their counts."""
        counts = array("I")
        counts.frombytes(self.agg_counts)
        return (self.agg_names.split("\0") if self.agg_names else []), self.agg_kinds, counts


def _text(src: bytes, node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


_ATTRIBUTE_LISTS = frozenset({"attribute_list"})
"""C#'s and PHP's attributes before a declaration (`[HttpGet("{id}")]`, `#[Route('/x')]`): part of the definition's
lines, left out of its signature, which they would fill before its name."""


def _signature(src: bytes, node, max_chars: int) -> str:
    body = node.child_by_field_name("body")
    if body is None:
        value = node.child_by_field_name("value")
        if value is not None:
            body = value.child_by_field_name("body")
    begin = node.start_byte
    for child in node.children:
        if child.type not in _ATTRIBUTE_LISTS:
            begin = child.start_byte
            break
    end = body.start_byte if body is not None and body.start_byte > begin else node.end_byte
    raw = src[begin : min(end, begin + 4 * max_chars)]
    if body is None:
        raw = raw.split(b"\n", 1)[0]
    text = raw.decode("utf-8", "replace")
    if "#" in text or "//" in text:
        text = _TRAILING_COMMENT.sub(r"\1", text)
    text = " ".join(text.split())
    text = text.replace("( ", "(").replace(" )", ")").replace(", )", ")").replace(",)", ")")
    text = text.rstrip(" {:;").rstrip()
    if len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    return text


_QUALIFIED = frozenset({"qualified_identifier", "scope_resolution"})
"""Name nodes made of a scope and a name (C++ `ns::A::f`, Ruby `A::B`)."""
_TEMPLATED = frozenset({"template_type", "template_function"})
"""Name nodes with template arguments (`A<int>`, `f<T>`): the name is their `name` field."""


def _name_parts(src: bytes, node) -> list[str]:
    """The scopes and the name a `@name` node spells: `ns::A<int>::f` → [ns, A, f], `A::operator bool() const` →
    [A, operator bool]; a plain name → [name]."""
    if node.type in _QUALIFIED:
        scope, name = node.child_by_field_name("scope"), node.child_by_field_name("name")
        return (_name_parts(src, scope) if scope else []) + (_name_parts(src, name) if name else [])
    if node.type in _TEMPLATED and node.child_by_field_name("name") is not None:
        return _name_parts(src, node.child_by_field_name("name"))
    if node.type == "operator_cast":
        return [_cast_name(src, node)]
    return [_text(src, node)]


def _cast_name(src: bytes, node) -> str:
    """A C++ conversion operator's name, its text before the parameter list: `operator const T&() const` →
    `operator const T&`."""
    end = node.end_byte
    declarator = node.child_by_field_name("declarator")
    while declarator is not None:
        if declarator.type == "abstract_function_declarator":
            end = declarator.start_byte
            break
        # `*()` holds the parameters in its `declarator` field, `&()` as its last child
        inner = declarator.named_children
        declarator = declarator.child_by_field_name("declarator") or (inner[-1] if inner else None)
    return " ".join(src[node.start_byte : end].decode("utf-8", "replace").split())


_KIND_RANK = {"class": 1, "type": 1, "scope": 0}
"""When one node is captured as several kinds (Go `type_spec` as struct and as type, Kotlin's `enum class` as enum
and as class), the higher rank wins."""


def _owner(node, def_ids: dict[int, list]) -> list | None:
    """The captured definition a `@name`/`@receiver` node belongs to: its nearest captured ancestor."""
    parent = node.parent
    for _ in range(6):
        if parent is None:
            return None
        entry = def_ids.get(parent.id)
        if entry is not None:
            return entry
        parent = parent.parent
    return None


def _extract_defs(src: bytes, caps: dict, max_sig: int) -> tuple[tuple[str, str, str, int, int, str], ...]:
    def_ids: dict[int, list] = {}  # node id -> [kind, node, name parts, receiver]
    for cap, nodes in caps.items():
        if cap.startswith("def."):
            kind = cap[4:]
        elif cap == "scope":
            kind = "scope"
        else:
            continue
        for node in nodes:
            entry = def_ids.get(node.id)
            if entry is None:
                def_ids[node.id] = [kind, node, None, ""]
            elif _KIND_RANK.get(entry[0], 2) < _KIND_RANK.get(kind, 2):
                entry[0] = kind
    if not def_ids:
        return ()
    for node in caps.get("name", ()):
        entry = _owner(node, def_ids)
        if entry is not None and entry[2] is None:
            entry[2] = _name_parts(src, node)
    for node in caps.get("receiver", ()):
        entry = _owner(node, def_ids)
        if entry is not None and not entry[3]:
            entry[3] = _text(src, node)
    items = sorted((e for e in def_ids.values() if e[2] and e[2][-1]),
                   key=lambda e: (e[1].start_byte, -e[1].end_byte, e[0] == "scope"))
    stack: list[tuple[int, str, str]] = []  # (end_byte, qualname, kind)
    out: list[tuple[str, str, str, int, int, str]] = []
    for kind, node, parts, receiver in items:
        start, end = node.start_byte, node.end_byte
        while stack and stack[-1][0] <= start:
            stack.pop()
        prefix, name = ".".join(p for p in parts[:-1] if p), parts[-1]
        parent = stack[-1] if stack else None
        if receiver:
            qual_prefix = receiver
        elif prefix:
            qual_prefix = f"{parent[1]}.{prefix}" if parent else prefix
        else:
            qual_prefix = parent[1] if parent else ""
        qualname = f"{qual_prefix}.{name}" if qual_prefix else name
        if kind == "function" and (receiver or prefix or (parent is not None and parent[2] in _CLASS_LIKE)):
            kind = "method"
        stack.append((end, qualname, kind))
        if kind == "scope":
            continue
        start_line = node.start_point[0] + 1
        end_row, end_col = node.end_point
        end_line = max(start_line, end_row + 1 if end_col > 0 else end_row)
        signature = _signature(src, node, max_sig)
        if node.type == "type_spec":
            signature = "type " + signature
        out.append((name, qualname, kind, start_line, end_line, signature))
    return tuple(out)


def _extract_refs(src: bytes, caps: dict) -> tuple[list[str], bytes, array]:
    """Referenced names, kind codes and 0-based rows, grouped by kind (each group in document order)."""
    text = src.decode("ascii") if src.isascii() else None
    names: list[str] = []
    kinds = bytearray()
    rows = array("I")
    for cap in sorted(caps):
        if not cap.startswith("ref."):
            continue
        code = _REF_CODE[cap[4:]]
        nodes = caps[cap]
        spans = map(slice, [n.start_byte for n in nodes], [n.end_byte for n in nodes])
        if text is not None:
            got = list(map(text.__getitem__, spans))
        else:
            got = [src[span].decode("utf-8", "replace") for span in spans]
        found = [n.start_point[0] for n in nodes]
        if code == 1:
            got = [g.strip("\"'<>` ") for g in got]
        if not all(got) or "\0" in "".join(got):
            keep = [i for i, g in enumerate(got) if g and "\0" not in g]
            got = [got[i] for i in keep]
            found = [found[i] for i in keep]
        names.extend(got)
        kinds.extend(bytes((code,)) * len(got))
        rows.extend(found)
    return names, bytes(kinds), rows


def _position(node) -> tuple[int, int, str]:
    return node.start_byte, node.end_byte, node.type


def extract_tags(source: bytes, language: str, *, max_signature_chars: int = 200) -> FileTags:
    """Definitions and references of a file's bytes in `language` (a `languages.LANGUAGES` name)."""
    from tree_sitter import QueryCursor  # lazy: as in `languages.grammar`, tree-sitter loads with the first parse

    g = grammar(language)
    tree = g.parser.parse(source)
    if language == "rust":
        source, tree = unwrap_item_macros(source, tree, g.parser)
    # py-tree-sitter returns each capture's nodes in an order that varies from call to call: document order makes
    # the tags (which name a definition takes, the order of references) the same in every process
    caps = {name: sorted(nodes, key=_position) for name, nodes in QueryCursor(g.query).captures(tree.root_node).items()}
    defs = _extract_defs(source, caps, max_signature_chars)
    names, kinds, rows = _extract_refs(source, caps)
    agg = Counter(zip(names, kinds))
    agg_keys = sorted(agg)
    return FileTags(
        defs=defs,
        ref_names="\0".join(names),
        ref_kinds=kinds,
        ref_lines=rows.tobytes(),
        agg_names="\0".join(k[0] for k in agg_keys),
        agg_kinds=bytes(k[1] for k in agg_keys),
        agg_counts=array("I", [agg[k] for k in agg_keys]).tobytes(),
        parse_error=tree.root_node.has_error,
    )

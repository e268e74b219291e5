"""The reasoning layer: which line of the suspect definitions the report points at, and why, in words.

Two rule families, both deterministic and explainable:

* **error semantics** (`kinds.KINDS`): the error in the report selects error kinds; their tree-sitter shapes,
  run over the suspect definitions, select the line (a `datetime(...)` without `tzinfo`, a division by a count,
  an `.unwrap()`, ...);
* **behaviour** (no error, or no shape found): the line where a name the report uses as code (an option, a
  parameter, a value) is compared, returned or passed on inside the suspect definitions, a branch first.

A `Finding` names the line, the mechanism and the proposed edit; when no rule fires `reason` returns nothing
and the writer keeps its plain, lower-confidence text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from tree_sitter import Node, Query, QueryCursor

from funnel.inline import code_span
from funnel.localize.reasoning.checks import CHECKS
from funnel.localize.reasoning.kinds import KINDS, ErrorKind, Shape
from funnel.localize.reasoning.uses import USE_WEIGHT, Use, line_uses, name_use, overlapping
from funnel.localize.terms import tokenize
from repomap.languages import grammar, language_for

__all__ = ("Finding", "Span", "named_items", "reason", "selected_kinds")

Span = tuple[int, int, str]
"""A suspect definition: (first line, last line, qualified name), in citation order."""

_COMMENT = ("#", "//", "/*", "*", '"""', "'''")
_DOCSTRING = frozenset({"string", "concatenated_string", "string_literal", "template_string"})
"""Literal node types that, standing alone as a statement, are documentation (a Python docstring)."""
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_NAMES = frozenset(
    "self cls this return None True False null nil true false undefined isinstance super len str int float bool "
    "list dict set tuple print type object value values data result args kwargs error err def class function "
    "func var let const new import from raise throw std string String Vec Option Result Box Some Ok Err "
    "void mut crate Self size_t".split())
"""Words a report writes as code that name nothing of the project (keywords, builtins, placeholder names, the
standard library's root `std` and Rust's prelude types). The grammar's own words are found in the tree
(`_not_values`); these are listed for where it cannot tell, inside a Rust macro's token tree or C code it could not
parse."""
_STRINGS = frozenset({"string", "template_string", "string_literal", "raw_string_literal",
                      "interpreted_string_literal", "text_block"})
"""String literal node types across the grammars (Rust's also inside a macro's token tree)."""
_KEY = re.compile(r"-{0,2}[\w.:/-]*=?")
"""A string that is one name (`"paging"`, `"--paging"`, `"color="`): a key the line reads, not a message."""
_BUILTIN_TYPES = frozenset({"primitive_type", "predefined_type", "void_type", "boolean_type", "integral_type",
                            "floating_point_type"})
"""Leaf node types of the grammars' built-in types (C, C++, Rust `primitive_type`; Java `void_type`...)."""


@dataclass(frozen=True)
class Finding:
    """A line the reasoning selected, with the mechanism and the proposed edit."""

    path: str
    """File."""
    line: int
    """The selected line (1-based)."""
    symbol: str
    """Qualified name of the suspect definition it is in."""
    rule: str
    """`ErrorKind.name`, or `behaviour`."""
    error: str
    """The error as a reader knows it (empty for behaviour reports)."""
    mechanism: str
    """What goes wrong at the line, in plain words (names the line)."""
    change: str
    """The edit proposed at the line, in words."""
    suggestion: str
    """A code suggestion, or empty."""
    score: float
    """How strongly the rule points here (comparable within one report)."""


def selected_kinds(report: str) -> list[tuple[ErrorKind, str]]:
    """Error kinds the report's text selects, with the name its message mentions (or "")."""
    out = []
    for kind in KINDS:
        matches = list(re.finditer(kind.trigger, report, re.I))
        if matches:
            # `AttributeError: 'NoneType' object has no attribute 'x'`: the generic alternative matches first
            names = [m.groupdict().get("name") for m in matches]
            out.append((kind, next((n for n in names if n), "")))
    return out


@cache
def _query(language: str, source: str) -> Query:
    return Query(grammar(language).language, source)


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def _span_of(line: int, spans: list[Span]) -> int | None:
    """Index of the innermost (shortest) span holding the line."""
    inside = [(e - s, k) for k, (s, e, _) in enumerate(spans) if s <= line <= e]
    return min(inside)[1] if inside else None


def _fill(template: str, words: dict[str, str]) -> str:
    class _Safe(dict):
        def __missing__(self, key: str) -> str:
            return "the value"
    return template.format_map(_Safe(words))


def _short(code: str, limit: int = 60) -> str:
    return code if len(code) <= limit else code[: limit - 1] + "…"


def _error_findings(path: str, language: str, tree_root: Node, lines: list[str], spans: list[Span],
                    kinds: list[tuple[ErrorKind, str]], terms: dict[str, float]) -> list[Finding]:
    out: list[Finding] = []
    imports = "\n".join(ln for ln in lines if "import" in ln)
    for kind, named in kinds:
        for shape in kind.shapes:
            if language not in shape.languages:
                continue
            for _, caps in QueryCursor(_query(language, shape.query)).matches(tree_root):
                hit = caps.get("hit")
                if not hit:
                    continue
                line = hit[0].start_point[0] + 1
                k = _span_of(line, spans)
                if k is None:
                    continue
                words = {name: _text(nodes[0]) for name, nodes in caps.items()}
                words["_imports"] = imports
                enclosing = spans[k][2].rpartition(".")[2]
                extra = CHECKS[shape.check](words, named, enclosing) if shape.check else {}
                if extra is None:
                    continue
                words.update(extra)
                out.append(_finding(path, line, lines, spans[k][2], kind, shape, words, terms, k))
    return out


def _target(lines: list[str], line: int) -> str:
    m = re.match(r"\s*([A-Za-z_][\w.]*)\s*(?::[^=]*)?=[^=]", lines[line - 1]) if 0 < line <= len(lines) else None
    return m.group(1) if m else ""


def _finding(path: str, line: int, lines: list[str], symbol: str, kind: ErrorKind, shape: Shape,
             words: dict[str, str], terms: dict[str, float], rank: int) -> Finding:
    code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    words.setdefault("target", _target(lines, line) or "the result")
    words["code"] = words["code_short"] = code_span(_short(code))
    words["line"] = f"{path.rpartition('/')[2]}:{line}"
    words = {k: (_short(" ".join(v.split()), 50) if k not in {"line", "code", "code_short", "_imports", "argtext"}
                 else v) for k, v in words.items()}
    overlap = math.fsum(terms.get(t, 0.0) for t in set(tokenize(code)))
    score = shape.weight + (1.0 if words.get("named") == "1" else 0.0) + 0.3 * (1.0 - min(rank, 3) / 3)
    score += min(overlap, 20.0) / 20.0
    return Finding(path=path, line=line, symbol=symbol, rule=kind.name, error=kind.error,
                   mechanism=_fill(shape.mechanism, words),
                   change=_fill(shape.change, words | {"line": f"line {line}"}),  # a path here would read as the target
                   suggestion=_fill(shape.suggestion, words) if shape.suggestion else "", score=score)


def _prose_columns(root: Node, lines: list[str], first: int, last: int) -> dict[int, int]:
    """Line of [first, last] → the byte column from which it holds only prose (0: the whole line), by the tree:
    comments and docstrings. A docstring's `>>>` example or a trailing comment names the report's words, yet the
    fix changes code."""
    out: dict[int, int] = {}
    for node in overlapping(root, first, last):
        docstring = (node.type == "expression_statement" and node.named_child_count == 1
                     and node.named_children[0].type in _DOCSTRING)
        if "comment" not in node.type and not docstring:
            continue
        s, e = node.start_point[0] + 1, node.end_point[0] + 1
        out.update(dict.fromkeys(range(s + 1, e + 1), 0))
        head = lines[s - 1].encode("utf-8", "surrogatepass") if 0 < s <= len(lines) else b""
        column = 0 if not head[: node.start_point[1]].strip() else node.start_point[1]
        out[s] = min(out.get(s, column), column)
    return out


def _not_values(root: Node, first: int, last: int) -> dict[int, set[str]]:
    """Line of [first, last] → the words the grammar reads there as its own (`await`, `auto`, `template`: leaves
    whose node type is their text) or as a built-in type (`double`, `size_t`, `void`). A report writing `.await` or
    `double` names no value the line could mishandle."""
    out: dict[int, set[str]] = {}
    for node in overlapping(root, first, last):
        if node.child_count or node.type.endswith("identifier"):
            continue
        text = node.type if not node.is_named else (node.text or b"").decode("utf-8", "replace")
        if (text == node.type or node.type in _BUILTIN_TYPES) and _IDENT.fullmatch(text):
            out.setdefault(node.start_point[0] + 1, set()).add(text)
    return out


def _message_columns(root: Node, first: int, last: int) -> dict[int, list[tuple[int, int, bool]]]:
    """Line of [first, last] → byte columns `(start, end, keep)` of the message strings on it: a string that is
    more than one name (`"bat has been built without..."`, a format string) is prose, its words no value the line
    reads; the code interpolated into it (`{name}`, `${x}`) is kept. `end` -1 is the line's end."""
    out: dict[int, list[tuple[int, int, bool]]] = {}

    def mark(node: Node, keep: bool) -> None:
        (s, c0), (e, c1) = node.start_point, node.end_point
        for row in range(s, e + 1):
            out.setdefault(row + 1, []).append((c0 if row == s else 0, c1 if row == e else -1, keep))

    for node in overlapping(root, first, last):
        if node.type not in _STRINGS:
            continue
        inner = re.sub(r"""^[A-Za-z]*[#'"`]+|[#'"`]+$""", "", _text(node))
        if _KEY.fullmatch(inner) and "://" not in inner:  # an address is prose, not a key
            continue
        mark(node, False)
        for sub in overlapping(node, first, last):
            if "interpolation" in sub.type or "substitution" in sub.type:
                mark(sub, True)
    return out


def _outside_messages(line: bytes, columns: list[tuple[int, int, bool]]) -> str:
    """The line with its message strings blanked (`_message_columns`)."""
    out = bytearray(line)
    for start, end, keep in sorted(columns, key=lambda c: c[2]):  # blank first, then restore interpolations
        end = len(line) if end < 0 else end
        out[start:end] = line[start:end] if keep else b" " * len(line[start:end])
    return out.decode("utf-8", "replace")


def _behaviour_findings(path: str, root: Node, lines: list[str], spans: list[Span], named: dict[str, float],
                        terms: dict[str, float]) -> list[Finding]:
    """Lines of the suspect definitions where a name the report writes as code is compared, returned or passed."""
    out: list[Finding] = []
    if not named:
        return out
    first, last = min(s for s, _, _ in spans), max(e for _, e, _ in spans)
    uses = line_uses(root, first, last)
    prose = _prose_columns(root, lines, first, last)
    not_values = _not_values(root, first, last)
    messages = _message_columns(root, first, last)
    for ln in range(first, min(last, len(lines)) + 1):
        k = _span_of(ln, spans)
        raw = lines[ln - 1].encode("utf-8", "surrogatepass")[: prose.get(ln)]  # byte columns, as the tree has them
        code = raw.decode("utf-8", "replace").strip()
        if k is None or not code or code.startswith(_COMMENT) or ln == spans[k][0]:
            continue
        found = [n for n in dict.fromkeys(_IDENT.findall(code)) if n in named]
        # a keyword the report wrote (`is not None`) says the line reads like the report's code, yet it is no name
        values = [n for n in found if n not in not_values.get(ln, ())]
        if not values:
            continue
        # a word of a message string names what the line reports, not a value it reads
        outside = set(_IDENT.findall(_outside_messages(raw, messages[ln]))) if ln in messages else None
        read = [n for n in values if outside is None or n in outside]
        item = max(read or values, key=lambda n: named[n])
        weight = sum(named[n] for n in found) * USE_WEIGHT[uses.get(ln, "")]
        overlap = math.fsum(terms.get(t, 0.0) for t in set(tokenize(code)))
        score = weight + min(overlap, 20.0) / 40.0 + 0.2 * (1.0 - min(k, 3) / 3)
        mechanism, change = _behaviour_words(item, name_use(root, ln, item) if read else "message",
                                             f"{path.rpartition('/')[2]}:{ln}", _short(code), ln)
        out.append(Finding(
            path=path, line=ln, symbol=spans[k][2], rule="behaviour", error="", mechanism=mechanism, change=change,
            suggestion="", score=score))
    return out


def _behaviour_words(item: str, use: Use | Literal["message"], where: str, code: str, line: int) -> tuple[str, str]:
    """The mechanism and the proposed edit of a behaviour finding: what the line does with the report's name
    (`uses.name_use`), or "message" when the name stands only in a message string of the line."""
    code = code_span(code)
    if use == "message":
        return (f"`{item}`, which the report names, appears in the message at {where} ({code}): the check that "
                f"leads to this line may decide the reported case",
                f"check the condition that leads to line {line} and the message it gives against the reported case")
    if use == "raised":
        return (f"`{item}`, which the report names, is raised at {where} ({code}): the condition that leads to this "
                f"line decides when it is raised, and the value it rejects may come from a caller",
                f"check the condition under which line {line} raises `{item}` against the reported case, and where "
                f"the value it rejects comes from")
    verb = {"compared": "decides the reported case", "returned": "produces the returned value",
            "passed": "passes it on", "defaulted": "sets its default"}.get(use, "uses it")
    return (f"`{item}`, which the report names, is {use or 'read'} at {where} ({code}): this line {verb}, so the "
            f"reported behaviour is decided here",
            f"check how line {line} handles `{item}` in the reported case and correct the "
            f"{'condition' if use == 'compared' else 'value'} there")


def named_items(code_identifiers: list[str], options: list[str], exclude: set[str]) -> dict[str, float]:
    """Names the report writes as code (identifiers, options), weighted: longer names and snake_case count more;
    `exclude` (the suspect definitions' own names) says nothing about a line inside them."""
    out: dict[str, float] = {}
    for raw in [*code_identifiers, *options]:
        for name in re.split(r"[.:]+|--?", raw):
            name = name.strip("-=() ")
            if len(name) < 3 or not _IDENT.fullmatch(name) or name in exclude or name in _NOT_NAMES:
                continue
            out[name] = max(out.get(name, 0.0), 1.0 + min(len(name), 16) / 16 + (0.5 if "_" in name else 0.0))
    return out


def reason(report: str, path: str, source: str, spans: list[Span], *, named: dict[str, float],
           terms: dict[str, float]) -> list[Finding]:
    """Findings in the suspect definitions of one file, best first: error shapes, else behaviour lines."""
    data = source.encode("utf-8", "surrogatepass")
    spec = language_for(path, data)
    if spec is None or not spans or not source:
        return []
    root = grammar(spec.name).parser.parse(data).root_node
    lines = source.split("\n")
    kinds = selected_kinds(report)
    found = _error_findings(path, spec.name, root, lines, spans, kinds, terms) if kinds else []
    if not found:
        found = _behaviour_findings(path, root, lines, spans, named, terms)
    best: dict[int, Finding] = {}
    for f in found:
        if f.line not in best or f.score > best[f.line].score:
            best[f.line] = f
    return sorted(best.values(), key=lambda f: (-f.score, f.line))

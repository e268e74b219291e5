"""Post-filters of the error-semantics shapes: does a query match really have the shape, and which words explain it.

Each check takes the match (capture name → node text), the report's named item (the attribute, key or
keyword its message names, or "") and the enclosing definition's plain name; it returns extra words for the
templates (`named: "1"` when the report's named item is the one matched) or None to drop the match.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ("CHECKS", "Check")

Check = Callable[[dict[str, str], str, str], dict[str, str] | None]
"""(captured texts, report's named item, enclosing definition name) -> extra words or None."""

_COUNTISH = re.compile(r"\blen\(|count|total|size|num|length|\bn\b|_n\b|\bn_|sum\(|width|height|step|days|months")
_TZ_KW = re.compile(r"\btzinfo\s*=|\btz\s*=")
_NOW = {"now", "utcnow", "today", "fromtimestamp", "utcfromtimestamp"}
_IDENT_RE = re.compile(r"[A-Za-z_$][\w$]*")
_TYPE_NAME = re.compile(r"[A-Z][a-z]\w*")
"""A CamelCase name (`Objects`, `Math`, `Path`): by every language's convention a class or namespace, not a value."""
_MODIFIERS = {"remove", "add", "put", "clear", "addAll", "removeAll", "removeIf", "set", "insert"}


def _args(text: str) -> str:
    return text.strip()[1:-1].strip() if text.strip().startswith("(") else text.strip()


def datetime_without_tzinfo(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """`datetime(y, m, d, ...)` built from fields without `tzinfo=`."""
    args = " ".join(_args(c.get("args", "")).split()).rstrip(", ")
    if c.get("callee") != "datetime" or _TZ_KW.search(args) or args.count(",") < 2:
        return None
    fields = re.findall(r"\b([A-Za-z_]\w*)\.(?:year|month|day|hour|minute|second)\b", args)
    source = fields[0] if fields else ""
    out = {"argtext": args, "source": f"from `{source}`'s fields" if source else "from separate fields",
           "tzsource": f"{source}.tzinfo" if source else "timezone.utc"}
    if re.search(r"\.(?:hour|minute|second)\b", args):  # a datetime copied field by field, time included
        out["named"] = "1"
    return out


def naive_now(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """`datetime.now()` / `utcnow()` / `today()` without a timezone."""
    if c.get("callee") not in _NOW or _TZ_KW.search(c.get("args", "")) or _args(c.get("args", "")):
        return None
    return {}


def divisor_can_be_zero(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """A division whose divisor is a length, a count or a variable (not a non-zero literal)."""
    den = c.get("object", "")
    if re.fullmatch(r"\(?\s*[0-9.]+\s*\)?", den) and den.strip("() .0"):
        return None
    return {"named": "1"} if _COUNTISH.search(den) else {}


def key_named(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """A subscript by key; the key the report names, when it names one, counts more."""
    key = c.get("name", "").strip("'\"")
    if named:
        return {"named": "1"} if key == named else {}
    return {}


_NEVER_NONE = frozenset({"self", "cls", "this", "$this", "super", "super()"})
"""Receivers that are never `None`, null or undefined where they are read."""


def _imported(name: str, imports: str) -> bool:
    """Whether the file's import lines bind `name` (`import os`, `from a import b as name`, `const x = require(`,
    `import name from`): a module or class, never `None`."""
    n = re.escape(name)
    return re.search(rf"\bimport\s+(?:[\w.]+\s*,\s*)*{n}\b(?!\.)|\bas\s+{n}\b|\bimport\s*\([^)]*\b{n}\b|"
                     rf"\bimport\s+[\w.]+(?:\s+as\s+\w+)?\s*,\s*{n}\b|\b{n}\s*=\s*require\(|"
                     rf"\bimport\s+{n}\s+from\b|\bimport\s*\{{[^}}]*\b{n}\b", imports) is not None


_LITERAL = re.compile(r"""(?:[rRbBuUfF]{0,2}['"`]|\d|\[|\{)|(?:True|False|true|false)$""")
"""A literal (a string, a number, a list, a dict, a boolean): a value, never unset where it stands."""


def _never_none(obj: str, imports: str) -> bool:
    """Whether the value written `obj` cannot be `None`, null or undefined: a receiver like `self`, a literal, a
    CamelCase type or an imported module."""
    return obj in _NEVER_NONE or _LITERAL.match(obj) is not None or _TYPE_NAME.fullmatch(obj) is not None or (
        _IDENT_RE.fullmatch(obj) is not None and _imported(obj, imports))


def attribute_named(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """An attribute / member access on a value that can be unset (not `self`, `super()`, `this`, a literal, an
    imported module or a CamelCase type); with a name in the report only that name counts."""
    if _never_none(c.get("object", "").strip(), c.get("_imports", "")):
        return None
    if named:
        return {"named": "1"} if c.get("name") == named.rpartition(".")[2] else None
    return {}


def value_can_be_none(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """A value used as a container or an operand that can be unset (`_never_none` leaves out the rest)."""
    return None if _never_none(c.get("object", "").strip(), c.get("_imports", "")) else {}


def operator_named(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """A binary operation with the operator the report's message names (`for /: 'str' and 'int'`)."""
    return {"named": "1"} if named and c.get("op") == named else None


def calls_enclosing(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """A call to the definition the call is in (recursion)."""
    return {"named": "1"} if enclosing and c.get("callee") == enclosing else None


def codec_without_errors(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """`.decode()`/`.encode()` without `errors=`, or `open()` in text mode without `encoding=`."""
    callee, args = c.get("callee"), c.get("args", "")
    if callee in {"decode", "encode"} and "errors" not in args:
        return {"missing": "no `errors=` handler"}
    if callee in {"open", "read_text", "write_text"} and "encoding" not in args and not re.search(r"['\"]\w*b\w*['\"]", args):
        return {"missing": "the locale's default encoding"}
    return None


def name_matches(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """A keyword argument whose name is the one the report names."""
    return {"named": "1"} if named and c.get("name") == named else None


def modifies_iterated(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """A modifying call on the very collection a for-each loop iterates."""
    return {} if c.get("target") == c.get("object") and c.get("name") in _MODIFIERS else None


def not_package(c: dict[str, str], named: str, enclosing: str) -> dict[str, str] | None:
    """A selector on a value, not on an imported package (Go `fmt.Println` is no dereference)."""
    obj = c.get("object", "")
    imports = c.get("_imports", "")
    if obj and re.search(rf'(?:^|[\s(]){re.escape(obj)}\s+"|["/]{re.escape(obj)}"', imports):
        return None
    return {"named": "1"} if named and c.get("name") == named else {}


CHECKS: dict[str, Check] = {f.__name__: f for f in (
    datetime_without_tzinfo, naive_now, divisor_can_be_zero, key_named, attribute_named, value_can_be_none,
    operator_named, calls_enclosing, codec_without_errors, name_matches, modifies_iterated, not_package)}
"""Check name (as `Shape.check` spells it) → function."""

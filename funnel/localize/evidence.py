"""Evidence from the report and from tool results: what to search for, and what the tools showed.

The report side (stack frames, identifiers, messages, code blocks, imports, options) is parsed by
`repomap.focus.Focus`; this module chooses the literal searches and symbol lookups worth a tool call,
and reads tool output back (search hits, numbered lines).
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

from repomap.focus import Focus

__all__ = ("Read", "literal_keys", "parse_read", "parse_search_hits", "search_terms", "symbol_queries")

_HIT = re.compile(r"^(?P<path>[^\s:][^:\n]*):(?P<line>\d+): ", re.M)
_NUMBERED = re.compile(r"^[^\S\n]*(?P<n>\d+)\| ?(?P<text>.*)$", re.M)
_READ_HEAD = re.compile(r"^(?P<path>\S+) lines (?P<start>\d+)-(?P<end>\d+) of (?P<total>\d+)", re.M)
_PLACEHOLDER = re.compile(
    r"""['"`]?\{[^}]*\}['"`]?|%[-+ #0-9.]*[sdrifgxXc]|<[^>]+>|['"][^'"]{0,60}['"]|\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\b"""
)


def literal_keys(message: str, *, min_len: int = 12) -> list[str]:
    """Searchable fragments of a message: the constant parts between interpolated values, longest first."""
    parts = {p.strip(" :.,;()[]") for p in _PLACEHOLDER.split(message)}
    return sorted((p for p in parts if len(p) >= min_len), key=len, reverse=True)[:3]


def search_terms(focus: Focus, *, limit: int = 2) -> list[str]:
    """Literal strings worth a fixed-string search: message fragments first (most specific first)."""
    out: list[str] = []
    for message in focus.messages:
        for key in literal_keys(message)[:1]:
            if key not in out:
                out.append(key)
        if len(out) >= limit:
            break
    return out


def looks_like_code(ident: str, focus: Focus, text: str = "") -> bool:
    """A name written the way code is: in backticks or a code block, in a stack frame, qualified (`a.b`, `a::b`),
    with an underscore or a capital after its first letter, or called (`name(` in `text`). A plain word of the
    prose (`class`, `with`, `Session` at the start of a sentence) is not."""
    if ident in focus.code_identifiers or "." in ident or "::" in ident or "_" in ident:
        return True
    if any(c.isupper() for c in ident[1:]):
        return True
    if any(f.name == ident for f in focus.frames if f.name):
        return True
    return re.search(rf"(?<![\w.]){re.escape(ident)}\(", text) is not None


def symbol_queries(focus: Focus, known: Container[str], *, limit: int = 2, text: str = "") -> list[str]:
    """Names from the report that the symbol index defines and that look like code (`looks_like_code`), qualified
    names first, code-written ones before the rest."""
    code = set(focus.code_identifiers)
    ranked: list[tuple[int, int, str]] = []
    for pos, ident in enumerate(focus.identifiers):
        plain = re.split(r"\.|::", ident)[-1]
        if len(plain) < 4 or not looks_like_code(ident, focus, text) or plain not in known:
            continue
        qualified = ident != plain
        ranked.append((0 if qualified and ident in code else 1 if ident in code else 2, pos, ident))
    ranked.sort()
    out: list[str] = []
    for _, _, ident in ranked:
        plain = re.split(r"\.|::", ident)[-1]
        if all(re.split(r"\.|::", o)[-1] != plain for o in out):
            out.append(ident.replace("::", "."))
        if len(out) >= limit:
            break
    return out


def parse_search_hits(rendered: str) -> list[tuple[str, int]]:
    """`(path, line)` of every match in a rendered search result."""
    return [(m["path"], int(m["line"])) for m in _HIT.finditer(rendered)]


@dataclass
class Read:
    """Lines shown by one `read_range` result."""

    path: str
    """File read."""
    start: int
    """First line shown."""
    end: int
    """Last line shown."""
    lines: dict[int, str]
    """Line number → text, exactly as shown."""


def parse_read(rendered: str) -> Read | None:
    """The numbered lines of a rendered `read_range` result, or None when it is not one."""
    head = _READ_HEAD.search(rendered)
    if head is None:
        return None
    lines = {int(m["n"]): m["text"] for m in _NUMBERED.finditer(rendered[head.end():])}
    return Read(head["path"], int(head["start"]), int(head["end"]), lines)

"""The four read-only tools an explorer gets, and nothing else: search, read_range, list_dir, find_symbol.

Read-only by construction: no tool writes, runs repository code or reaches the network. Every path goes
through the `Sandbox`; every result is a dataclass whose `.render()` is exactly what the agent sees,
byte-capped with an explicit marker. A mistake the model can fix raises `ToolError` with instructive text.
"""

from __future__ import annotations

from funnel.tools._listing import EntryKind, ListEntry, ListResult, list_dir
from funnel.tools._read import NumberedLine, ReadResult, read_range
from funnel.tools._search import SearchLine, SearchMatch, SearchResult, find_rg, search
from funnel.tools._symbols import SymbolHit, SymbolResult, find_symbol
from funnel.errors import ToolError, UnrecoverableError, UserError
from funnel.tools.sandbox import SECRET_GLOBS, Sandbox, ToolLimits

__all__ = (
    "SECRET_GLOBS",
    "EntryKind",
    "ListEntry",
    "ListResult",
    "NumberedLine",
    "ReadResult",
    "Sandbox",
    "SearchLine",
    "SearchMatch",
    "SearchResult",
    "SymbolHit",
    "SymbolResult",
    "ToolError",
    "ToolLimits",
    "UnrecoverableError",
    "UserError",
    "find_rg",
    "find_symbol",
    "list_dir",
    "read_range",
    "search",
)

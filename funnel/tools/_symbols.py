"""`find_symbol`: definitions by name from the repo map's symbol index."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from funnel.errors import ToolError
from funnel.tools.sandbox import Sandbox, cap_bytes, printable

if TYPE_CHECKING:
    from repomap import SymbolIndex

__all__ = ("SymbolHit", "SymbolResult", "find_symbol")


@dataclass
class SymbolHit:
    """One definition found."""

    name: str
    """Bare name (`parse`)."""
    qualname: str
    """Qualified name within its file (`Parser.parse`)."""
    kind: str
    """Definition kind from the repo map (`function`, `method`, `class`, ...)."""
    path: str
    """Repository-relative POSIX path."""
    start_line: int
    """First line of the definition."""
    end_line: int
    """Last line of the definition."""
    signature: str
    """The definition's first line(s), trimmed by the repo map."""
    exact: bool
    """True when the name or qualified name matches exactly; False for a fuzzy match."""


@dataclass
class SymbolResult:
    """Definitions of a name, or suggestions when there are none."""

    query: str
    """The name as asked."""
    hits: list[SymbolHit]
    """Definitions found, exact matches first."""
    suggestions: list[str] = field(default_factory=list)
    """"Did you mean" names, when nothing matched."""
    omitted: int = 0
    """Definitions found but not shown because of the result cap."""
    max_output_bytes: int = 24_000
    """Byte cap applied by `render`."""

    def render(self) -> str:
        """The text the agent sees: `qualname (kind) path:start-end` and the signature per definition."""
        if not self.hits:
            text = f"No definition named {self.query!r}."
            if self.suggestions:
                text += " Did you mean: " + ", ".join(self.suggestions) + "?"
            else:
                text += " Try search with a regex instead."
            return text
        out = []
        if not any(h.exact for h in self.hits):
            out.append(f"No definition named {self.query!r}. Did you mean one of these?")
        for h in self.hits:
            out.append(f"{printable(h.qualname)} ({h.kind}) {printable(h.path)}:{h.start_line}-{h.end_line}")
            if h.signature:
                out.append(f"    {h.signature.strip()}")
        if self.omitted:
            out.append(f"[{self.omitted} more definitions not shown; use a qualified name like Class.method]")
        return cap_bytes("\n".join(out), self.max_output_bytes, hint="use a qualified name")


def _is_exact(query: str, d: Any) -> bool:
    """Whether `query` names `d`: its name or qualified name, a suffix of it, or it a suffix of the query; an
    escaped identifier's backticks (Swift's and Kotlin's `` `default` ``) are syntax, not part of the name."""
    query = query.replace("::", ".").replace("#", ".").replace("`", "")
    name, qualname = d.name.replace("`", ""), d.qualname.replace("`", "")
    return query in (name, qualname) or qualname.endswith("." + query) or query.endswith("." + qualname)


def _visible(sb: Sandbox, rel: str) -> bool:
    """False for a definition in a secret file, or behind a symlink that leads to one or out of the root."""
    return not sb.withholds(rel)


def find_symbol(sb: Sandbox, index: SymbolIndex, name: str) -> SymbolResult:
    """Definitions of `name` (plain `parse`, qualified `Parser.parse`, or approximate) with path, lines, signature.

    When nothing matches, the result carries "did you mean" suggestions. Raises `ToolError` for an empty name.
    """
    if not isinstance(name, str) or not name.strip():
        raise ToolError("find_symbol needs a name such as 'parse' or 'Parser.parse'.")
    if "\x00" in name:
        raise ToolError("The symbol name contains a NUL byte.")
    query = name.strip()
    if len(query) > 200:
        raise ToolError("The symbol name is too long (over 200 characters); give an identifier.")
    cap = sb.limits.symbol_max_results
    found = index.lookup(query, fuzzy=True, limit=cap + 1 + 50)
    found = [d for d in found if _visible(sb, d.path)]
    hits = [
        SymbolHit(
            name=d.name,
            qualname=d.qualname,
            kind=str(getattr(d.kind, "value", d.kind)),
            path=d.path,
            start_line=d.start_line,
            end_line=d.end_line,
            signature=d.signature or "",
            exact=_is_exact(query, d),
        )
        for d in found
    ]
    hits.sort(key=lambda h: not h.exact)  # stable: keeps the index's ranking within each group
    omitted = max(0, len(hits) - cap)
    hits = hits[:cap]
    suggestions = [] if hits else list(index.suggest(query, limit=5))
    return SymbolResult(query, hits, suggestions, omitted, sb.limits.max_output_bytes)

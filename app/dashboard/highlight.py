"""Syntax highlighting of cited code excerpts with Pygments: the whole file is lexed, the cited lines are sliced.

Lexing the whole file (not the excerpt) is what keeps an excerpt that starts inside a docstring or a block comment
coloured right; Pygments' per-language lexers know each language's keywords, lifetimes, regex literals and string
forms. Output is escaped HTML (`markupsafe.Markup`) using `<span class="tok-...">` only — no inline style — so it
is safe under the dashboard's strict Content-Security-Policy and never lets source text through as markup.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from markupsafe import Markup, escape
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, String, _TokenType
from pygments.util import ClassNotFound

TokenClass = Literal["comment", "regex", "string", "number", "type", "keyword", "builtin", "def", "decorator"]

# Checked in order: the first Pygments token type the token belongs to names its CSS class (`tok-<class>`).
_CLASSES: tuple[tuple[_TokenType, TokenClass], ...] = (
    (Comment, "comment"),
    (String.Regex, "regex"),
    (String, "string"),
    (Number, "number"),
    (Keyword.Type, "type"),
    (Keyword, "keyword"),
    (Operator.Word, "keyword"),
    (Name.Builtin, "builtin"),
    (Name.Function, "def"),
    (Name.Class, "def"),
    (Name.Decorator, "decorator"),
)

MAX_LEXED_CHARS = 500_000
"""Files larger than this are not lexed whole: only the excerpt is (a cost cap for a page view)."""


def _lexer_for(path: str, code: str) -> Lexer | None:
    try:
        lexer = get_lexer_for_filename(path, code[:4096], stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    return None if isinstance(lexer, TextLexer) else lexer


def language_for(path: str, code: str = "") -> str | None:
    """The name of the language `path` is highlighted as, or None when it is rendered plain."""
    lexer = _lexer_for(path, code)
    return lexer.name if lexer is not None else None


def _class_of(ttype: _TokenType) -> TokenClass | None:
    for parent, cls in _CLASSES:
        if ttype in parent:
            return cls
    return None


@lru_cache(maxsize=8)
def _highlighted(code: str, path: str) -> tuple[str, ...]:
    """Every line of `code` as escaped HTML; one entry per `\\n`-separated line, in order."""
    lines = code.split("\n")
    lexer = _lexer_for(path, code)
    if lexer is None:
        return tuple(str(escape(line)) for line in lines)
    # Pygments turns a lone "\r" into a line break; a blank keeps the line numbering of `code.split("\n")`.
    text = code.replace("\r\n", "\n").replace("\r", " ")
    out: list[str] = []
    parts: list[str] = []
    for ttype, value in lexer.get_tokens(text):
        cls = _class_of(ttype)
        for k, piece in enumerate(value.split("\n")):
            if k:
                out.append("".join(parts))
                parts = []
            if piece:
                parts.append(f'<span class="tok-{cls}">{escape(piece)}</span>' if cls else str(escape(piece)))
    out.append("".join(parts))
    # Pygments never drops text, but keep the contract (one entry per line) even if a lexer misbehaves.
    if len(out) != len(lines):
        return tuple(str(escape(line)) for line in lines)
    return tuple(out)


def highlight_lines(code: str, path: str, *, first: int = 1, last: int | None = None) -> list[Markup]:
    """Lines `first`..`last` (1-based, inclusive; default all) of the file text `code`, highlighted as escaped HTML.

    The language comes from `path` (its name or extension, the content breaking ties such as `.h`); an unknown
    one is rendered plain, still escaped.
    """
    if len(code) > MAX_LEXED_CHARS:
        lines = code.split("\n")
        excerpt = lines[first - 1 : len(lines) if last is None else last]
        if sum(len(line) + 1 for line in excerpt) > MAX_LEXED_CHARS:  # even the excerpt is huge (one long line)
            return [Markup(escape(line)) for line in excerpt]
        return [Markup(line) for line in _highlighted("\n".join(excerpt), path)]
    shown = _highlighted(code, path)[first - 1 : last]
    return [Markup(line) for line in shown]

"""A tiny, dependency-free syntax highlighter for cited code excerpts: keywords, strings, comments, numbers.

Output is escaped HTML (`markupsafe.Markup`) using `<span class="tok-...">` only, so it is safe under a strict
Content-Security-Policy (no inline styles) and never lets excerpt text through as markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from markupsafe import Markup, escape

_PY_KEYWORDS = """and as assert async await break class continue def del elif else except finally for from global if
import in is lambda nonlocal not or pass raise return try while with yield match case None True False self""".split()
_JS_KEYWORDS = """break case catch class const continue debugger default delete do else export extends finally for
function if import in instanceof let new of return super switch this throw try typeof var void while with yield async
await static get set null undefined true false interface type enum implements private protected public readonly
declare namespace abstract as from""".split()
_GO_KEYWORDS = """break case chan const continue default defer else fallthrough for func go goto if import interface map
package range return select struct switch type var nil true false iota""".split()
_JAVA_KEYWORDS = """abstract assert boolean break byte case catch char class const continue default do double else
enum extends final finally float for goto if implements import instanceof int interface long native new package
private protected public return short static strictfp super switch synchronized this throw throws transient try void
volatile while var record null true false""".split()
_RUST_KEYWORDS = """as async await break const continue crate dyn else enum extern false fn for if impl in let loop
match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok
Err""".split()
_C_KEYWORDS = """auto break case char const continue default do double else enum extern float for goto if inline int
long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
bool true false NULL nullptr class namespace template typename public private protected virtual override new delete
this throw try catch using const_cast static_cast dynamic_cast reinterpret_cast constexpr auto noexcept""".split()
_RUBY_KEYWORDS = """alias and begin break case class def defined? do else elsif end ensure false for if in module next
nil not or redo rescue retry return self super then true undef unless until when while yield require attr_reader
attr_accessor""".split()


@dataclass(frozen=True)
class _Lang:
    keywords: frozenset[str]
    line_comment: tuple[str, ...] = ()
    block_comment: tuple[str, str] | None = None
    triple_strings: bool = False
    backtick_strings: bool = False
    extra: frozenset[str] = field(default_factory=frozenset)


_LANGS: dict[str, _Lang] = {
    "python": _Lang(frozenset(_PY_KEYWORDS), ("#",), None, triple_strings=True),
    "javascript": _Lang(frozenset(_JS_KEYWORDS), ("//",), ("/*", "*/"), backtick_strings=True),
    "go": _Lang(frozenset(_GO_KEYWORDS), ("//",), ("/*", "*/"), backtick_strings=True),
    "java": _Lang(frozenset(_JAVA_KEYWORDS), ("//",), ("/*", "*/")),
    "rust": _Lang(frozenset(_RUST_KEYWORDS), ("//",), ("/*", "*/")),
    "c": _Lang(frozenset(_C_KEYWORDS), ("//",), ("/*", "*/")),
    "ruby": _Lang(frozenset(_RUBY_KEYWORDS), ("#",), None),
    "shell": _Lang(frozenset("if then else elif fi for in do done case esac while function return export".split()), ("#",)),
}

_EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".pyx": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "javascript", ".tsx": "javascript",
    ".go": "go", ".java": "java", ".kt": "java", ".scala": "java", ".cs": "java",
    ".rs": "rust",
    ".c": "c", ".h": "c", ".cc": "c", ".cpp": "c", ".cxx": "c", ".hpp": "c", ".hh": "c",
    ".rb": "ruby", ".sh": "shell", ".bash": "shell",
}

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\??")
_NUMBER = re.compile(r"(?:0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)[a-zA-Z]*")


def language_for(path: str) -> str | None:
    """The highlighter language for a file path, or None when the extension is unknown (rendered plain)."""
    return _EXTENSIONS.get(PurePosixPath(path).suffix.lower())


def _span(cls: str, text: str) -> str:
    return f'<span class="tok-{cls}">{escape(text)}</span>'


def highlight_lines(code: str, path: str) -> list[Markup]:
    """Highlight `code` (the text of a file excerpt) as one escaped HTML fragment per source line."""
    lines = code.split("\n")
    lang = _LANGS.get(language_for(path) or "")
    if lang is None:
        return [Markup(escape(line)) for line in lines]
    out: list[Markup] = []
    open_block: str | None = None  # the closing delimiter of a string/comment still open from a previous line
    open_cls = ""
    for line in lines:
        parts: list[str] = []
        i = 0
        n = len(line)
        if open_block is not None:
            end = line.find(open_block)
            if end < 0:
                out.append(Markup(_span(open_cls, line) if line else ""))
                continue
            stop = end + len(open_block)
            parts.append(_span(open_cls, line[:stop]))
            i = stop
            open_block = None
        plain_start = i
        while i < n:
            ch = line[i]
            token: tuple[str, int] | None = None  # (class, end index)
            if any(line.startswith(marker, i) for marker in lang.line_comment):
                token = ("comment", n)
            elif lang.block_comment and line.startswith(lang.block_comment[0], i):
                end = line.find(lang.block_comment[1], i + len(lang.block_comment[0]))
                if end < 0:
                    open_block, open_cls = lang.block_comment[1], "comment"
                    token = ("comment", n)
                else:
                    token = ("comment", end + len(lang.block_comment[1]))
            elif lang.triple_strings and line.startswith(('"""', "'''"), i):
                quote = line[i : i + 3]
                end = line.find(quote, i + 3)
                if end < 0:
                    open_block, open_cls = quote, "string"
                    token = ("string", n)
                else:
                    token = ("string", end + 3)
            elif ch in "\"'" or (ch == "`" and lang.backtick_strings):
                j = i + 1
                while j < n and line[j] != ch:
                    j += 2 if line[j] == "\\" else 1
                token = ("string", min(j + 1, n))
            elif ch.isdigit() and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_")):
                m = _NUMBER.match(line, i)
                token = ("number", m.end()) if m else None
            elif ch.isalpha() or ch == "_":
                m = _WORD.match(line, i)
                assert m is not None
                word = m.group(0)
                if word in lang.keywords:
                    token = ("keyword", m.end())
                elif word.rstrip("?") in lang.keywords:
                    token = ("keyword", m.end() - 1)
                else:
                    i = m.end()
                    continue
            if token is None:
                i += 1
                continue
            if plain_start < i:
                parts.append(str(escape(line[plain_start:i])))
            cls, end = token
            parts.append(_span(cls, line[i:end]))
            i = plain_start = end
        if plain_start < n:
            parts.append(str(escape(line[plain_start:n])))
        out.append(Markup("".join(parts)))
    return out

"""Text that every store and every wire format can carry, and the part of a Markdown text its reader sees.

JSON can spell code points UTF-8 cannot encode (a lone surrogate such as `"\\ud800"`), and PostgreSQL refuses
NUL in text. Where the sender cannot be asked to fix its input (a webhook delivery, an error reply that echoes
the input), such characters are replaced with U+FFFD; where it can (the JSON API), they are refused (422).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from typing import Any, Literal

REPLACEMENT = "\ufffd"
"""What an unstorable character becomes."""
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_FENCE_OR_CODE = (
    r"(?P<fence>^[ ]{0,3}(?P<mark>`{3,}|~{3,})[^\n]*(?:\n(?:.*?\n)??[ ]{0,3}(?P=mark)[`~]*[ \t]*(?=\n|\Z)|.*\Z))"
    r"|(?P<code>(?P<ticks>`+)(?-s:.+?)(?P=ticks))"
)
_MARKDOWN_PARTS = re.compile(_FENCE_OR_CODE + r"|(?P<comment><!--.*?-->)", re.S | re.M)
"""Fenced code blocks (an unclosed one runs to the end), code spans and HTML comments, in the order they open."""
_CODE_PARTS = re.compile(_FENCE_OR_CODE, re.S | re.M)
"""Fenced code blocks and code spans, without the HTML comments (`markdown_parts` finds those itself)."""
_ESCAPE = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]")
"""A terminal's escape sequence (ECMA-48): a control sequence (`ESC [ 31 m`, colours and cursor moves), an operating
system command (`ESC ] 0 ; title BEL`, up to its terminator or the next escape), or another escape (`ESC ( B`)."""
MarkdownPart = Literal["prose", "fence", "code", "comment"]
"""What a stretch of a Markdown text is to its reader: words, a fenced code block, a code span or an HTML comment."""


def storable(text: str) -> str:
    """`text` with every lone surrogate and NUL replaced by U+FFFD (the same string when there is none)."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text


def unstorable_reason(text: str) -> str | None:
    """Why `text` cannot be stored as it is, or None when it can."""
    match = _UNSTORABLE.search(text)
    if match is None:
        return None
    if match.group() == "\x00":
        return "must not contain NUL characters"
    return "must be valid Unicode text (no lone surrogates such as \\ud800)"


def scrub(value: Any) -> Any:
    """A JSON-like value every backend stores and every JSON reader reads: `storable` applied to every string in it
    (keys included), and every float that is not finite (`NaN`, `Infinity`: no JSON has them, PostgreSQL refuses
    them) made None."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def visible_markdown(text: str) -> str:
    """`text` without the HTML comments (`<!-- ... -->`) a Markdown renderer hides: an issue template's
    instructions, which the reporter never saw as part of the report. Comments quoted inside code blocks or code
    spans are kept, and so is an unclosed `<!--`."""
    end = text.rfind("-->") + 3
    if end < 3 or "<!--" not in text[:end]:
        return text
    # past the last `-->` no comment can close: leaving that tail out keeps every search linear
    return _MARKDOWN_PARTS.sub(lambda m: "" if m.group("comment") else m.group(0), text[:end]) + text[end:]


def without_escapes(text: str) -> str:
    """`text` without the terminal escape sequences a log copied from a terminal or a CI job carries (its colours
    are not words of the report); the same string when it has none."""
    return _ESCAPE.sub("", text) if "\x1b" in text or "\x9b" in text else text


def markdown_parts(text: str) -> Iterator[tuple[MarkdownPart, str]]:
    """The stretches of `text` in order, each with what it is; joined, they are `text`. Read in linear time: an
    HTML comment is looked for up to the last `-->` only (an unclosed `<!--` repeated cost time quadratic in the
    text's length when a pattern looked for it), and each search resumes where the last one stopped."""
    code: re.Match[str] | None = None
    opener = text.find("<!--")
    at = 0
    while at < len(text):
        if code is None or code.start() < at:
            code = _CODE_PARTS.search(text, at)
        if 0 <= opener < at:
            opener = text.find("<!--", at)
        if opener >= 0 and (code is None or opener < code.start()):
            close = text.find("-->", opener + 4)
            if close < 0:
                opener = -1  # no later `<!--` can close either
                continue
            if opener > at:
                yield "prose", text[at:opener]
            yield "comment", text[opener : close + 3]
            at = close + 3
            continue
        if code is None:
            break
        if code.start() > at:
            yield "prose", text[at : code.start()]
        yield ("fence" if code.group("fence") else "code"), code.group(0)
        at = code.end()
    if at < len(text):
        yield "prose", text[at:]


def without_blocks(text: str, blocks: Iterable[str]) -> str:
    """`text` with its line ends read as a report's extractors read them (`\\r\\n` and `\\r` become `\\n`), and each
    of `blocks` (the code blocks found in it, `repomap.focus.Focus.code_blocks`) cut out: the report's own words."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for block in blocks:
        text = text.replace(block, "")
    return text

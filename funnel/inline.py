"""Inline markdown that renders as written: code in a span no backtick inside it can close, and quoted prose whose
backticks pair.

A diagnosis quotes code lines and report text inside its own markdown. A line holding a backtick (a JavaScript
template literal, a Go struct tag, reStructuredText's ``double`` quotes) closed the single-backtick span early and
turned the rest of the sentence into code; a title with a stray backtick (`doesn`t`) opened a span that the next
backticked path closed.
"""

from __future__ import annotations

import re

__all__ = ("CODE_SPAN", "code_span", "code_spans", "paired_ticks", "span_text")

_RUN = re.compile(r"`+")
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)([^\n]+?)(?<!`)\1(?!`)")
"""A code span as CommonMark reads one: a run of backticks closed by the next run of the same length (so that
``a `b` c`` quotes code holding a backtick); its text is group 2, before `span_text`."""


def code_span(code: str) -> str:
    """`code` as one inline code span: fenced by one backtick more than its longest run of backticks (CommonMark),
    with a space inside the fence when it starts or ends with a backtick."""
    fence = "`" * (max((len(r) for r in _RUN.findall(code)), default=0) + 1)
    pad = " " if code.startswith("`") or code.endswith("`") else ""
    return f"{fence}{pad}{code}{pad}{fence}"


def paired_ticks(text: str) -> str:
    """Prose with each run of backticks that no later run of the same length closes (it opens no code span) made
    apostrophes, so that quoted text cannot pair with a backtick written after it."""
    runs = list(_RUN.finditer(text))
    paired: set[int] = set()
    k = 0
    while k < len(runs):
        width = len(runs[k].group())
        close = next((j for j in range(k + 1, len(runs)) if len(runs[j].group()) == width), None)
        if close is None:
            k += 1
            continue
        paired.update((k, close))
        k = close + 1
    out, at = [], 0
    for k, m in enumerate(runs):
        out.append(text[at : m.start()] + (m.group() if k in paired else "'" * len(m.group())))
        at = m.end()
    return "".join(out) + text[at:]


def span_text(inner: str) -> str:
    """A code span's text: without the one space its fence keeps from a backtick the code starts or ends with."""
    return inner[1:-1] if inner.startswith(" ") and inner.endswith(" ") and inner.strip() else inner


def code_spans(text: str) -> list[str]:
    """The text of each code span of a line of markdown, in order."""
    return [span_text(m.group(2)) for m in CODE_SPAN.finditer(text)]

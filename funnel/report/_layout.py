"""Whole-report layout a chat model writes instead of the template's: the report wrapped in a fence, setext
headings. Both are rewritten into the plain layout the section parser reads."""

from __future__ import annotations

import re

from funnel.report._markdown import FENCE_OPEN, ITEM, closes, is_heading

__all__ = ("setext_to_atx", "unwrap_fence")


def unwrap_fence(lines: list[str]) -> list[str] | None:
    """A whole report wrapped in a ```markdown fence, as chat models like to write it, without the fence (and
    without a sentence before or after it, like "Here is my report:")."""
    body = list(lines)
    while body and not body[-1].strip():
        body.pop()
    for i, line in enumerate(body):
        if is_heading(line):
            return None  # headings before any fence: the report is not wrapped
        m = FENCE_OPEN.match(line)
        if m is None:
            continue
        if m.group(3).lower() not in {"", "markdown", "md", "text"}:
            return None
        inner = body[i + 1 :]
        end = max((j for j, ln in enumerate(inner) if closes(ln, m.group(2))), default=len(inner))
        return inner[:end]
    return None


_WRAPPER_END = re.compile(r"</([A-Za-z][\w-]{0,40})>\s*\Z")


def unwrap_tags(text: str) -> str:
    """A report the model put inside an XML-style wrapper (`<answer>…</answer>`, `<final_answer>`, `<report>`), as
    other agents' prompts ask for a final answer, without the tags (a sentence before the opening tag kept); the text
    itself when its end closes no tag that opens a line. The closing tag ended the last section's text, and an
    opening tag before the first heading hid that heading."""
    end = _WRAPPER_END.search(text)
    if end is None:
        return text
    opening = re.compile(rf"^[ \t]*<{re.escape(end.group(1))}>", re.M).search(text, 0, end.start())
    if opening is None:
        return text
    return text[: opening.start()] + text[opening.end() : end.start()].lstrip(" \t").rstrip() + "\n"


_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def setext_to_atx(lines: list[str]) -> list[str]:
    """Setext headings (a line underlined with `===` or `---`) rewritten as ATX headings (`#`, `##`); code blocks
    and list items are left alone."""
    out: list[str] = []
    fence: str | None = None
    for line in lines:
        if fence is not None:
            fence = None if closes(line, fence) else fence
        elif opened := FENCE_OPEN.match(line):
            fence = opened.group(2)
        elif (m := _SETEXT.match(line)) and out and out[-1].strip() and not is_heading(out[-1]) \
                and not ITEM.match(out[-1]) and not FENCE_OPEN.match(out[-1]):  # fmt: skip
            out[-1] = ("# " if m.group(1)[0] == "=" else "## ") + out[-1].strip()
            continue
        out.append(line)
    return out

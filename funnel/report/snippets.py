"""Finding a quoted snippet in a file: the lines as a reader quotes them (numbered, elided, cut), in order."""

from __future__ import annotations

import re

from repomap.pointers import fold

__all__ = ("ELLIPSIS", "find_snippet", "snippet_chunks", "snippet_weight")

ELLIPSIS = re.compile(r"^\s*(?:\.\.\.|…|\[\.\.\.\]|(?:#|//|/\*|--)\s*(?:\.\.\.|…).*)\s*$")
_NUMBERED = re.compile(r"^\s*\d+\s*[|:]\s?")
_SEARCH_PREFIX = re.compile(r"^[^\s:]+[:-]\d+[:-]\s?")
_TRUNCATED = re.compile(r"\.\.\.\[truncated[^\]]*\]$")


_UNDECODABLE = re.compile(r"(?:\\x[89a-fA-F][0-9a-fA-F]|\ufffd)+")
"""Bytes that are not UTF-8 as a reader shows them: `\\xe9` in `read_range`'s output, U+FFFD where a file was
decoded with replacement (one per byte or one per sequence): a run of either reads as one."""


def _norm(line: str) -> str:
    line = fold(line)
    return _UNDECODABLE.sub("\ufffd", line) if "\\x" in line or "\ufffd" in line else line


def snippet_chunks(snippet: str) -> list[list[str]]:
    """Normalized, non-blank snippet lines split at `...` elisions; read_range line numbers removed."""
    lines = snippet.replace("\r\n", "\n").split("\n")
    filled = [ln for ln in lines if ln.strip()]
    for prefix in (_NUMBERED, _SEARCH_PREFIX):  # copied from read_range or search output
        if filled and all(prefix.match(ln) for ln in filled):
            lines = [prefix.sub("", ln, count=1) for ln in lines]
            break
    chunks: list[list[str]] = [[]]
    for line in lines:
        if ELLIPSIS.match(line):
            if chunks[-1]:
                chunks.append([])
            continue
        text = _norm(_TRUNCATED.sub("", line))
        if text:
            chunks[-1].append(text)
    return [c for c in chunks if c]


def _line_matches(quoted: str, actual: str) -> bool:
    if quoted == actual:
        return True
    if quoted.endswith("...") and len(quoted) > 8 and actual.startswith(quoted[:-3].rstrip()):
        return True
    return len(quoted) >= 6 and quoted in actual


def _chunk_at(file_lines: list[tuple[int, str]], chunk: list[str], i: int) -> bool:
    if i + len(chunk) > len(file_lines):
        return False
    return all(_line_matches(q, file_lines[i + k][1]) for k, q in enumerate(chunk))


def find_snippet(text_lines: list[str], snippet: str, *, max_gap: int = 400) -> list[tuple[int, int]]:
    """Every (first, last) 1-based line span where the snippet occurs, comparing whitespace-insensitively.

    Blank lines are ignored, `...` lines stand for elided code (the parts must appear in order, at most
    `max_gap` lines apart) and `read_range` line-number prefixes are stripped from the quote.
    """
    chunks = snippet_chunks(snippet)
    if not chunks:
        return []
    file_lines = [(n, _norm(t)) for n, t in enumerate(text_lines, 1) if t.strip()]
    spans: list[tuple[int, int]] = []
    first = chunks[0]
    for i in range(len(file_lines)):
        if not _chunk_at(file_lines, first, i):
            continue
        end_i: int | None = i + len(first) - 1
        for chunk in chunks[1:]:
            assert end_i is not None
            last_line, found = file_lines[end_i][0], None
            for j in range(end_i + 1, len(file_lines)):
                if file_lines[j][0] - last_line > max_gap:
                    break
                if _chunk_at(file_lines, chunk, j):
                    found = j
                    break
            end_i = None if found is None else found + len(chunk) - 1
            if end_i is None:
                break
        if end_i is not None:
            spans.append((file_lines[i][0], file_lines[end_i][0]))
    return spans


def snippet_weight(snippet: str) -> int:
    return sum(len(line.replace(" ", "")) for chunk in snippet_chunks(snippet) for line in chunk)

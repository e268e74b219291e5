"""Whether a proposed change's diff sketch fits the file it edits: the lines each hunk removes or keeps as context
occur in the file, in order.

A sketch is loose by nature (hunk headers without counts, context lines without their leading space, `...` for
elided lines), so it is read leniently and compared the way a quoted snippet is (`funnel.report.snippets`); a strict
unified-diff parser would refuse most sketches a model writes. A sketch that only adds lines claims nothing about
the file and always fits.
"""

from __future__ import annotations

from funnel.report.snippets import find_snippet

__all__ = ("sketch_misfit",)

_ADDED, _REMOVED = "+", "-"
_HEADERS = ("---", "+++", "diff ", "index ")


def sketch_misfit(file_lines: list[str], diff: str) -> str | None:
    """The first line of the first hunk whose old lines (removed and context) do not occur in `file_lines`; None
    when every hunk fits."""
    for hunk in _hunks(diff):
        old = [line[1:] if line[:1] in (_REMOVED, " ") else line for line in hunk if not line.startswith(_ADDED)]
        if not any(line.strip() for line in old):
            continue
        if not find_snippet(file_lines, "\n".join(old)):
            removed = [line[1:] for line in hunk if line.startswith(_REMOVED)]
            return next(line.strip() for line in [*removed, *old] if line.strip())  # `old` holds a non-blank line
    return None


def _hunks(diff: str) -> list[list[str]]:
    """The sketch's hunks, split at `@@` headers (the whole sketch is one hunk when it has none), file headers
    left out."""
    hunks: list[list[str]] = [[]]
    for line in diff.splitlines():
        if line.startswith("@@"):
            hunks.append([])
        elif not line.startswith(_HEADERS) and not line.startswith("\\"):
            hunks[-1].append(line)
    return [h for h in hunks if h]

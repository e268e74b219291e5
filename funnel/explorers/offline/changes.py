"""The change the offline report proposes (never applied): the edit of a patch the report carries, a reasoning
rule's edit at its line, a feature request's addition, or the honest generic advice when nothing more is known."""

from __future__ import annotations

from typing import TYPE_CHECKING

from funnel.inline import code_span, paired_ticks
from funnel.explorers.offline.feature import request_change
from funnel.localize.reasoning import Finding
from funnel.localize.requested import Addition
from repomap.focus import Focus

if TYPE_CHECKING:  # the writer imports this module; its types are only needed for annotations
    from funnel.explorers.offline.writer import Citation

__all__ = ("proposed_change",)


def proposed_change(prime: Citation, found: Finding | None, focus: Focus, source: str, *, title: str,
                    addition: Addition | None, feature: bool) -> str:
    """The proposed change of the prime suspect: a patch the report carries first, then a feature request's
    addition or extension (`feature`), else the edit of the rule that fired at the cited line."""
    return _patched(prime, focus, source, feature=feature) or (
        request_change(addition, prime, found, title) if feature else _change(found, focus))


def _change(found: Finding | None, focus: Focus) -> str:
    """The proposed edit: tied to the selected line when a rule fired, else the honest generic advice."""
    if found is None:
        shown = next((m for m in focus.messages if _reads_as_message(m)), "")
        return ("Check this definition against the reported behaviour"
                + (f" (the report shows “{paired_ticks(_clip(shown, 120))}”)" if shown else "")
                + " and correct the handling there; add a regression test reproducing the report.")
    text = found.change[0].upper() + found.change[1:]
    if found.suggestion:
        text += f", for example {code_span(found.suggestion)}"
    return text + "; add a regression test reproducing the report."


def _patched(prime: Citation, focus: Focus, source: str, *, feature: bool = False) -> str:
    """The proposed edit when the report carries a patch changing a line of the prime suspect's first range: that
    edit, in words (never applied), ahead of any rule's."""
    for link in focus.links:
        if not link.text or not link.names(prime.path):
            continue
        line = link.line_in(source)
        if not prime.start <= line <= prime.end:
            continue
        new = code_span(_clip(' '.join(link.added), 120))
        if link.inserts:
            edit = f"The report's patch adds {new} after line {line}"
        elif link.added:
            edit = f"The report's patch replaces line {line} ({code_span(_clip(link.text, 80))}) with {new}"
        else:
            edit = f"The report's patch removes line {line} ({code_span(_clip(link.text, 80))})"
        if feature:
            return edit + ": check it against the requested behaviour; add a test of the new behaviour."
        return edit + ": check it against the reported behaviour; add a regression test reproducing the report."
    return ""


def _reads_as_message(text: str) -> bool:
    """A quoted string that reads as a message (`'Good' is not a valid Status`), not a fragment of the report's
    code that happened to stand between two quotes (`, x) << ' ' << fmt::format(`, `{"key": "value"}`)."""
    if not text[:1].isalnum() and text[:1] not in "'\"":
        return False
    if any(text.count(a) != text.count(b) for a, b in ("()", "[]", "{}")):
        return False
    return sum(c.isalnum() or c.isspace() or c == "_" for c in text) >= 0.75 * len(text)


def _clip(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters, `…` marking the cut."""
    if len(text) <= limit:
        return text
    return text[:limit].rpartition(" ")[0].rstrip(" ,.;:") + "…"

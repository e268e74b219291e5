"""The offline report of a feature request: what it asks for, where the change would go, and how to make it.

A feature request reports no fault. Its report says so, names the definition the title asks for when the tree
does not have it yet (`funnel.localize.requested`), cites the place it would be added (after the member it most
resembles), and proposes the addition or extension instead of a correction.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from funnel.inline import code_span, paired_ticks
from funnel.localize.reasoning import Finding
from funnel.localize.requested import Addition, Precedent
from repomap.encoding import line_count
from schemas.enums import Role

if TYPE_CHECKING:  # the writer imports this module; its types are only needed for annotations
    from funnel.explorers.offline.writer import Citation

__all__ = ("place_addition", "request_change", "request_opening", "request_place", "request_summary", "with_precedent")

_AFTER_LINES = 5
"""Lines after the member an addition goes after that its citation holds (the room the new definition takes)."""


def place_addition(cites: list[Citation], addition: Addition | None, texts: dict[str, str], width: int
                   ) -> list[Citation]:
    """The citations with the place an addition would go first, when the prime suspect is its file and a member
    resembles the requested name: the last lines of that member and the lines after it, at most `width` lines."""
    if addition is None or addition.after is None or not cites or cites[0].path != addition.path:
        return cites
    after = addition.after
    total = line_count(texts.get(addition.path, ""))
    end = min(total, after.end_line + _AFTER_LINES)
    start = max(after.start_line, end - max(width, _AFTER_LINES + 1) + 1)
    placed = replace(cites[0], start=start, end=max(start, end), symbol=after.qualname, role=Role.cause,
                     focus_lines=[after.end_line], span=(after.start_line, after.end_line), finding=None,
                     adds=addition.name)
    rest = [c for c in cites if not (c.path == placed.path and c.symbol == placed.symbol
                                     and c.start <= placed.end and placed.start <= c.end)]
    return [placed, *(replace(c, role=Role.related) if c.role == Role.cause else c for c in rest)]


def request_summary(title: str, where: str, weak: bool) -> str:
    """The summary of a feature request's report."""
    if weak:
        return f"Weak evidence only: the request “{paired_ticks(title)}” may concern {where}, but the report gives little to go on."
    return f"The report asks for new behaviour (“{paired_ticks(title)}”); the change most likely belongs in {where}."


def request_opening(addition: Addition | None, prime: Citation) -> str:
    """The root cause's first sentence for a feature request: no fault, and what the title asks for that the tree
    does not have; where it would be added when the citation is that place."""
    text = "The report asks for new behaviour rather than reporting a fault in existing code"
    if addition is None:
        return text + "."
    owner = f"`{addition.owner}`" if addition.owner else "the repository"
    text += f": `{addition.name}`, which {owner} does not define yet"
    if addition.precedent is not None:
        text += f" (`{addition.precedent.owner}` has one: {_where(addition.precedent)})"
    if prime.adds is None or addition.after is None:
        return text + "."
    after = addition.after
    among = f"the member of `{addition.owner}`" if addition.owner else f"the definition of `{addition.path}`"
    return (text + f". It would go beside {code_span(after.qualname)} (`{prime.path}:{after.start_line}-{after.end_line}`), "
            f"{among} whose name it most resembles: the cited lines end it and hold the room after it.")


def request_place(addition: Addition | None, prime: Citation) -> str | None:
    """Where a feature request's change belongs, for its summary: beside the cited member when the citation is the
    place of the addition, else in the owner the addition belongs to; None when the addition names neither."""
    if addition is None:
        return None
    if prime.adds:
        return (f"`{addition.owner}` in " if addition.owner else "") + f"`{prime.path}`, beside {code_span(prime.symbol)}"
    return f"`{addition.owner}` in `{addition.path}`" if addition.owner else None


def with_precedent(evidence: list[str], addition: Addition | None, texts: dict[str, str]) -> list[str]:
    """The evidence bullets with the precedent's first line that names it (its signature) quoted after the cited
    lines, or the bullet already quoting that line marked as the precedent."""
    if addition is None or addition.precedent is None:
        return evidence
    span, path = addition.precedent.span, addition.precedent.path
    shown = texts.get(path, "").splitlines()[span.start_line - 1: span.end_line]
    at = next((k for k, line in enumerate(shown) if span.name in line), None)
    if at is None:
        return evidence
    where = f"`{path}:{span.start_line + at}`"
    note = f" (the existing `{span.name}` the new one can follow)"
    if any(e.startswith(where + " ") for e in evidence):
        return [e + note if e.startswith(where + " ") else e for e in evidence]
    bullet = f"{where} in {code_span(span.qualname)}: {code_span(shown[at].strip()[:100])}{note}"
    cited = sum(1 for e in evidence if e.startswith("`"))
    return [*evidence[:cited], bullet, *evidence[cited:]]


def _where(found: Precedent) -> str:
    """A precedent as `Owner.name`, `path:start-end`."""
    return f"{code_span(found.span.qualname)}, `{found.path}:{found.span.start_line}-{found.span.end_line}`"


def request_change(addition: Addition | None, prime: Citation, found: Finding | None, title: str) -> str:
    """The proposed change of a feature request: the addition, placed when the citation is its place; else the
    extension of the cited definition (at a rule's line when one fired)."""
    test = "; add a test of the new behaviour."
    if addition is not None:
        text = f"Add `{addition.name}` to " + (f"`{addition.owner}` in " if addition.owner else "") + f"`{addition.path}`"
        if prime.adds is not None and addition.after is not None:
            text += (f", after {code_span(addition.after.qualname)} (line {addition.after.end_line}), written the way its "
                     "neighbours are")
        if addition.precedent is not None:
            text += f", following {_where(addition.precedent)}"
        return text + test
    what = code_span(prime.symbol) if prime.symbol else f"`{prime.path}`"
    at = f" (at line {found.line}, where the report's `{found.error}` points)" if found and found.error else (
        f" (at line {found.line})" if found else "")
    return f"Extend {what}{at} to provide what the report asks for (“{paired_ticks(title[:120])}”)" + test

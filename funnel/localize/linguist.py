"""The project's own word on which of its files are vendored or generated: GitHub Linguist's attributes.

A project tells GitHub (and every tool that reads Linguist's overrides) which files are third-party copies or a
generator's output in its `.gitattributes` (`src/decNumber/** linguist-vendored`, `src/parser.[ch]
linguist-generated=true`, `vendor/ours/** -linguist-vendored`). The ranking's own guesses (a vendoring
directory's name, a generator's mark in the head of a file) miss a copied library kept under `src/`; the
project's declaration does not. Read from the tree's root `.gitattributes` with git's rules: patterns match
like `.gitignore` patterns, a later line overrides an earlier one, `attr` / `attr=true` sets, `-attr` /
`attr=false` unsets, `!attr` leaves unspecified, and a `[attr]name ...` line defines a macro of attributes.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from repomap.gitignore import RuleGroup, compile_patterns

__all__ = ("Attribute", "Declared", "declared")

Attribute = Literal["linguist-vendored", "linguist-generated"]
"""The Linguist attributes the ranking reads."""

_MAX_BYTES = 256 * 1024
"""A `.gitattributes` larger than this is not read (none in practice comes close)."""


@dataclass(frozen=True)
class Declared:
    """The paths a project declares with an attribute set, and those it declares with it unset."""

    on: frozenset[str] = frozenset()
    """Paths whose last matching line sets the attribute."""
    off: frozenset[str] = frozenset()
    """Paths whose last matching line unsets it: the project says no, whatever a guess says."""

    def apply(self, guessed: Iterable[str]) -> frozenset[str]:
        """The guessed paths, less those the project declares not to be, plus those it declares to be."""
        return frozenset((set(guessed) - self.off) | self.on)


def _state(token: str, attribute: str, macros: dict[str, list[str]], depth: int = 0) -> bool | None | str:
    """What one attribute token says of `attribute`: True (set), False (unset), None (unspecified again),
    or "" when it says nothing of it."""
    name, _, value = token.partition("=")
    if name.lstrip("-!") == attribute:
        if name.startswith("!"):
            return None
        if name.startswith("-"):
            return False
        return value.lower() not in ("false", "0") if value else True
    if depth < 4 and name in macros and not value:
        for inner in macros[name]:
            state = _state(inner, attribute, macros, depth + 1)
            if state != "":
                return state
    return ""


_Rule = tuple[str, tuple[RuleGroup, ...], bool | None]
"""A line that speaks of the attribute: its pattern, the pattern compiled, the state it gives."""
_WHOLE_LANGUAGE = re.compile(r"\*\.[\w+-]+")
"""A pattern naming every file of one extension (`*.js`), not a copy of someone else's code (`*.min.js`, `lib/**`)."""


def _rules(text: str, attribute: str) -> list[_Rule]:
    """The lines of a `.gitattributes` that speak of `attribute`, in order."""
    macros: dict[str, list[str]] = {}
    rules: list[_Rule] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            pattern, *tokens = shlex.split(line, comments=False, posix=True) if line.startswith('"') else line.split()
        except ValueError:  # an unclosed quote: git skips the line too
            continue
        if pattern.startswith("[attr]"):
            macros[pattern[len("[attr]"):]] = tokens
            continue
        if pattern.startswith("!"):  # negative patterns are forbidden in .gitattributes; git ignores the line
            continue
        states = [s for s in (_state(t, attribute, macros) for t in tokens) if s != ""]
        if states:
            rules.append((pattern, compile_patterns([pattern]), states[-1]))
    return rules


def _matches(rule: _Rule, path: str) -> bool:
    return any(g.matches(path, False) for g in rule[1])


def declared(root: Path, paths: Iterable[str], attribute: Attribute) -> Declared:
    """Which of `paths` the root `.gitattributes` of `root` declares with `attribute` set, and which unset (a line
    that only corrects GitHub's language statistics left out)."""
    source = root / ".gitattributes"
    try:
        if not source.is_file() or source.is_symlink() or source.stat().st_size > _MAX_BYTES:
            return Declared()
        text = source.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return Declared()
    if attribute not in text:
        return Declared()
    paths = list(paths)
    rules = [r for r in _rules(text, attribute) if not _corrects_statistics(r, paths)]
    on: set[str] = set()
    off: set[str] = set()
    for path in paths:
        state = None
        for rule in rules:
            if _matches(rule, path):
                state = rule[2]
        if state is True:
            on.add(path)
        elif state is False:
            off.add(path)
    return Declared(frozenset(on), frozenset(off))


def _corrects_statistics(rule: _Rule, paths: list[str]) -> bool:
    """A line setting the attribute on a whole language that makes up more than half of the tree (`*.js
    linguist-vendored` in a project written in JavaScript): it corrects GitHub's language bar, not the code."""
    if rule[2] is not True or not _WHOLE_LANGUAGE.fullmatch(rule[0]):
        return False
    return sum(1 for p in paths if _matches(rule, p)) * 2 > len(paths)

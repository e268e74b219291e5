"""The project's own word on which of its files are vendored, generated or documentation: Linguist's attributes.

A project tells GitHub (and every tool that reads Linguist's overrides) which files are third-party copies, a
generator's output or documentation in its `.gitattributes` (`src/decNumber/** linguist-vendored`, `src/parser.[ch]
linguist-generated=true`, `vendor/ours/** -linguist-vendored`, `site/** linguist-documentation`). The ranking's own
guesses (a vendoring directory's name, a generator's mark in the head of a file) miss a copied library kept under
`src/`; the project's declaration does not. Read from the tree's `.gitattributes` files with git's rules:
patterns match like `.gitignore` patterns relative to the file's directory, a later line overrides an earlier one
and a file in a deeper directory overrides its parents', `attr` / `attr=true` sets, `-attr` / `attr=false` unsets,
`!attr` leaves unspecified, and a `[attr]name ...` line of the root file defines a macro of attributes. The
repository's own `.git/info/attributes` (a local declaration, never committed) outranks every `.gitattributes`.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from repomap.gitignore import RuleGroup, compile_patterns

__all__ = ("Attribute", "Attributes", "Declared", "read_attributes", "read_git_file")

Attribute = Literal["linguist-vendored", "linguist-generated", "linguist-documentation"]
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


def _macros(text: str) -> dict[str, list[str]]:
    """The `[attr]name attr...` macros a root `.gitattributes` defines (git reads them there only)."""
    macros: dict[str, list[str]] = {}
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0].startswith("[attr]"):
            macros[fields[0][len("[attr]"):]] = fields[1:]
    return macros


def _rules(text: str, attribute: str, macros: dict[str, list[str]]) -> list[_Rule]:
    """The lines of a `.gitattributes` that speak of `attribute`, in order."""
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
            continue
        if pattern.startswith("!"):  # negative patterns are forbidden in .gitattributes; git ignores the line
            continue
        states = [s for s in (_state(t, attribute, macros) for t in tokens) if s != ""]
        if states:
            rules.append((pattern, compile_patterns([pattern]), states[-1]))
    return rules


def _matches(rule: _Rule, path: str) -> bool:
    return any(g.matches(path, False) for g in rule[1])


def _prefixes(directory: str) -> list[str]:
    """The directory prefixes from the root down to `directory` ("a/b" → "", "a/", "a/b/")."""
    parts = directory.split("/") if directory else []
    return [""] + ["/".join(parts[:i]) + "/" for i in range(1, len(parts) + 1)]


def read_git_file(source: str) -> str:
    """The text of a file git reads from the tree (`.gitattributes`, `.gitmodules`); "" when it is absent, a symlink
    (git follows none), not a regular file (a FIFO would block), too large or unreadable."""
    try:
        info = os.lstat(source)  # a symlink is not followed: git reads no .gitattributes through one
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_BYTES:
            return ""
        with open(source, encoding="utf-8-sig", errors="replace") as handle:  # git skips a byte order mark too
            return handle.read()
    except OSError:
        return ""


@dataclass(frozen=True)
class Attributes:
    """The `.gitattributes` files that speak for some paths of a tree, read once for every attribute asked of them."""

    paths: tuple[str, ...]
    """The paths the declarations are asked of."""
    sources: tuple[tuple[str, str], ...]
    """(directory prefix, text) of each `.gitattributes`, the root's first, each directory before those below it."""
    local: str = ""
    """The text of `.git/info/attributes`: patterns relative to the root, outranking every `.gitattributes`."""

    def declared(self, attribute: Attribute) -> Declared:
        """Which of the paths are declared with `attribute` set, and which unset (a line that only corrects
        GitHub's language statistics left out)."""
        if not any(attribute in text for _, text in self.sources) and attribute not in self.local:
            return Declared()
        root = self.sources[0][1] if self.sources and self.sources[0][0] == "" else ""
        macros = _macros(root) | _macros(self.local)
        layers: dict[str, list[_Rule]] = {}
        for directory, text in self.sources:
            rules = [r for r in _rules(text, attribute, macros) if not self._corrects_statistics(r, directory)]
            if rules:
                layers[directory] = rules
        local = [("", _rules(self.local, attribute, macros))] if self.local else []
        chains: dict[str, list[tuple[str, list[_Rule]]]] = {}
        on: set[str] = set()
        off: set[str] = set()
        for path in self.paths:
            parent = path.rpartition("/")[0]
            chain = chains.get(parent)
            if chain is None:  # the files speaking for this directory, the root's first: found once per directory
                chain = chains[parent] = [(d, layers[d]) for d in _prefixes(parent) if d in layers] + local
            state = None
            for directory, rules in chain:
                relative = path[len(directory):]
                for rule in rules:
                    if _matches(rule, relative):
                        state = rule[2]
            if state is True:
                on.add(path)
            elif state is False:
                off.add(path)
        return Declared(frozenset(on), frozenset(off))

    def _corrects_statistics(self, rule: _Rule, directory: str) -> bool:
        """A line setting the attribute on a whole language that makes up more than half of the tree (`*.js
        linguist-vendored` in a project written in JavaScript): it corrects GitHub's language bar, not the code."""
        if rule[2] is not True or not _WHOLE_LANGUAGE.fullmatch(rule[0]):
            return False
        inside = (p[len(directory):] for p in self.paths if p.startswith(directory))
        return sum(1 for p in inside if _matches(rule, p)) * 2 > len(self.paths)


def read_attributes(root: Path, paths: Iterable[str], dirs: Iterable[str] | None = None) -> Attributes:
    """The `.gitattributes` files of `root` that speak for `paths`: those in `dirs` (root-relative directories,
    "" for the root, whose listing holds one: `repomap.RepoMap.attribute_dirs`) when the walk found them, else
    looked for in every directory holding a path."""
    paths = tuple(paths)
    if dirs is not None:
        directories = {d.strip("/") + "/" if d.strip("/") else "" for d in dirs}
    else:
        directories = {d for parent in {p.rpartition("/")[0] for p in paths} for d in _prefixes(parent)}
    base = str(root)
    found = [(d, read_git_file(os.path.join(base, d, ".gitattributes")))
             for d in sorted(directories, key=lambda d: (d.count("/"), d))]
    local = read_git_file(os.path.join(base, ".git", "info", "attributes"))
    return Attributes(paths, tuple((d, text) for d, text in found if text), local)

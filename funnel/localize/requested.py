"""What a feature request asks to add, and where it would go.

A request such as "Add `AsyncFd::try_io`" or "Add `recv_many` to StreamMap" names, in its title, a definition the
tree does not have yet, often with the definition it would belong to. Such a definition is usually added beside the
member it most resembles (`mark_unchanged` after `mark_changed`); that place, not a line of existing code, is where
the change goes. When no member resembles it, no place is guessed. When another definition already has a member of
that name (`AsyncFdReadyGuard.try_io` for `AsyncFd::try_io`, `UnixDatagram.bind` for "a `bind` method on
`UnixStream`"), it is the precedent the new one can follow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from funnel.localize.corpus import Corpus, SymbolSpan
from funnel.localize.file_kinds import is_test
from funnel.localize.names import is_prose_word
from funnel.localize.terms import split_identifier

__all__ = ("Addition", "Precedent", "find_addition", "requested_names")

_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_WRITTEN = re.compile(rf"{_NAME}(?:<[^<>`]*>)?(?:(?:::|\.|#){_NAME}(?:<[^<>`]*>)?)*(?:\(\))?")
_QUALIFIED = re.compile(rf"\b{_NAME}(?:(?:::|\.|#){_NAME})+(?:\(\))?|\b{_NAME}\(\)")
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*\b")
_CALLABLE = frozenset({"function", "method"})


@dataclass(frozen=True)
class Precedent:
    """An existing function or method of the requested name on another owner: the shape the new one can follow."""

    path: str
    """The file that defines it."""
    span: SymbolSpan
    """The definition (`UnixDatagram.bind`)."""

    @property
    def owner(self) -> str:
        """Qualified name of the definition it belongs to (`UnixDatagram`)."""
        return self.span.qualname.rpartition(".")[0]


@dataclass(frozen=True)
class Addition:
    """A definition the report asks for, and the place in one file where it would be added."""

    name: str
    """The requested name (`try_io`)."""
    owner: str | None
    """Qualified name of the definition it would belong to (`AsyncFd`), when the title names one this file has;
    None: the file's top level."""
    path: str
    """The file it would be added to."""
    after: SymbolSpan | None
    """The existing definition it would go after: the owner's member whose name shares the most words with the
    requested one (the later of equals; `mark_changed` for `mark_unchanged`); None when no member's name shares one
    (the owner's last member is no better a guess than the ranking's line: measured, docs/offline.md)."""
    precedent: Precedent | None = None
    """The same name already defined on another owner, closest first by owner name and folder; None when the tree
    defines the name nowhere (or only in tests)."""


def _written_names(title: str) -> list[list[str]]:
    """The names the title writes as code, each split into its parts (`AsyncFd::try_io` → AsyncFd, try_io): spans in
    backticks that hold one (qualified) name, and qualified names or calls outside them."""
    found = [m.group(0) for s in _CODE_SPAN.findall(title) if (m := _WRITTEN.fullmatch(s.strip()))]
    found += _QUALIFIED.findall(_CODE_SPAN.sub(" ", title))
    out = []
    for text in found:
        parts = [p for p in re.split(r"::|\.|#", re.sub(r"<[^<>]*>|\(\)", "", text)) if p]
        if parts and len(parts[-1]) >= 3:
            out.append(parts)
    return out


def _defined_under(corpus: Corpus, name: str, owner: str) -> bool:
    """Whether a definition `name` belongs to `owner`: a member of a definition so named, or a definition of a file
    or directory so named (`html.json_script` in `utils/html.py`, `watch::Receiver` in `sync/watch.rs`)."""
    for i, j in corpus.names.get(name, ()):
        qualname, path = corpus.docs[i].symbols[j].qualname, corpus.docs[i].path
        if qualname == f"{owner}.{name}" or qualname.endswith(f".{owner}.{name}"):
            return True
        if owner in path.rpartition(".")[0].split("/"):
            return True
    return False


def requested_names(title: str, corpus: Corpus) -> list[tuple[str, str | None]]:
    """`(name, owner)` for each name the title writes as code that the tree does not define (under that owner, when
    the title qualifies it by a defined one: `AsyncFd::try_io` while only `AsyncFdReadyGuard.try_io` exists), in
    title order; `owner` None when the title qualifies it by none. A name the tree defines only as functions or
    methods of others is requested of the first definition with members the title names that lacks it ("a `bind`
    method on `UnixStream`")."""
    out: list[tuple[str, str | None]] = []
    for parts in _written_names(title):
        name = parts[-1]
        owner = next((p for p in reversed(parts[:-1]) if p in corpus.names), None)
        if owner is None and len(parts) == 1 and _only_callable(corpus, name):  # "a `bind` method on `UnixStream`"
            owner = next((o for o in _owners(title, corpus, ()) if o != name and _holds_members(corpus, o)), None)
        if owner is not None and _defined_under(corpus, name, owner):
            continue
        if owner is None and (name in corpus.names or len(parts) == 1 and is_prose_word(name)
                              and not title.count(f"`{name}")):
            continue
        if (name, owner) not in out:
            out.append((name, owner))
    return out


def _only_callable(corpus: Corpus, name: str) -> bool:
    """Whether the tree defines `name` (outside tests) only as functions or methods, a constructor being no such
    method: a name a member could be added under, not a type the title names (`StreamReadConstraints`)."""
    spans = [corpus.docs[i].symbols[j] for i, j in corpus.names.get(name, ()) if not is_test(corpus.docs[i].path)]
    return bool(spans) and all(s.kind in _CALLABLE and not _constructor(s) for s in spans)


def _constructor(span: SymbolSpan) -> bool:
    """A method named as the definition it belongs to (Java's, C#'s, C++'s constructors)."""
    return span.qualname.rpartition(".")[0].rpartition(".")[2] == span.name


def _holds_members(corpus: Corpus, owner: str) -> bool:
    """Whether some definition named `owner` has members (a type or module a method could be added to)."""
    for i, j in corpus.names.get(owner, ()):
        prefix = corpus.docs[i].symbols[j].qualname + "."
        if any(s.qualname.startswith(prefix) for s in corpus.docs[i].symbols):
            return True
    return False


def _owners(title: str, corpus: Corpus, named: Iterable[str | None]) -> list[str]:
    """Definitions the title names that could hold a new member: the owners it qualifies requested names by, then
    the defined names it writes as code or capitalised (`StreamMap`, `Builder`), in title order."""
    words = [p for parts in _written_names(title) for p in parts]
    words += _CAPITALISED.findall(_CODE_SPAN.sub(" ", title).split(" ", 1)[-1])  # the title's first word is no name
    return list(dict.fromkeys([*(o for o in named if o), *(w for w in words if w in corpus.names)]))


def find_addition(title: str, corpus: Corpus, path: str) -> Addition | None:
    """Where in `path` the first definition the title requests would be added: in the owner the title names (a
    definition of `path` with members), else among the file's top-level definitions, after the one whose name is
    most like it (a name no definition of the tree has, for the top level); None when the title requests no name
    the tree lacks or `path` is not indexed."""
    wanted = requested_names(title, corpus)
    doc = corpus.docs[corpus.by_path[path]] if path in corpus.by_path else None
    if not wanted or doc is None:
        return None
    for owner in _owners(title, corpus, (o for _, o in wanted)):
        for span in (s for s in doc.symbols if s.qualname.rpartition(".")[2] == owner):
            members = [s for s in doc.symbols if s.qualname.rpartition(".")[0] == span.qualname]
            if members:
                name = next((n for n, o in wanted if o in (owner, None)), wanted[0][0])
                return Addition(name=name, owner=span.qualname, path=path, after=_resembling(name, members),
                                precedent=_precedent(corpus, name, span.qualname, path))
    name = next((n for n, o in wanted if o is None), None)  # defined nowhere, not only missing from its owner
    if name is None:
        return None
    return Addition(name=name, owner=None, path=path,
                    after=_resembling(name, [s for s in doc.symbols if "." not in s.qualname]))


def _precedent(corpus: Corpus, name: str, owner: str, path: str) -> Precedent | None:
    """The function or method `name` of another owner, outside tests: the one whose owner's name shares the most
    words with `owner` (`AsyncFdReadyGuard` for `AsyncFd`), then the one in the folder nearest `path`."""
    words = set(split_identifier(owner.rpartition(".")[2]))
    folders = path.split("/")[:-1]
    best: tuple[tuple[int, int], Precedent] | None = None
    for i, j in corpus.names.get(name, ()):
        doc, span = corpus.docs[i], corpus.docs[i].symbols[j]
        found = Precedent(doc.path, span)
        if span.kind not in _CALLABLE or found.owner in ("", owner) or _constructor(span) or is_test(doc.path):
            continue
        near = next((k for k, (a, b) in enumerate(zip(folders, doc.path.split("/")[:-1])) if a != b),
                    min(len(folders), doc.path.count("/")))
        key = (len(words & set(split_identifier(found.owner.rpartition(".")[2]))), near)
        if best is None or key > best[0]:
            best = (key, found)
    return best[1] if best else None


def _resembling(name: str, members: list[SymbolSpan]) -> SymbolSpan | None:
    """The member whose name shares the most words with `name` (the later of equals); None when none shares one."""
    words = set(split_identifier(name))
    best = max(members, key=lambda s: (len(words & set(split_identifier(s.name))), s.end_line), default=None)
    return best if best is not None and words & set(split_identifier(best.name)) else None

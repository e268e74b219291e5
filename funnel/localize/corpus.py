"""The lexical corpus of one tree: per-file and per-symbol term counts, cached on disk by content hash.

Each file is read once; its terms (`funnel.localize.terms`) are counted for the file and for every definition in
it. Counting is cached by a hash of
the file's bytes and its definitions, so a second tree of the same project costs only the changed files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from funnel.localize.foreign import declares_version, generated_paths, is_generated, vendored_paths
from funnel.localize.linguist import Attributes, Declared, read_attributes
from funnel.localize.term_cache import TermCache
from funnel.localize.terms import count_terms, path_tokens
from repomap.encoding import SNIFF_BYTES, line_count, looks_binary
from repomap.gate import Gate, Refused
from repomap.languages import is_text_source

__all__ = ("SymbolSpan", "FileDoc", "Corpus", "regex_definitions", "count_file", "spans_of")


@dataclass(frozen=True)
class SymbolSpan:
    """A definition as the ranker sees it."""

    name: str
    """Plain name."""
    qualname: str
    """Qualified name (`Class.method`)."""
    kind: str
    """Definition kind as the map names it (function, method, class...)."""
    start_line: int
    """First line (1-based)."""
    end_line: int
    """Last line (1-based, inclusive)."""


@dataclass
class FileDoc:
    """One indexed file."""

    path: str
    """Repository-relative POSIX path."""
    terms: dict[str, int]
    """Term counts of path and content."""
    length: int
    """Number of terms."""
    symbols: list[SymbolSpan] = field(default_factory=list)
    """Definitions in line order."""
    symbol_terms: list[dict[str, int]] = field(default_factory=list)
    """Term counts of each definition (its name, path and own lines)."""


Definitions = Callable[[str], Sequence[object] | None]
"""Returns the definitions of one file (objects with name, qualname, kind, start_line, end_line); None for a file
with no grammar, whose definitions are then found by pattern (`regex_definitions`)."""


class Corpus:
    """Files and symbols of one tree, with their term counts."""

    def __init__(self, root: Path, docs: list[FileDoc], texts: dict[str, str],
                 attribute_dirs: Sequence[str] | None = None) -> None:
        self.root = root
        """Tree root."""
        self.attribute_dirs = attribute_dirs
        """Directories holding a `.gitattributes`, when the walk found them (None: looked for on first use)."""
        self.docs = docs
        """Indexed files."""
        self.texts = texts
        """File texts by path (kept for literal matching and snippets)."""
        self.by_path = {d.path: i for i, d in enumerate(docs)}
        """Index of each path in `docs`."""
        self._generated: frozenset[str] | None = None
        self._vendored: frozenset[str] | None = None
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._names: dict[str, list[tuple[int, int]]] | None = None

    def postings(self, terms: Iterable[str]) -> dict[str, list[tuple[int, int]]]:
        """(index in `docs`, count) of every file holding each term asked for, in `docs` order (terms held by none:
        empty); each term is looked up once per corpus."""
        wanted = list(dict.fromkeys(terms))
        missing = [t for t in wanted if t not in self._postings]
        if missing:
            self._postings.update(self._find_postings(missing))
        return {t: self._postings[t] for t in wanted}

    def _find_postings(self, terms: list[str]) -> dict[str, list[tuple[int, int]]]:
        return {t: [(i, n) for i, d in enumerate(self.docs) if (n := d.terms.get(t))] for t in terms}

    @property
    def lengths(self) -> list[int]:
        """Each file's number of terms, in `docs` order."""
        return [d.length for d in self.docs]

    @cached_property
    def text_sources(self) -> frozenset[int]:
        """Indexes in `docs` of the files read as text (`repomap.languages.is_text_source`)."""
        return frozenset(i for path, i in self.by_path.items() if is_text_source(path))

    @property
    def names(self) -> Mapping[str, list[tuple[int, int]]]:
        """Every definition name → (file index, symbol index) of its definitions, in `docs` order."""
        if self._names is None:
            self._names = {}
            for i, d in enumerate(self.docs):
                for j, s in enumerate(d.symbols):
                    self._names.setdefault(s.name, []).append((i, j))
        return self._names

    def path_term_counts(self, terms: set[str]) -> dict[str, int]:
        """For each term, the number of files whose name or directory carries it (`path_tokens`)."""
        counts = dict.fromkeys(terms, 0)
        for path in self.by_path:
            for t in path_tokens(path) & terms:
                counts[t] += 1
        return counts

    def find_literal(self, needle: str) -> list[str]:
        """Paths of the files whose text contains `needle`, in `docs` order."""
        return [p for p, t in self.texts.items() if needle in t]

    def find_literals(self, needles: Sequence[str]) -> dict[str, list[str]]:
        """`find_literal` of each needle (a persisted index answers them with one search of the tree)."""
        return {n: self.find_literal(n) for n in needles}

    def prefetch(self, positions: Iterable[int]) -> None:
        """Load the records of these files at once (nothing to do when the corpus is in memory)."""

    @property
    def generated(self) -> frozenset[str]:
        """Paths whose head carries a code generator's mark (`Code generated ... DO NOT EDIT`, Bison, flex,
        protoc, ANTLR...): the fix goes into the generator's input, not into its output."""
        if self._generated is None:
            marked = [p for p, t in self.texts.items() if is_generated(t, p)]
            self._generated = generated_paths(marked, self.attributes)
        return self._generated

    @property
    def vendored(self) -> frozenset[str]:
        """Paths of third-party code copied into the tree: under a conventional vendoring directory (`vendor/`,
        `third_party/`, `extern/`...) or in a package nested in another that declares its own `__version__`
        (`requests/packages/urllib3/`): a fix goes upstream, not into the copy."""
        if self._vendored is None:
            versioned = [p for p, t in self.texts.items() if declares_version(p, t)]
            self._vendored = vendored_paths(self.root, versioned, self.attributes)
        return self._vendored

    @cached_property
    def attributes(self) -> Attributes:
        """The tree's `.gitattributes` files that speak for the indexed paths."""
        return read_attributes(self.root, self.texts, self.attribute_dirs)

    @cached_property
    def documentation(self) -> Declared:
        """Paths the project declares documentation (`linguist-documentation`), and those it declares are not."""
        return self.attributes.declared("linguist-documentation")

    @classmethod
    def build(
        cls,
        root: Path,
        paths: Iterable[str],
        *,
        definitions: Definitions | None = None,
        cache_dir: Path | None = None,
        max_file_bytes: int = 1_000_000,
        gate: Gate | None = None,
        attribute_dirs: Sequence[str] | None = None,
    ) -> Corpus:
        """Read and count every file once (cached by content hash under `cache_dir`), each through `gate` (default:
        the tree's own, `repomap.gate.Gate(root)`): a path it refuses (a link to a secret...) is left out.
        `attribute_dirs`: the directories holding a `.gitattributes`, when the walk found them."""
        cache = TermCache(cache_dir) if cache_dir is not None else None
        gate = gate or Gate(root)
        docs: list[FileDoc] = []
        texts: dict[str, str] = {}
        pending: dict[str, tuple[str, str, list[SymbolSpan]]] = {}
        for path in paths:
            try:
                data = gate.read_bytes(path, max_bytes=max_file_bytes)
            except Refused:
                continue
            if len(data) > max_file_bytes or looks_binary(data[:SNIFF_BYTES]):
                continue
            text = data.decode("utf-8", errors="replace")
            texts[path] = text
            found = definitions(path) if definitions is not None else None
            spans = spans_of(found) if found is not None else None
            sig = repr([(s.qualname, s.start_line, s.end_line) for s in spans]) if spans is not None else REGEX_SPANS
            key = hashlib.blake2b(data + sig.encode() + path.encode(), digest_size=16).hexdigest()
            pending[key] = (path, text, spans)
        hits = cache.get_many(list(pending)) if cache is not None else {}
        fresh: dict[str, tuple] = {}
        for key, (path, text, spans) in pending.items():
            value = hits.get(key)
            if value is None:
                if spans is None:
                    spans = regex_definitions(path, text)
                value = (*count_file(path, text, spans), [tuple(dataclasses.astuple(s)) for s in spans])
                fresh[key] = value
            terms, length, sym_terms, raw_spans = value
            docs.append(FileDoc(path, terms, length, [SymbolSpan(*s) for s in raw_spans], sym_terms))
        if cache is not None and fresh:
            cache.put_many(fresh)
        return cls(root, docs, texts, attribute_dirs)


def count_file(path: str, text: str, spans: list[SymbolSpan]) -> tuple[dict[str, int], int, list[dict[str, int]]]:
    """Term counts of a file (path terms doubled), its number of terms, and the term counts of each definition."""
    path_terms = count_terms(path.replace("/", " ").replace(".", " "))
    terms = count_terms(text)
    for t, n in path_terms.items():
        terms[t] = terms.get(t, 0) + 2 * n
    lines = text.split("\n")
    sym_terms = []
    for i, span in enumerate(spans):
        end = span.end_line
        # A container's own text stops where its first nested definition starts: methods get their own docs.
        for later in spans[i + 1:]:
            if later.start_line > span.end_line:
                break
            if later.start_line > span.start_line:
                end = min(end, later.start_line - 1)
                break
        body = "\n".join(lines[span.start_line - 1: end])
        st = count_terms(body)
        for t, n in count_terms(span.qualname.replace(".", " ")).items():
            st[t] = st.get(t, 0) + 2 * n
        for t, n in path_terms.items():
            st[t] = st.get(t, 0) + n
        sym_terms.append(st)
    return terms, sum(terms.values()), sym_terms


def spans_of(defs: Sequence[object]) -> list[SymbolSpan]:
    """Definitions (the repo map's, or any objects with their fields) as spans in line order, outer first."""
    out = []
    for d in defs:
        kind = getattr(d, "kind", "function")
        out.append(
            SymbolSpan(
                name=getattr(d, "name"),
                qualname=getattr(d, "qualname", None) or getattr(d, "name"),
                kind=str(getattr(kind, "value", kind)),
                start_line=int(getattr(d, "start_line")),
                end_line=int(getattr(d, "end_line")),
            )
        )
    out.sort(key=lambda s: (s.start_line, -s.end_line))
    return out


_PY_DEF = re.compile(r"^([ \t]*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)", re.M)
_KEYWORD_DEF = re.compile(
    r"^[ \t]*(?:[a-z]+[ \t]+)*?(fun|def|defp|defmodule|func|function|fn|sub|proc|class|object|interface|trait|struct|"
    r"enum|protocol|extension|module|record|message|service|rule)\s+([A-Za-z_][\w.]*)", re.M)
"""A definition by its keyword, in languages with no grammar here (`repomap.languages.TEXT_SOURCE_EXTENSIONS`)."""
_FUNCTION_KEYWORDS = frozenset("function fn func fun def defp sub proc rule".split())
_BRACE_DEF = re.compile(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:public\s+|private\s+|protected\s+|"
    r"static\s+|final\s+|abstract\s+)*"
    r"(?:(function|class|interface|struct|enum|trait|impl|fn|func|type)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"
    r"|[\w<>\[\],\s*&:]+?\s+\**([A-Za-z_]\w*)\s*\([^;{}]*\)\s*(?:const\s*)?(?:throws [\w., ]+)?\s*\{)",
    re.M,
)


REGEX_SPANS = "regex-v3"
"""What keys the cached counts of a file whose definitions are found by pattern: bump it when `regex_definitions`
changes (v2: methods that take no keyword, `_KEYLESS_METHODS`; v3: the last definition ends on the file's last
line, not on the nothing after its final newline)."""
_KEYLESS_METHODS = frozenset(".dart .cu .cuh .groovy".split())
"""Languages with no grammar here whose methods take no keyword (`int total(...) {`): their definitions are found by
keyword and by braces both."""
_NOT_NAMES = frozenset("if for foreach while switch return catch else using lock fixed".split())


def regex_definitions(path: str, text: str) -> list[SymbolSpan]:
    """Definitions by pattern (no repo map, or no grammar): Python by indent, no grammar by keyword (and braces for
    `_KEYLESS_METHODS`), else braces."""
    lines = text.split("\n")
    spans: list[SymbolSpan] = []
    if path.endswith((".py", ".pyi")):
        stack: list[tuple[int, str]] = []
        found = []
        for m in _PY_DEF.finditer(text):
            indent = len(m.group(1).expandtabs())
            line = text.count("\n", 0, m.start()) + 1
            while stack and stack[-1][0] >= indent:
                stack.pop()
            qual = ".".join([s[1] for s in stack] + [m.group(3)])
            found.append((line, indent, m.group(3), qual, m.group(2)))
            stack.append((indent, m.group(3)))
        for idx, (line, indent, name, qual, kw) in enumerate(found):
            end = len(lines)
            for j in range(line, len(lines)):
                s = lines[j]
                if s.strip() and not s.lstrip().startswith("#") and len(s) - len(s.lstrip()) <= indent:
                    end = j
                    break
            while end > line and not lines[end - 1].strip():
                end -= 1
            spans.append(SymbolSpan(name, qual, "class" if kw == "class" else "function", line, max(line, end)))
        return spans
    keyword = is_text_source(path)
    keyless = keyword and os.path.splitext(path)[1].lower() in _KEYLESS_METHODS
    patterns = [_KEYWORD_DEF, _BRACE_DEF] if keyless else [_KEYWORD_DEF] if keyword else [_BRACE_DEF]
    found: dict[int, tuple[str, str]] = {}
    for pattern in patterns:
        for m in pattern.finditer(text):
            name = m.group(2) if pattern is _KEYWORD_DEF else m.group(2) or m.group(3)
            if name and name not in _NOT_NAMES:
                # a keyless method's match may begin at its attributes or a blank line above: its line is its name's
                at = m.start(2 if m.group(2) else 3) if keyless and pattern is _BRACE_DEF else m.start()
                found.setdefault(text.count("\n", 0, at) + 1, (name, m.group(1) or "function"))
    starts = [(line, name, kw) for line, (name, kw) in sorted(found.items())]
    for idx, (line, name, kw) in enumerate(starts):
        end = starts[idx + 1][0] - 1 if idx + 1 < len(starts) else line_count(text)
        kind = "function" if kw in _FUNCTION_KEYWORDS else "class"
        spans.append(SymbolSpan(name.rpartition(".")[2], name, kind, line, max(line, end)))
    return spans

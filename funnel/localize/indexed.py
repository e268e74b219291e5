"""The corpus of a large tree read from its persisted index (`corpus_index`): the same interface as
`funnel.localize.corpus.Corpus`, loaded on use.

File texts are read through the gate when a signal or the writer asks for one; a literal is looked for with
ripgrep over the corpus' own files and confirmed in the texts it names, so the answer is the in-memory one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import multiprocessing
import os
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING

from funnel.localize.corpus import Corpus, SymbolSpan, count_file, regex_definitions, spans_of
from funnel.localize.corpus_index import (
    GENERATED,
    OWN_VERSION,
    PATH_TERM,
    SKIPPED,
    SKIPPED_RECORD,
    CorpusIndex,
    FileRecord,
    IndexStats,
    index_path,
)
from funnel.localize.foreign import declares_version, generated_paths, is_generated, vendored_paths
from funnel.tools._rg import find_rg
from repomap.encoding import SNIFF_BYTES, looks_binary
from repomap.gate import Gate, Refused
from repomap.languages import is_text_source
from repomap.walk import RACY_NS, WalkedFile

if TYPE_CHECKING:
    from repomap import RepoMap

__all__ = ("IndexedCorpus", "open_indexed")

_BATCH = 400
"""Files per batch of the counting pool (a tree of fewer is counted in process)."""
_ARG_BYTES = 400_000
"""Bytes of paths per ripgrep call (well under the kernel's limit on a command line)."""


class _Texts(Mapping[str, str]):
    """File texts of a corpus, read through the gate on first use."""

    def __init__(self, gate: Gate, paths: dict[str, int], max_bytes: int) -> None:
        self._gate, self._paths, self._max = gate, paths, max_bytes
        self._read: dict[str, str] = {}

    def __getitem__(self, path: str) -> str:
        if path not in self._paths:
            raise KeyError(path)
        text = self._read.get(path)
        if text is None:
            try:
                data = self._gate.read_bytes(path, max_bytes=self._max)
            except Refused:
                data = b""
            text = self._read[path] = data.decode("utf-8", errors="replace")
        return text

    def __contains__(self, path: object) -> bool:
        return path in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


class _Doc:
    """One file of an indexed corpus: its path and length at hand, its counts and definitions loaded on use."""

    __slots__ = ("path", "length", "_doc", "_corpus")

    def __init__(self, path: str, length: int, doc: int, corpus: IndexedCorpus) -> None:
        self.path, self.length, self._doc, self._corpus = path, length, doc, corpus

    @property
    def terms(self) -> dict[str, int]:
        """Term counts of path and content."""
        return self._corpus.record(self._doc)[0]

    @property
    def symbol_terms(self) -> list[dict[str, int]]:
        """Term counts of each definition."""
        return self._corpus.record(self._doc)[1]

    @property
    def symbols(self) -> list[SymbolSpan]:
        """Definitions in line order."""
        return self._corpus.record(self._doc)[2]


class _Names(Mapping[str, list[tuple[int, int]]]):
    """Definition name → (file index, symbol index), looked up in the index one name at a time."""

    def __init__(self, corpus: IndexedCorpus) -> None:
        self._corpus = corpus
        self._known: dict[str, list[tuple[int, int]]] = {}

    def __getitem__(self, name: str) -> list[tuple[int, int]]:
        if name not in self._known:
            position = self._corpus.position
            rows = self._corpus.index.names([name]).get(name, [])
            self._known[name] = sorted((position[d], j) for d, j in rows if d in position)
        hits = self._known[name]
        if not hits:
            raise KeyError(name)
        return hits

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.get(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self._corpus.index.all_names())

    def __len__(self) -> int:
        return len(self._corpus.index.all_names())


class IndexedCorpus(Corpus):
    """A corpus whose counts, postings and names stay in its `CorpusIndex` until a query reads them."""

    def __init__(self, root: Path, index: CorpusIndex, paths: list[str], gate: Gate, max_file_bytes: int,
                 stats: IndexStats, attribute_dirs: Sequence[str] | None = None) -> None:
        rows = index.documents()
        kept = [p for p in paths if p in rows and not rows[p][2] & SKIPPED]
        self.index = index
        """The persisted index."""
        self.stats = stats
        """How the index was brought up to date for this corpus."""
        self.position = {rows[p][0]: i for i, p in enumerate(kept)}
        """Document id → index in `docs`."""
        self._records: dict[int, tuple[dict[str, int], list[dict[str, int]], list[SymbolSpan]]] = {}
        docs = [_Doc(p, rows[p][1], rows[p][0], self) for p in kept]
        super().__init__(root, docs, _Texts(gate, dict.fromkeys(kept, 0), max_file_bytes),  # type: ignore[arg-type]
                         attribute_dirs)
        self._generated = generated_paths([p for p in kept if rows[p][2] & GENERATED], self.attributes)
        self._vendored = vendored_paths(root, [p for p in kept if rows[p][2] & OWN_VERSION], self.attributes)
        self._names_view = _Names(self)

    def record(self, doc: int) -> tuple[dict[str, int], list[dict[str, int]], list[SymbolSpan]]:
        """(term counts, definition term counts, definitions) of one document."""
        if doc not in self._records:
            self._load([doc])
        return self._records[doc]

    def _load(self, docs: Iterable[int]) -> None:
        for doc, (terms, sym_terms, spans) in self.index.records(docs).items():
            self._records[doc] = (terms, sym_terms, [SymbolSpan(*s) for s in spans])

    def prefetch(self, positions: Iterable[int]) -> None:
        """Load the records of these files (by index in `docs`) in one query."""
        self._load(d._doc for i in positions if (d := self.docs[i])._doc not in self._records)  # type: ignore[attr-defined]

    def _find_postings(self, terms: list[str]) -> dict[str, list[tuple[int, int]]]:
        found, position = self.index.postings(terms), self.position
        return {t: sorted((position[d], n) for d, n in found.get(t, []) if d in position) for t in terms}

    def path_term_counts(self, terms: set[str]) -> dict[str, int]:
        """For each term, the number of files whose name or directory carries it, from the path-term postings."""
        found = self.postings([PATH_TERM + t for t in terms])
        return {t: len(found[PATH_TERM + t]) for t in terms}

    @property
    def names(self) -> Mapping[str, list[tuple[int, int]]]:
        """Every definition name → (file index, symbol index) of its definitions, in `docs` order."""
        return self._names_view

    def find_literal(self, needle: str) -> list[str]:
        """Paths of the files whose text contains `needle`, in `docs` order: ripgrep names the candidates, the
        gated texts confirm them."""
        if not _searchable(needle):
            return super().find_literal(needle)
        hits = _rg_files_with(self.root, [needle], list(self.texts))
        return [d.path for d in self.docs if d.path in hits and needle in self.texts[d.path]]

    def find_literals(self, needles: Sequence[str]) -> dict[str, list[str]]:
        """`find_literal` of each needle, with one ripgrep run over the tree for all of them."""
        plain = [n for n in dict.fromkeys(needles) if _searchable(n)]
        hits = _rg_files_with(self.root, plain, list(self.texts)) if plain else set()
        out = {n: [d.path for d in self.docs if d.path in hits and n in self.texts[d.path]] for n in plain}
        return {n: out[n] if n in out else self.find_literal(n) for n in needles}


def _searchable(needle: str) -> bool:
    """A needle ripgrep can look for as one fixed line (not empty, no line break or NUL)."""
    return bool(needle) and not any(c in needle for c in "\n\r\0")


def _rg_files_with(root: Path, needles: Sequence[str], paths: list[str]) -> set[str]:
    """The files of `paths` (relative to `root`) holding the bytes of any of `needles`, by ripgrep (fixed strings,
    every byte searched as is, no ignore rules: the list is the corpus')."""
    found: set[str] = set()
    patterns = [arg for needle in needles for arg in ("-e", needle)]
    base = [find_rg(), "--no-config", "--files-with-matches", "--fixed-strings", "--text", "--encoding", "none",
            "--no-ignore", "--hidden", "--no-messages", "--null", *patterns, "--"]
    chunk: list[str] = []
    size = 0
    for path in paths + [""]:
        if path and size + len(path) < _ARG_BYTES:
            chunk.append(path)
            size += len(path) + 1
            continue
        if chunk:
            done = subprocess.run(base + chunk, cwd=root, capture_output=True)
            found.update(p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p)
        chunk, size = ([path], len(path) + 1) if path else ([], 0)
    return found


def _record(gate: Gate, path: str, spans: list[SymbolSpan] | None, max_file_bytes: int) -> FileRecord:
    """Read and count one file (a record of `SKIPPED` when the gate refuses it, it is too large or binary); `spans`
    None: a file with no grammar, whose definitions are found by pattern."""
    try:
        data = gate.read_bytes(path, max_bytes=max_file_bytes)
    except Refused:
        return SKIPPED_RECORD
    if len(data) > max_file_bytes or looks_binary(data[:SNIFF_BYTES]):
        return SKIPPED_RECORD
    text = data.decode("utf-8", errors="replace")
    spans = regex_definitions(path, text) if spans is None else spans
    terms, length, sym_terms = count_file(path, text, spans)
    flags = (GENERATED if is_generated(text, path) else 0) | (OWN_VERSION if declares_version(path, text) else 0)
    return FileRecord(terms, length, sym_terms, [dataclasses.astuple(s) for s in spans], flags)


def _count(root: str, items: list[tuple[str, list[tuple] | None]], max_file_bytes: int) -> list[FileRecord]:
    """Records of a batch of (path, definition fields or None): the unit of work of the counting pool."""
    gate = Gate(Path(root))
    return [_record(gate, path, None if spans is None else [SymbolSpan(*s) for s in spans], max_file_bytes)
            for path, spans in items]


def _reader(root: Path, repo_map: RepoMap, max_file_bytes: int) -> Callable[[list[str]], Iterator[FileRecord]]:
    """Counts files in order, in a pool of processes (one per core) when there are many."""
    def read(paths: list[str]) -> Iterator[FileRecord]:
        items = [(p, None if is_text_source(p) else [dataclasses.astuple(s) for s in spans_of(repo_map.definitions(p))])
                 for p in paths]
        batches = [items[i: i + _BATCH] for i in range(0, len(items), _BATCH)]
        workers = min(len(batches), os.cpu_count() or 1)
        if workers < 2:
            for batch in batches:
                yield from _count(str(root), batch, max_file_bytes)
            return
        done = 0
        try:
            # forkserver: the service runs threads, which a forked child would inherit mid-flight
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
                for records in pool.map(_count, [str(root)] * len(batches), batches, [max_file_bytes] * len(batches)):
                    yield from records
                    done += 1
        except (OSError, RuntimeError, BrokenProcessPool):  # no pool here, or a worker died: count the rest here
            for batch in batches[done:]:
                yield from _count(str(root), batch, max_file_bytes)
    return read


def _text_key(gate: Gate, source: WalkedFile, max_file_bytes: int, now_ns: int) -> bytes:
    """The content key of a file the map does not parse: its size and mtime as the walk found them, or a digest of
    its bytes when it changed too recently for those to be trusted (empty when it cannot be read or is larger than
    the corpus reads)."""
    if now_ns - source.mtime_ns > RACY_NS:
        return b"stat" + source.size.to_bytes(8, "little") + source.mtime_ns.to_bytes(8, "little", signed=True)
    try:
        return hashlib.blake2b(gate.read_bytes(source.path, max_bytes=max_file_bytes), digest_size=16).digest()
    except (Refused, OSError):
        return b""


def open_indexed(root: Path, repo_map: RepoMap, cache_dir: Path, *, max_file_bytes: int = 1_000_000) -> IndexedCorpus:
    """The corpus of the map's tree, with the `RepoMap.text_sources` it has no grammar for, from its index in
    `cache_dir`, brought up to date first."""
    gate = Gate(root)
    sources = repo_map.text_sources
    paths = [f.path for f in repo_map.files] + [f.path for f in sources]
    now_ns = time.time_ns()
    texts = [(f.path, _text_key(gate, f, max_file_bytes, now_ns)) for f in sources]
    entries = sorted([(f.path, repo_map.content_key(f.path) or b"") for f in repo_map.files] + texts)
    tree_key = repo_map.tree_key
    if texts:
        tree_key = hashlib.blake2b(tree_key + b"".join(p.encode() + b"\0" + k for p, k in texts)).digest()
    index = CorpusIndex(index_path(cache_dir, root))
    stats = index.sync(entries, tree_key, _reader(root, repo_map, max_file_bytes))
    index.begin_read()
    return IndexedCorpus(root, index, paths, gate, max_file_bytes, stats, repo_map.attribute_dirs)

"""The reference every figure is read against: plain BM25 over whole files.

Query = the problem statement; document = path + text of every non-test source file in a language the repo
map parses. Tokens: runs of letters and digits, split again on camelCase and snake_case, lower-cased.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from funnel.localize.citations import outer_entity  # the ranker's own folding of nested definitions
from repomap.languages import EXTENSIONS
from repomap.walk import walk_files  # the one set of ignore rules
from schemas import AffectedFile, Diagnosis

SOURCE_EXTENSIONS: frozenset[str] = frozenset(EXTENSIONS)
"""Extensions of the languages the repo map parses (its tree-sitter grammars)."""

PYTHON_ONLY: frozenset[str] = frozenset({".py"})
"""The reference definition: every non-test `.py` file."""

TEST_DIRS = frozenset({"tests", "test", "testing", "__tests__", "spec"})
"""Directory names whose files count as tests."""

_TEST_FILE = re.compile(r"^(test_.*|.*_test\.[a-z]+|.*\.(test|spec)\.[a-z]+|conftest\.py)$")
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+[0-9]*(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")


def is_test_path(path: str) -> bool:
    """Whether a repository path is a test file (by directory or file name)."""
    parts = path.split("/")
    return any(part in TEST_DIRS for part in parts[:-1]) or bool(_TEST_FILE.match(parts[-1]))


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens: each alphanumeric run split on camelCase (snake_case splits on `_` already)."""
    tokens: list[str] = []
    for word in _WORD.findall(text):
        parts = _CAMEL.findall(word)
        if len(parts) > 1:
            tokens.extend(p.lower() for p in parts)
        else:
            tokens.append(word.lower())
    return tokens


@dataclass
class _TokenCache:
    """Tokens of file contents by content hash: consecutive commits of a repository share most files."""

    capacity: int = 60_000
    entries: OrderedDict[str, list[str]] = field(default_factory=OrderedDict)

    def get(self, data: bytes) -> list[str]:
        key = hashlib.blake2b(data, digest_size=16).hexdigest()
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
            return hit
        tokens = tokenize(data.decode("utf-8", errors="replace"))
        self.entries[key] = tokens
        if len(self.entries) > self.capacity:
            self.entries.popitem(last=False)
        return tokens


_CACHE = _TokenCache()


def source_files(root: Path, extensions: frozenset[str] = SOURCE_EXTENSIONS) -> list[str]:
    """Non-test source files under `root` that the repo map would walk, as sorted repository paths."""
    walked = walk_files(root, extensions=extensions, sniff=False)
    return [f.path for f in walked.files if not is_test_path(f.path)]


def _read(root: Path, rel: str) -> bytes:
    try:
        return (Path(root) / rel).read_bytes()
    except OSError:
        return b""


def _best(corpus: list[list[str]], keys: list[str], query: str, top: int) -> list[str]:
    """The `top` keys whose documents score best by BM25 against `query` (ties broken by key), positive only."""
    import bm25s  # lazy: only the BM25 baseline needs it, not every import of the eval

    query_tokens = tokenize(query)
    if not corpus or not query_tokens:
        return []
    os.environ.setdefault("DISABLE_TQDM", "1")
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    vocab = index.vocab_dict
    known = [t for t in query_tokens if t in vocab]
    if not known:
        return []
    scores = np.asarray(index.get_scores(known), dtype=np.float64)
    order = sorted(range(len(keys)), key=lambda i: (-scores[i], keys[i]))
    return list(dict.fromkeys(keys[i] for i in order if scores[i] > 0))[:top]  # a key may name several documents


def bm25_rank(
    root: Path, query: str, *, extensions: frozenset[str] = SOURCE_EXTENSIONS, top: int = 50
) -> list[str]:
    """The `top` files of `root` ranked by BM25 against `query`, best first (ties broken by path)."""
    paths = source_files(root, extensions)
    corpus = [tokenize(rel) + _CACHE.get(_read(root, rel)) for rel in paths]
    return _best(corpus, paths, query, top)


_ENTITY_KINDS = frozenset({"function", "method", "class", "struct", "interface", "enum", "trait", "type"})
"""Definition kinds that are a function-level location (constants, macros and modules are not)."""


def _entity_documents(data: bytes, definitions: list[Any]) -> list[tuple[str, list[str]]]:
    """(entity name, tokens) of one file: each function or method with what is nested in it, and each class-like
    definition with its own lines (those outside its functions)."""
    lines = data.decode("utf-8", errors="replace").splitlines()
    defs = [d for d in definitions if str(getattr(d.kind, "value", d.kind)) in _ENTITY_KINDS]
    names = [outer_entity(defs, k) for k in range(len(defs))]
    functions = [d for d, n in zip(defs, names) if n == d.qualname and str(getattr(d.kind, "value", d.kind))
                 in ("function", "method")]
    function_ids = {id(f) for f in functions}
    out = []
    for d, name in zip(defs, names):
        if name != d.qualname:
            continue  # nested in a function: part of that function's document
        rows = range(d.start_line, d.end_line + 1)
        if id(d) not in function_ids:
            inner = [f for f in functions if d.start_line <= f.start_line and f.end_line <= d.end_line]
            rows = [r for r in rows if not any(f.start_line <= r <= f.end_line for f in inner)]
        out.append((name, tokenize(name) + tokenize("\n".join(lines[r - 1] for r in rows if r <= len(lines)))))
    return out


_ENTITY_CACHE: OrderedDict[str, list[tuple[str, list[str]]]] = OrderedDict()
_ENTITY_CACHE_FILES = 20_000
"""Files whose definition documents are kept (by content and path) between instances of one process."""


def bm25_rank_functions(root: Path, query: str, *, extensions: frozenset[str] = SOURCE_EXTENSIONS,
                        top: int = 15) -> list[str]:
    """The `top` definitions of `root`'s non-test source files ranked by BM25 against `query`, as
    `path:qualified.name` (one document per function or method, nested functions included; one per class-like
    definition with the lines outside its functions; path and name are part of the document)."""
    from repomap import build_repo_map  # lazy: the map is only needed for the function ranking

    root = Path(root)
    repo_map = build_repo_map(root, token_budget=256)
    corpus: list[list[str]] = []
    keys: list[str] = []
    for rel in source_files(root, extensions):
        data = _read(root, rel)
        key = hashlib.blake2b(data + rel.encode(), digest_size=16).hexdigest()
        docs = _ENTITY_CACHE.get(key)
        if docs is None:
            docs = _ENTITY_CACHE[key] = _entity_documents(data, repo_map.definitions(rel))
            if len(_ENTITY_CACHE) > _ENTITY_CACHE_FILES:
                _ENTITY_CACHE.popitem(last=False)
        path_tokens = tokenize(rel)
        for name, tokens in docs:
            keys.append(f"{rel}:{name}")
            corpus.append(path_tokens + tokens)
    return _best(corpus, keys, query, top)


@dataclass
class BaselineResult:
    """An InvestigationResult look-alike whose diagnosis ranks files by BM25 (used to check the runner end to end)."""

    diagnosis: object
    """The Diagnosis: one affected file per ranked path, no symbol."""
    report_markdown: str = ""
    """Empty: BM25 writes no report."""
    events: list[object] = field(default_factory=list)
    """Empty: BM25 makes no tool calls."""


def bm25_investigate(report: object, root: Path, **_: object) -> BaselineResult:
    """Rank files with BM25 and present them as a Diagnosis, in the shape of `funnel.investigate_sync`."""
    ranked = bm25_rank(Path(root), getattr(report, "text", str(report)), top=10)
    return BaselineResult(Diagnosis(affected_files=[AffectedFile(path=p, line_start=1, line_end=1) for p in ranked]))

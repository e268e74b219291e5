"""Rank files and symbols: personalized PageRank (numpy power iteration) over the reference graph.

The graph (`repomap.graph`): file A referencing a name that file B defines gives an edge A→B weighted by how
often and how (a base class counts more than a call), damped for names defined in many files, private names
and names every file uses; imports that resolve to a module path give a direct edge. Everything is ordered by
path and by name, so the result does not depend on hash seeds.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from repomap.focus import Focus
from repomap.frames import innermost_first, is_library_path, normalize_frame_path
from repomap.graph import Graph, build_graph
from repomap.graph_tables import module_keys, normalize_import

__all__ = ("Graph", "Ranking", "build_graph", "module_keys", "pagerank", "personalization", "rank")

DAMPING = 0.85
"""PageRank damping factor."""
PATH_WEIGHT = 10.0
"""Personalization weight of a file mentioned by path or in a stack frame."""
IDENT_WEIGHT = 1.0
"""Personalization weight, split among its definers, of a mentioned identifier."""

_RANK_VERSION = 1
"""Bump when PageRank or the symbol flow changes: stored results are keyed by it."""
_MAX_ITERATIONS = 60
_TOLERANCE = 1e-7
"""L1 change between iterations at which PageRank stops (scores are compared, not printed, at this precision)."""
_CODE_LIKE = re.compile(r"[_.]|[a-z][A-Z]|^[A-Z][a-z]+[A-Z]|\d")


def pagerank(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, personal: np.ndarray,
             out: np.ndarray | None = None) -> np.ndarray:
    """Personalized PageRank by power iteration; dangling mass returns to the personalization vector. `out` is
    each file's outgoing weight (`np.bincount(src, weights=weight, minlength=n)`) when the caller has it."""
    if n == 0:
        return np.zeros(0)
    p = personal / personal.sum()
    if out is None:
        out = np.bincount(src, weights=weight, minlength=n)
    share = weight / np.where(out[src] > 0, out[src], 1.0)
    dangling = out == 0
    r = p.copy()
    # one buffer for the per-edge flow: the same products and the same per-target summation order (bincount adds
    # in edge order) as `r[src] * share`, without allocating and faulting in a fresh edge-sized array per step
    flow_in = np.empty(len(src), dtype=np.float64)
    for _ in range(_MAX_ITERATIONS):
        np.take(r, src, out=flow_in, mode="clip")  # indices are valid: "clip" skips the buffered bounds check
        np.multiply(flow_in, share, out=flow_in)
        flow = np.bincount(dst, weights=flow_in, minlength=n)
        new = DAMPING * (flow + r[dangling].sum() * p) + (1.0 - DAMPING) * p
        delta = np.abs(new - r).sum()
        r = new
        if delta < _TOLERANCE:
            break
    return r


def _norm_path(text: str) -> list[str]:
    text = text.replace("\\", "/").strip().strip("'\"`()[],:")
    return [part for part in text.split("/") if part not in ("", ".")]


def match_path(graph: Graph, text: str) -> list[int]:
    """Files a mentioned path refers to: the longest matching suffix by whole components."""
    parts = _norm_path(text)
    for k in range(len(parts), 0, -1):
        hits = graph.suffixes.get("/".join(parts[-k:]))
        if hits:
            if k == 1 and len(hits) > 3:
                return []
            return hits
    return []


def personalization(graph: Graph, focus: Focus | None) -> tuple[np.ndarray, set[str]]:
    """The personalization vector of a focus (zeros when nothing matches) and the mentioned names."""
    n = len(graph.paths)
    p = np.zeros(n, dtype=np.float64)
    mentioned: set[str] = set()
    if focus is None or focus.is_empty:
        return p, mentioned

    # identifier hits go to `q` first: a file defining many words of the report gains with diminishing returns
    q = np.zeros(n, dtype=np.float64)

    def add_files(files: list[int], weight: float, target: np.ndarray = p) -> None:
        for i in files:
            target[i] += weight / len(files)

    def add_definers(name: str, weight: float, *, top_level: bool = False) -> None:
        files = graph.definers(name, top_level=top_level)
        if 0 < len(files) <= 20:
            add_files(files, weight, q)

    def add_module(module: str, weight: float) -> bool:
        files = graph.module_files.get(normalize_import(module))
        if files and len(files) <= 3:
            add_files(files, weight)
            return True
        return False

    for text in focus.paths:
        add_files(match_path(graph, normalize_frame_path(text)), PATH_WEIGHT)
    frames = innermost_first([f for f in focus.frames if not is_library_path(f.path)])
    for depth, frame in enumerate(frames):
        # innermost frames point closest to the failure
        weight = PATH_WEIGHT * (1.0 + (len(frames) - 1 - depth) / len(frames))
        add_files(match_path(graph, normalize_frame_path(frame.path)), weight)
        if frame.function:
            name = frame.function.replace("::", ".").rpartition(".")[2]
            mentioned.add(name)
            add_definers(name, IDENT_WEIGHT)
    # words that only occur as parts of mentioned paths (`home`, `site`, `sympify.py`) say nothing more
    path_words: set[str] = set()
    for text in list(focus.paths) + [f.path for f in focus.frames]:
        for part in _norm_path(text):
            path_words.add(part)
            path_words.add(part.rpartition(".")[0] or part)
    code_idents = set(getattr(focus, "code_identifiers", ()))
    for module in getattr(focus, "imports", ()):
        add_module(module, 3.0 * IDENT_WEIGHT)
    for name in list(getattr(focus, "imported_names", ())) + list(getattr(focus, "errors", ())):
        mentioned.add(name)
        add_definers(name, 2.0 * IDENT_WEIGHT)
    for ident in focus.identifiers:
        if ident in path_words:
            continue
        ident = ident.replace("::", ".")
        parts = ident.split(".")
        code_like = ident in code_idents or bool(_CODE_LIKE.search(ident))
        weight = IDENT_WEIGHT * (3.0 if ident in code_idents else 1.5 if code_like else 0.2)
        if code_like:
            mentioned.add(parts[-1])
            if len(parts) > 1:
                mentioned.add(".".join(parts[-2:]))
        if len(parts) > 1:
            if add_module(ident, weight):
                continue  # `a.b.units` named a module, not things called `units`
            add_module(".".join(parts[:-1]), weight)
        # a plain English word ("units", "version") may name a module-level definition, hardly a method
        add_definers(parts[-1], weight, top_level=not code_like)
    p += np.sqrt(q)
    return p, mentioned


@dataclass
class Ranking:
    """Scores of one focus over one graph."""

    file_scores: np.ndarray
    """Score per file id (PageRank plus the personalization share)."""
    symbol_keys: np.ndarray
    """Sorted keys `file id * name count + name id` of referenced symbols."""
    symbol_values: np.ndarray
    """Incoming reference weight per key of `symbol_keys`."""
    mentioned: set[str]
    """Names and `Class.member` pairs the focus mentions."""

    def incoming(self, keys: np.ndarray) -> np.ndarray:
        """Incoming reference weight of each `file id * name count + name id` key (0 when unreferenced)."""
        if not len(self.symbol_keys) or not len(keys):
            return np.zeros(len(keys))
        pos = np.searchsorted(self.symbol_keys, keys)
        pos = np.minimum(pos, len(self.symbol_keys) - 1)
        return np.where(self.symbol_keys[pos] == keys, self.symbol_values[pos], 0.0)


class RankStore(Protocol):
    """Where PageRank results are kept between processes (`repomap.cache.TagCache`)."""

    def load_result(self, key: bytes) -> bytes | None: ...

    def store_result(self, key: bytes, data: bytes) -> None: ...


def _walk_graph(graph: Graph, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PageRank for the personalization `base` and the rank flowing into each symbol key."""
    n = len(graph.paths)
    if not n:
        return np.zeros(0), np.zeros(0, dtype=np.float64)
    out = np.bincount(graph.src, weights=graph.weight, minlength=n)
    r = pagerank(n, graph.src, graph.dst, graph.weight, base, out)
    values = np.zeros(0, dtype=np.float64)
    if len(graph.sym_src):
        contrib = r[graph.sym_src] * graph.sym_weight / np.where(out[graph.sym_src] > 0, out[graph.sym_src], 1.0)
        values = np.add.reduceat(contrib, graph.sym_starts)
    return r, values


def _cached_walk(graph: Graph, base: np.ndarray, store: RankStore | None, graph_key: bytes | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    if store is None or graph_key is None:
        return _walk_graph(graph, base)
    key = hashlib.blake2b(f"rank-v{_RANK_VERSION}".encode() + graph_key + base.tobytes(), digest_size=16).digest()
    n, m = len(graph.paths), len(graph.sym_keys)
    blob = store.load_result(key)
    if blob is not None and len(blob) == 8 * (n + m):
        data = np.frombuffer(blob, dtype=np.float64)
        return data[:n], data[n:]
    r, values = _walk_graph(graph, base)
    store.store_result(key, r.tobytes() + values.tobytes())
    return r, values


def rank(graph: Graph, focus: Focus | None, store: RankStore | None = None, graph_key: bytes | None = None) -> Ranking:
    """Rank the graph's files and symbols for a focus; with `store` and `graph_key` (a digest of the graph's
    tree) the PageRank of a personalization seen before is read back instead of iterated (the same floats)."""
    n = len(graph.paths)
    p, mentioned = personalization(graph, focus)
    has_focus = bool(p.sum() > 0)
    base = p if has_focus else np.ones(n, dtype=np.float64)
    r, values = _cached_walk(graph, base, store, graph_key)
    scores = r + (p / p.sum() if has_focus else 0.0)
    keys = graph.sym_keys if len(values) else np.zeros(0, dtype=np.int64)
    return Ranking(scores, keys, values, mentioned)

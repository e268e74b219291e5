"""The reference graph of a tree: `assemble` turns the per-file tables of `repomap.graph_tables` into the `Graph`
with numpy alone; its snapshot is stored as parts (`repomap.graph_store`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from repomap import graph_store as _store
from repomap.graph_store import Names
from repomap.graph_tables import IMPORT, Tables, tables_from_tags
from repomap.tags import FileTags

KIND_WEIGHTS: tuple[float, ...] = (1.0, 1.0, 2.0, 1.5, 1.0, 0.5)
"""Weight of a reference by kind code (call, import, base, decorator, annotation, member call)."""
MEMBER_CALL = 5
"""Kind code of a call through an attribute (`x.save()`), as `repomap.tags` stores it."""
STRICT_MEMBER_FAMILIES = frozenset({"python", "js"})
"""Families where a bare name (`save()`) can not mean a method: it needs `self.`/`this.`."""
MODULE_IMPORT_WEIGHT = 2.0
"""Weight of an import that resolves to a file (`import a.b`, `from ./util`)."""


class Graph:
    """The file graph of one tree, independent of any focus. A graph loaded from a snapshot reads each array from
    its stored part on first use (`_ARRAYS`).

    Arrays: `src`, `dst`, `weight` (one edge per file pair); `sym_src`, `sym_weight` (referencing file and weight of
    each (referencing file, defining file, name) edge, grouped by `sym_keys`); `sym_keys` (sorted distinct
    `name position * file count + defining file`, see `symbol_keys`) and `sym_starts` (where each key's edges start);
    `def_rank`, `def_file`, `def_member` (name position, defining file and "only inside another definition" of
    each (name, defining file) pair, sorted by position then file); `file_defs` and `file_errors` (definitions and
    syntax errors per file, for the build statistics).
    """

    def __init__(self, paths: list[str], families: list[str], names: Names, module_files, suffixes,
                 arrays: dict[str, np.ndarray] | None = None, load=None) -> None:
        self.paths = paths
        """Indexed files, sorted; a file's index is its node id."""
        self.families = families
        """Language family per file."""
        self.names = names
        """Name positions in (family, name) order."""
        self.module_files = module_files
        """Module path suffixes (`core.basic`, `basic`) → files (a dict, or a `StoredIndex`)."""
        self.suffixes = suffixes
        """Path suffixes by whole components (`basic.py`, `core/basic.py`) → files."""
        self.key: bytes | None = None
        """A digest of the tree the graph is of (its paths and content keys), None when not computed."""
        self._load = load
        for name, value in (arrays or {}).items():
            setattr(self, name, value)

    def __getattr__(self, name: str) -> np.ndarray:
        load = self.__dict__.get("_load")
        if name not in _ARRAYS or load is None:
            raise AttributeError(name)
        value = load(name)
        setattr(self, name, value)
        return value

    def symbol_keys(self, file: int, names: list[str]) -> np.ndarray:
        """The `sym_keys` key of each name as defined in `file` (-1 for a name the graph does not know)."""
        positions = self.names.positions(self.families[file], names)
        if not len(positions):
            return positions
        return np.where(positions >= 0, positions * len(self.paths) + file, -1)

    def definers(self, name: str, *, top_level: bool = False) -> list[int]:
        """Files defining `name` (in any language family), in path order; only at module level with `top_level`."""
        out: list[int] = []
        for fam in sorted(set(self.families)):
            position = self.names.position(fam, name)
            if position is not None:
                lo = int(np.searchsorted(self.def_rank, position, side="left"))
                hi = int(np.searchsorted(self.def_rank, position, side="right"))
                files = self.def_file[lo:hi]
                if top_level:
                    files = files[~self.def_member[lo:hi]]
                out.extend(files.tolist())
        return sorted(out)


_ARRAYS = ("src", "dst", "weight", "sym_src", "sym_weight", "sym_keys", "sym_starts", "def_rank", "def_file",
           "def_member", "file_defs", "file_errors")


def assemble(t: Tables) -> Graph:
    """The reference graph of the tables; names link only within a language family."""
    paths, families = t.paths, t.families
    n = len(paths)
    nf = max(n, 1)
    n_names = max(len(t.private), 1)
    name_order = t.order if len(t.order) else np.zeros(1, dtype=np.int64)
    by_order = np.empty(n_names, dtype=np.int64)
    by_order[name_order] = np.arange(len(name_order), dtype=np.int64)
    # (name, defining file) pairs in (family, name) order, then by file
    d_file = np.repeat(np.arange(n, dtype=np.int64), t.def_counts)
    d_rank = name_order[t.d_name]
    order = np.lexsort((d_file, d_rank))
    d_rank, d_file, d_member = d_rank[order], d_file[order], t.d_member[order]
    strict = np.array([fam in STRICT_MEMBER_FAMILIES for fam in families], dtype=bool)
    n_def = np.bincount(t.d_name, minlength=n_names).astype(np.float64)
    defined = n_def > 0

    file_arr = np.repeat(np.arange(n, dtype=np.int64), t.ref_counts)
    nid_arr = np.where(defined[t.r_name], t.r_name, -1) if len(t.r_name) else np.zeros(0, np.int64)
    m_src, m_dst, m_w = _import_edges(t, file_arr, nid_arr, defined)
    r_rank, r_file, r_plain, row_w = _reference_rows(t, file_arr, nid_arr, n_def, name_order, by_order)
    s_src, s_dst, pair, s_w = _symbol_edges(r_rank, r_file, r_plain, row_w, d_rank, d_file, d_member, strict, n_names)

    all_src = np.concatenate([s_src, m_src])
    all_dst = np.concatenate([s_dst, m_dst])
    all_w = np.concatenate([s_w, m_w])
    if len(all_src):
        uniq, inverse = np.unique(all_src * nf + all_dst, return_inverse=True)
        w = np.bincount(inverse, weights=all_w, minlength=len(uniq))
        src, dst = uniq // nf, uniq % nf
    else:
        src = dst = np.zeros(0, dtype=np.int64)
        w = np.zeros(0, dtype=np.float64)
    head = np.ones(len(pair), dtype=bool)
    head[1:] = pair[1:] != pair[:-1]
    sym_starts = np.nonzero(head)[0]
    sym_keys = d_rank[pair[sym_starts]] * nf + s_dst[sym_starts]
    arrays = dict(src=src, dst=dst, weight=w, sym_src=s_src, sym_weight=s_w, sym_keys=sym_keys, sym_starts=sym_starts,
                  def_rank=d_rank, def_file=d_file, def_member=d_member, file_defs=t.file_defs, file_errors=t.file_errors)
    return Graph(paths, families, Names(t.vocab, name_order), t.module_files, t.suffixes, arrays)


_EMPTY_EDGES = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))


def _import_edges(t: Tables, file_arr: np.ndarray, nid_arr: np.ndarray,
                  defined: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Imports of module paths: a direct edge (source, target file, weight) to the module's file, summed per file
    pair; and, in `nid_arr` (changed in place), each such import read as a reference to the path's last component
    when a file defines that name."""
    n, n_names = len(t.paths), max(len(t.private), 1)
    if not t.imports or not len(nid_arr):
        return _EMPTY_EDGES
    is_mod = np.zeros(n_names, dtype=bool)
    tail = np.full(n_names, -1, dtype=np.int64)
    n_targets = np.zeros(n_names, dtype=np.int64)
    first_target = np.zeros(n_names, dtype=np.int64)
    flat_targets: list[int] = []
    for nid, (norm, tail_id) in t.imports.items():
        is_mod[nid] = True
        tail[nid] = tail_id
        targets = t.module_files.get(norm)
        if targets and len(targets) <= 3:
            n_targets[nid] = len(targets)
            first_target[nid] = len(flat_targets)
            flat_targets.extend(targets)
    ks = np.nonzero((t.r_kind == IMPORT) & (nid_arr < 0) & is_mod[t.r_name])[0]
    if not len(ks):
        return _EMPTY_EDGES
    imported = t.r_name[ks]
    edges = _EMPTY_EDGES
    cnt = n_targets[imported]
    total = int(cnt.sum())
    if total:
        rep = np.repeat(np.arange(len(ks)), cnt)
        offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        e_src = file_arr[ks][rep]
        e_dst = np.array(flat_targets, dtype=np.int64)[first_target[imported][rep] + offs]
        e_w = MODULE_IMPORT_WEIGHT / cnt[rep].astype(np.float64)
        own = e_src != e_dst
        e_src, e_dst, e_w = e_src[own], e_dst[own], e_w[own]
        if len(e_src):
            uniq, inverse = np.unique(e_src * n + e_dst, return_inverse=True)
            edges = (uniq // n, uniq % n, np.bincount(inverse, weights=e_w, minlength=len(uniq)))
    tails = tail[imported]
    nid_arr[ks] = np.where((tails >= 0) & defined[np.maximum(tails, 0)], tails, -1)
    return edges


def _reference_rows(t: Tables, file_arr: np.ndarray, nid_arr: np.ndarray, n_def: np.ndarray, name_order: np.ndarray,
                    by_order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One row per (name, referencing file, plain or member access) of the references to defined names, names in
    (family, name) order (`x.save()` may mean a method, `save()` may not): each row's name position, file, whether
    the access is plain, and its weight."""
    n, n_names = len(t.paths), max(len(t.private), 1)
    nf = max(n, 1)
    valid = nid_arr >= 0
    v_name = nid_arr[valid]
    weights = np.asarray(KIND_WEIGHTS)[t.r_kind[valid]] * t.r_count.astype(np.float64)[valid]
    member_ref = (t.r_kind[valid] == MEMBER_CALL).astype(np.int64)
    uniq, inverse = np.unique((name_order[v_name] * nf + file_arr[valid]) * 2 + member_ref, return_inverse=True)
    ref_w = np.bincount(inverse, weights=weights, minlength=len(uniq))
    r_plain = (uniq % 2) == 0
    pair_key = uniq // 2
    r_rank, r_file = pair_key // nf, pair_key % nf
    r_name = by_order[r_rank]
    first = np.ones(len(pair_key), dtype=bool)
    first[1:] = pair_key[1:] != pair_key[:-1]
    df = np.bincount(r_name[first], minlength=n_names).astype(np.float64)
    # name damping: spread over definers, fewer points for private names and names (nearly) everyone uses
    private = t.private if len(t.private) else np.ones(n_names, dtype=np.float64)
    idf = np.log1p(n / np.maximum(df, 1.0)) / math.log1p(max(n, 1))
    many = np.where(n_def > 5, 0.2, 1.0)
    name_w = private * idf * many / np.maximum(n_def, 1.0)
    return r_rank, r_file, r_plain, np.sqrt(ref_w) * name_w[r_name]


def _symbol_edges(r_rank: np.ndarray, r_file: np.ndarray, r_plain: np.ndarray, row_w: np.ndarray, d_rank: np.ndarray,
                  d_file: np.ndarray, d_member: np.ndarray, strict: np.ndarray,
                  n_names: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Symbol edges (source, target, definition pair, weight), one per (definition pair, reference row of its
    name): grouped by definition pair, each group's rows by file. A plain call does not reach a member definition
    in a strict family, and a file does not reference itself."""
    if not (len(r_file) and len(d_rank)):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, np.zeros(0, dtype=np.float64)
    per_rank = np.bincount(r_rank, minlength=n_names)
    cnt = per_rank[d_rank]
    total = int(cnt.sum())
    pair = np.repeat(np.arange(len(d_rank)), cnt)
    offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    row = np.repeat((np.cumsum(per_rank) - per_rank)[d_rank], cnt) + offs
    s_src, s_dst = r_file[row], d_file[pair]
    keep = (s_src != s_dst) & ~(r_plain[row] & d_member[pair] & strict[s_src])
    return s_src[keep], s_dst[keep], pair[keep], row_w[row[keep]]


def build_graph(paths: list[str], tags: Sequence[FileTags], families: list[str]) -> Graph:
    """The reference graph of files `paths` (sorted) with their tags; names link only within a language family."""
    return assemble(tables_from_tags(paths, tags, families, [b""] * len(paths)))


def graph_parts(graph: Graph) -> dict[str, bytes]:
    """The stored parts of a graph snapshot (`repomap.graph_store`), its header under `header`."""
    return _store.dump_parts(graph, _ARRAYS)


def load_graph(paths: list[str], read: Callable[[str], bytes | None], fallback: Callable[[], Graph]) -> Graph:
    """The graph of files `paths` from the parts of its snapshot, arrays read on first use (from `fallback()`
    when a part is gone by then); raises ValueError for a missing or outdated snapshot."""
    return _store.load_parts(paths, read, Graph, fallback)

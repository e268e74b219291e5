"""The reference graph of a tree, built from per-file tables that a few changed files can be patched into.

`tables_from_tags` aggregates the tags of every file into flat per-file rows (the names a file defines, the
names it references, by kind and count), with names interned in a vocabulary; `patch_tables` replaces the
rows of changed, added and removed files in a stored copy of those tables; `assemble` turns tables into the
`Graph` with numpy alone. A name's id is arbitrary (its place in the vocabulary), but wherever the order of
names decides the order of a floating-point sum, names are ordered by (family, name): a patched table and a
fresh one give bit-identical graphs.
"""

from __future__ import annotations

import math
import pickle
import re
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from repomap import graph_store as _store
from repomap.graph_store import Names
from repomap.tags import FileTags

KIND_WEIGHTS: tuple[float, ...] = (1.0, 1.0, 2.0, 1.5, 1.0, 0.5)
"""Weight of a reference by kind code (call, import, base, decorator, annotation, member call)."""
IMPORT = 1
"""Kind code of an import, as `repomap.tags` stores it."""
MEMBER_CALL = 5
"""Kind code of a call through an attribute (`x.save()`), as `repomap.tags` stores it."""
STRICT_MEMBER_FAMILIES = frozenset({"python", "js"})
"""Families where a bare name (`save()`) can not mean a method: it needs `self.`/`this.`."""
MODULE_IMPORT_WEIGHT = 2.0
"""Weight of an import that resolves to a file (`import a.b`, `from ./util`)."""

_COUNT_DTYPE = np.dtype(f"u{array('I').itemsize}")
_SOURCE_SUFFIX = re.compile(r"\.(py|js|jsx|ts|tsx|mjs|cjs|h|hpp|hh|rb|go|rs)$")


def module_keys(path: str) -> list[str]:
    """Module-style names a file answers to: `pkg/sub/mod.py` → `pkg.sub.mod`, `sub.mod`, `mod`."""
    stem, dot, _ext = path.rpartition(".")
    if not dot:
        stem = path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] in ("__init__", "index", "mod", "lib"):
        parts = parts[:-1] or parts
    return [".".join(parts[i:]) for i in range(len(parts))]


def normalize_import(name: str) -> str:
    """An imported module path as dotted components: `./util.js` → `util`, `a::b` → `a.b`."""
    name = name.replace("::", ".").replace("/", ".").replace("\\", ".")
    return _SOURCE_SUFFIX.sub("", name).strip(".")


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


@dataclass
class Tables:
    """What the graph of a tree is assembled from, as rows grouped by file in path order."""

    paths: list[str]
    """Indexed files, sorted."""
    families: list[str]
    """Language family per file."""
    keys: list[bytes]
    """Cache key (content hash) per file: a file whose key changed has stale rows."""
    vocab: dict[str, dict[str, int]]
    """Language family → name → name id (ids are dense, in order of first sight)."""
    order: np.ndarray
    """Per name id, its position in (family, name) order: the order of floating-point sums."""
    private: np.ndarray
    """Per name id, its damping as a private (`_x` 0.3) or dunder / very short name (0.1), else 1."""
    imports: dict[int, tuple[str, int]]
    """Name id of an imported module path → (its dotted form, the name id of its last component)."""
    def_counts: np.ndarray
    """Per file, how many rows of `d_name` it has."""
    d_name: np.ndarray
    """Distinct names each file defines, in order of first definition."""
    d_member: np.ndarray
    """Per row of `d_name`: defined only inside another definition."""
    ref_counts: np.ndarray
    """Per file, how many rows of `r_name` it has."""
    r_name: np.ndarray
    """Distinct (name, kind) references of each file: the name id."""
    r_kind: np.ndarray
    """Kind code per row of `r_name`."""
    r_count: np.ndarray
    """How often per row of `r_name`."""
    module_files: dict[str, list[int]]
    """As `Graph.module_files` (depends on the paths only)."""
    suffixes: dict[str, list[int]]
    """As `Graph.suffixes`."""
    file_defs: np.ndarray
    """As `Graph.file_defs`."""
    file_errors: np.ndarray
    """As `Graph.file_errors`."""


class _Interner:
    """Name ids for a vocabulary that grows: new (family, name) pairs get the next id."""

    def __init__(self, vocab: dict[str, dict[str, int]], size: int) -> None:
        self.vocab = vocab
        self.size = size
        self.new: list[str] = []
        """Names added, by id from the size at start."""

    def ids(self, family: str, names: list[str]) -> list[int]:
        table = self.vocab.get(family)
        if table is None:
            table = self.vocab[family] = {}
        out = list(map(table.get, names))
        if None in out:
            for k, nid in enumerate(out):
                if nid is None:
                    name = names[k]
                    nid = table.get(name)
                    if nid is None:
                        nid = table[name] = self.size
                        self.size += 1
                        self.new.append(name)
                    out[k] = nid
        return out


def _path_tables(paths: list[str]) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    module_files: dict[str, list[int]] = {}
    suffixes: dict[str, list[int]] = {}
    for i, p in enumerate(paths):
        for key in module_keys(p):
            module_files.setdefault(key, []).append(i)
        parts = p.split("/")
        for k in range(len(parts)):
            suffixes.setdefault("/".join(parts[k:]), []).append(i)
    return module_files, suffixes


def _file_rows(t: FileTags, family: str, names: _Interner, imports: dict[int, tuple[str, int]]) -> tuple:
    """One file's rows: defined name ids, member flags, referenced name ids, kinds, counts, and its definition
    count and parse error flag (each a one-item list)."""
    if t.defs:
        top_level = {d[0] for d in t.defs if "." not in d[1]}
        unique = list(dict.fromkeys([d[0] for d in t.defs]))
        d_ids = names.ids(family, unique)
        member = [name not in top_level for name in unique]
    else:
        d_ids, member = [], []
    if not t.agg_names:
        return d_ids, member, [], b"", b"", [len(t.defs)], [t.parse_error]
    agg = t.agg_names.split("\0")
    r_ids = names.ids(family, agg)
    kinds = t.agg_kinds
    k = kinds.find(IMPORT)
    while k >= 0:
        nid = r_ids[k]
        if nid not in imports:
            name = agg[k]
            if "." in name or "/" in name or "::" in name:  # a module path, not a plain name
                norm = normalize_import(name)
                imports[nid] = (norm, names.ids(family, [norm.rpartition(".")[2]])[0])
        k = kinds.find(IMPORT, k + 1)
    return d_ids, member, r_ids, kinds, t.agg_counts, [len(t.defs)], [t.parse_error]


def _private(name: str) -> float:
    if name.startswith("__") or len(name) < 3:
        return 0.1
    return 0.3 if name.startswith("_") else 1.0


def _name_order(vocab: dict[str, dict[str, int]], size: int) -> np.ndarray:
    ids: list[int] = []
    for family in sorted(vocab):
        table = vocab[family]
        ids.extend(map(table.__getitem__, sorted(table)))
    order = np.empty(size, dtype=np.int64)
    order[np.array(ids, dtype=np.int64)] = np.arange(size, dtype=np.int64)
    return order


def _finish(
    paths: list[str], families: list[str], keys: list[bytes], names: _Interner, imports: dict[int, tuple[str, int]],
    private: np.ndarray, rows: list[tuple], module_files: dict | None = None, suffixes: dict | None = None,
) -> Tables:
    """Tables from per-file rows (or row slices of stored tables: tuples of seven arrays)."""
    def_counts = np.array([len(r[0]) for r in rows], dtype=np.int64)
    ref_counts = np.array([len(r[2]) for r in rows], dtype=np.int64)
    d_name = np.concatenate([np.asarray(r[0], dtype=np.int64) for r in rows]) if rows else np.zeros(0, np.int64)
    d_member = np.concatenate([np.asarray(r[1], dtype=bool) for r in rows]) if rows else np.zeros(0, bool)
    r_name = np.concatenate([np.asarray(r[2], dtype=np.int64) for r in rows]) if rows else np.zeros(0, np.int64)
    r_kind = np.concatenate([np.frombuffer(r[3], dtype=np.uint8) if isinstance(r[3], bytes) else r[3] for r in rows]) \
        if rows else np.zeros(0, np.uint8)
    r_count = np.concatenate([np.frombuffer(r[4], dtype=_COUNT_DTYPE) if isinstance(r[4], bytes) else r[4]
                              for r in rows]) if rows else np.zeros(0, _COUNT_DTYPE)
    file_defs = np.concatenate([np.asarray(r[5], dtype=np.int64) for r in rows]) if rows else np.zeros(0, np.int64)
    file_errors = np.concatenate([np.asarray(r[6], dtype=bool) for r in rows]) if rows else np.zeros(0, bool)
    if names.new:
        private = np.concatenate([private, np.array([_private(n) for n in names.new], dtype=np.float64)])
        order = _name_order(names.vocab, names.size)
    else:
        order = None
    if module_files is None or suffixes is None:
        module_files, suffixes = _path_tables(paths)
    return Tables(paths, families, keys, names.vocab, order, private, imports, def_counts, d_name, d_member,
                  ref_counts, r_name, r_kind, r_count, module_files, suffixes, file_defs, file_errors)


def tables_from_tags(paths: list[str], tags: Sequence[FileTags], families: list[str], keys: list[bytes]) -> Tables:
    """The tables of files `paths` (sorted) with their tags, families and cache keys."""
    names = _Interner({}, 0)
    imports: dict[int, tuple[str, int]] = {}
    rows = [_file_rows(t, fam, names, imports) for t, fam in zip(tags, families)]
    tables = _finish(paths, families, keys, names, imports, np.zeros(0, dtype=np.float64), rows)
    if tables.order is None:
        tables.order = np.zeros(0, dtype=np.int64)
    return tables


def patch_tables(
    base: Tables, paths: list[str], families: list[str], keys: list[bytes], tags: Sequence[FileTags]
) -> tuple[Tables, int]:
    """`base` (consumed) with the rows of changed, added and removed files replaced: the tables of the new tree.

    Returns the tables and how many files were re-aggregated. Unchanged files keep their rows (sliced in runs).
    """
    position = {p: i for i, p in enumerate(base.paths)}
    d_off = np.concatenate([[0], np.cumsum(base.def_counts)]).tolist()
    r_off = np.concatenate([[0], np.cumsum(base.ref_counts)]).tolist()
    names = _Interner(base.vocab, len(base.private))
    rows: list[tuple] = []
    counts: list[tuple[np.ndarray, np.ndarray]] = []  # per-file row counts, by file or by run of files
    run: list[int] = []  # [first, last + 1] old files of a run of unchanged files

    def flush() -> None:
        if run:
            a, b = run
            da, db, ra, rb = d_off[a], d_off[b], r_off[a], r_off[b]
            # the run's files as one pseudo-row; per-file counts are restored below
            rows.append((base.d_name[da:db], base.d_member[da:db], base.r_name[ra:rb], base.r_kind[ra:rb],
                         base.r_count[ra:rb], base.file_defs[a:b], base.file_errors[a:b]))
            counts.append((base.def_counts[a:b], base.ref_counts[a:b]))
            run.clear()

    changed = 0
    for i, path in enumerate(paths):
        old = position.get(path)
        if old is not None and base.keys[old] == keys[i] and base.families[old] == families[i]:
            if run and run[1] == old:
                run[1] = old + 1
            else:
                flush()
                run[:] = [old, old + 1]
            continue
        flush()
        changed += 1
        r = _file_rows(tags[i], families[i], names, base.imports)
        rows.append(r)
        counts.append((np.array([len(r[0])], dtype=np.int64), np.array([len(r[2])], dtype=np.int64)))
    flush()
    same_paths = paths == base.paths
    tables = _finish(paths, families, keys, names, base.imports, base.private, rows,
                     base.module_files if same_paths else None, base.suffixes if same_paths else None)
    tables.def_counts = np.concatenate([c[0] for c in counts]) if counts else np.zeros(0, np.int64)
    tables.ref_counts = np.concatenate([c[1] for c in counts]) if counts else np.zeros(0, np.int64)
    if tables.order is None:
        tables.order = base.order
    return tables, changed + len(set(base.paths).difference(paths))


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
    kind_arr = t.r_kind
    count_arr = t.r_count.astype(np.float64)
    nid_arr = np.where(defined[t.r_name], t.r_name, -1) if len(t.r_name) else np.zeros(0, np.int64)

    # imports of module paths: a direct edge to the module's file, and the last component as a name
    m_src = m_dst = np.zeros(0, dtype=np.int64)
    m_w = np.zeros(0, dtype=np.float64)
    if t.imports and len(nid_arr):
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
        ks = np.nonzero((kind_arr == IMPORT) & (nid_arr < 0) & is_mod[t.r_name])[0]
        imported = t.r_name[ks]
        if len(ks):
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
                    m_w = np.bincount(inverse, weights=e_w, minlength=len(uniq))
                    m_src, m_dst = uniq // n, uniq % n
            tails = tail[imported]
            nid_arr[ks] = np.where((tails >= 0) & defined[np.maximum(tails, 0)], tails, -1)

    valid = nid_arr >= 0
    v_name = nid_arr[valid]
    weights = np.asarray(KIND_WEIGHTS)[kind_arr[valid]] * count_arr[valid]
    # one row per (name, file, plain or member access), names in (family, name) order: `x.save()` may mean a
    # method, `save()` may not
    member_ref = (kind_arr[valid] == MEMBER_CALL).astype(np.int64)
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
    row_w = np.sqrt(ref_w) * name_w[r_name]

    # symbol edges, one per (definition pair, reference row of its name): grouped by definition pair, each
    # group's rows by file
    if len(r_file) and len(d_rank):
        per_rank = np.bincount(r_rank, minlength=n_names)
        cnt = per_rank[d_rank]
        total = int(cnt.sum())
        pair = np.repeat(np.arange(len(d_rank)), cnt)
        offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        row = np.repeat((np.cumsum(per_rank) - per_rank)[d_rank], cnt) + offs
        s_src, s_dst = r_file[row], d_file[pair]
        keep = (s_src != s_dst) & ~(r_plain[row] & d_member[pair] & strict[s_src])
        s_src, s_dst, pair = s_src[keep], s_dst[keep], pair[keep]
        s_w = row_w[row[keep]]
    else:
        s_src = s_dst = pair = np.zeros(0, dtype=np.int64)
        s_w = np.zeros(0, dtype=np.float64)

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


def build_graph(paths: list[str], tags: Sequence[FileTags], families: list[str]) -> Graph:
    """The reference graph of files `paths` (sorted) with their tags; names link only within a language family."""
    return assemble(tables_from_tags(paths, tags, families, [b""] * len(paths)))


def changed_files(base: Tables, paths: list[str], families: list[str], keys: list[bytes]) -> int:
    """How many files differ between the tree of `base` and this one (changed, added or removed)."""
    old = dict(zip(base.paths, zip(base.keys, base.families)))
    same = sum(1 for p, k, f in zip(paths, keys, families) if old.get(p) == (k, f))
    return (len(paths) - same) + (len(base.paths) - same)


_SNAPSHOT_VERSION = 1
_NARROW = ("d_name", "r_name", "def_counts", "ref_counts", "order", "file_defs")
"""Integer columns of `Tables` stored as int32 (halves the bytes to load)."""


def dumps(obj: Tables) -> bytes:
    """A snapshot of tables, integer columns narrowed."""
    state = dict(vars(obj))
    for field in _NARROW:
        state[field] = state[field].astype(np.int32)
    return pickle.dumps((_SNAPSHOT_VERSION, type(obj).__name__, state), protocol=pickle.HIGHEST_PROTOCOL)


def loads(blob: bytes, kind: type[Tables] = Tables) -> Tables:
    """The tables of a snapshot made by `dumps`; raises ValueError for another format or kind."""
    version, name, state = pickle.loads(blob)
    if version != _SNAPSHOT_VERSION or name != kind.__name__:
        raise ValueError(f"not a {kind.__name__} snapshot of version {_SNAPSHOT_VERSION}")
    for field in _NARROW:
        state[field] = state[field].astype(np.int64)
    return kind(**state)


def graph_parts(graph: Graph) -> dict[str, bytes]:
    """The stored parts of a graph snapshot (`repomap.graph_store`), its header under `header`."""
    return _store.dump_parts(graph, _ARRAYS)


def load_graph(paths: list[str], read: Callable[[str], bytes | None], fallback: Callable[[], Graph]) -> Graph:
    """The graph of files `paths` from the parts of its snapshot, arrays read on first use (from `fallback()`
    when a part is gone by then); raises ValueError for a missing or outdated snapshot."""
    return _store.load_parts(paths, read, Graph, fallback)

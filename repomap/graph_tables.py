"""Per-file tables of a tree's references, from which `repomap.graph.assemble` builds the graph.

`tables_from_tags` aggregates the tags of every file into flat per-file rows (the names a file defines, the
names it references, by kind and count), with names interned in a vocabulary; `patch_tables` replaces the
rows of changed, added and removed files in a stored copy of those tables (`dumps`/`loads`). A name's id is
arbitrary (its place in the vocabulary); `Tables.order` puts names in (family, name) order, the order of every
floating-point sum, so a patched table and a fresh one give bit-identical graphs.
"""

from __future__ import annotations

import pickle
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from repomap.tags import FileTags

IMPORT = 1
"""Kind code of an import, as `repomap.tags` stores it."""

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

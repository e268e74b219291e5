"""Rank files and symbols: a reference graph of files and personalized PageRank (numpy power iteration).

File A referencing a name that file B defines gives an edge A→B weighted by how often and how (a base class
counts more than a call), damped for names defined in many files, private names and names every file uses.
Imports that resolve to a module path give a direct edge. Everything is ordered by path and by name, so the
result does not depend on hash seeds.
"""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from repomap.focus import Focus, is_library_path, normalize_frame_path
from repomap.tags import FileTags

KIND_WEIGHTS: tuple[float, ...] = (1.0, 1.0, 2.0, 1.5, 1.0, 0.5)
"""Weight of a reference by kind code (call, import, base, decorator, annotation, member call)."""
MEMBER_CALL = 5
"""Kind code of a call through an attribute (`x.save()`), as `repomap.tags` stores it."""
STRICT_MEMBER_FAMILIES = frozenset({"python", "js"})
"""Families where a bare name (`save()`) can not mean a method: it needs `self.`/`this.`."""
MODULE_IMPORT_WEIGHT = 2.0
"""Weight of an import that resolves to a file (`import a.b`, `from ./util`)."""
DAMPING = 0.85
"""PageRank damping factor."""
PATH_WEIGHT = 10.0
"""Personalization weight of a file mentioned by path or in a stack frame."""
IDENT_WEIGHT = 1.0
"""Personalization weight, split among its definers, of a mentioned identifier."""

_MAX_ITERATIONS = 60
_TOLERANCE = 1e-7
"""L1 change between iterations at which PageRank stops (scores are compared, not printed, at this precision)."""
_COUNT_DTYPE = np.dtype(f"u{array('I').itemsize}")
_CODE_LIKE = re.compile(r"[_.]|[a-z][A-Z]|^[A-Z][a-z]+[A-Z]|\d")


@dataclass
class Graph:
    """The file graph of one tree, independent of any focus."""

    paths: list[str]
    """Indexed files, sorted; a file's index is its node id."""
    families: list[str]
    """Language family per file."""
    src: np.ndarray
    """Edge sources (one edge per file pair)."""
    dst: np.ndarray
    """Edge targets."""
    weight: np.ndarray
    """Edge weights."""
    sym_src: np.ndarray
    """Referencing file of each (referencing file, defining file, name) edge, grouped by `sym_keys`."""
    sym_weight: np.ndarray
    """Weight of each symbol edge."""
    sym_keys: np.ndarray
    """Sorted distinct `defining file * len(names) + name id` of the symbol edges."""
    sym_starts: np.ndarray
    """Where each key's edges start in `sym_src`/`sym_weight`."""
    names: dict[tuple[str, str], int]
    """(language family, defined name) → name id."""
    def_name: np.ndarray
    """Name id of each (name, defining file) pair, sorted by name id then file."""
    def_file: np.ndarray
    """Defining file of each pair of `def_name`."""
    def_member: np.ndarray
    """True where the file defines the name only inside another definition (a method, a nested function)."""
    module_files: dict[str, list[int]]
    """Module path suffixes (`core.basic`, `basic`) → files."""
    suffixes: dict[str, list[int]]
    """Path suffixes by whole components (`basic.py`, `core/basic.py`) → files."""

    def definers(self, name: str, *, top_level: bool = False) -> list[int]:
        """Files defining `name` (in any language family), in path order; only at module level with `top_level`."""
        out: list[int] = []
        for fam in sorted(set(self.families)):
            nid = self.names.get((fam, name))
            if nid is not None:
                lo = int(np.searchsorted(self.def_name, nid, side="left"))
                hi = int(np.searchsorted(self.def_name, nid, side="right"))
                files = self.def_file[lo:hi]
                if top_level:
                    files = files[~self.def_member[lo:hi]]
                out.extend(files.tolist())
        return sorted(out)


def module_keys(path: str) -> list[str]:
    """Module-style names a file answers to: `pkg/sub/mod.py` → `pkg.sub.mod`, `sub.mod`, `mod`."""
    stem, dot, _ext = path.rpartition(".")
    if not dot:
        stem = path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] in ("__init__", "index", "mod", "lib"):
        parts = parts[:-1] or parts
    return [".".join(parts[i:]) for i in range(len(parts))]


_SOURCE_SUFFIX = re.compile(r"\.(py|js|jsx|ts|tsx|mjs|cjs|h|hpp|hh|rb|go|rs)$")


def _normalize_import(name: str) -> str:
    name = name.replace("::", ".").replace("/", ".").replace("\\", ".")
    return _SOURCE_SUFFIX.sub("", name).strip(".")


def build_graph(paths: list[str], tags: list[FileTags], families: list[str]) -> Graph:
    """The reference graph of files `paths` (sorted) with their tags; names link only within a language family."""
    n = len(paths)
    names: dict[tuple[str, str], int] = {}
    per_family: dict[str, dict[str, int]] = {}
    pair_nids: list[int] = []
    pair_files: list[int] = []
    pair_member: list[bool] = []
    for i, t in enumerate(tags):
        if not t.defs:
            continue
        fam = families[i]
        local = per_family.setdefault(fam, {})
        top_level = {d[0] for d in t.defs if "." not in d[1]}
        unique = list(dict.fromkeys([d[0] for d in t.defs]))  # insertion order: ids never depend on hash seeds
        ids = list(map(local.get, unique))
        for k, nid in enumerate(ids):
            if nid is None:
                name = unique[k]
                ids[k] = local[name] = names[(fam, name)] = len(names)
        pair_nids.extend(ids)
        pair_files.extend([i] * len(ids))
        pair_member.extend([name not in top_level for name in unique])
    d_name = np.array(pair_nids, dtype=np.int64)
    d_file = np.array(pair_files, dtype=np.int64)
    order = np.lexsort((d_file, d_name))
    d_name, d_file = d_name[order], d_file[order]
    d_member = np.array(pair_member, dtype=bool)[order]
    strict = np.array([fam in STRICT_MEMBER_FAMILIES for fam in families], dtype=bool)

    module_files: dict[str, list[int]] = {}
    suffixes: dict[str, list[int]] = {}
    for i, p in enumerate(paths):
        for key in module_keys(p):
            module_files.setdefault(key, []).append(i)
        parts = p.split("/")
        for k in range(len(parts)):
            suffixes.setdefault("/".join(parts[k:]), []).append(i)

    # every referenced (name, kind) pair of every file, flattened; name ids resolved in the file's family
    flat_names: list[str] = []
    nids: list[int] = []
    files: list[int] = []
    lens: list[int] = []
    kind_parts: list[bytes] = []
    count_parts: list[bytes] = []
    for i, t in enumerate(tags):
        if not t.agg_names:
            continue
        agg = t.agg_names.split("\0")
        local = per_family.get(families[i], {})
        flat_names.extend(agg)
        nids.extend(map(local.get, agg, repeat(-1)))
        files.append(i)
        lens.append(len(agg))
        kind_parts.append(t.agg_kinds)
        count_parts.append(t.agg_counts)
    nid_arr = np.array(nids, dtype=np.int64)
    file_arr = np.repeat(np.array(files, dtype=np.int64), np.array(lens, dtype=np.int64))
    kind_arr = np.frombuffer(b"".join(kind_parts), dtype=np.uint8)
    count_arr = np.frombuffer(b"".join(count_parts), dtype=_COUNT_DTYPE).astype(np.float64)

    # imports of module paths: a direct edge to the module's file, and the last component as a name
    mod_edges: dict[tuple[int, int], float] = {}
    memo: dict[str, tuple[str, list[int] | None] | None] = {}  # import → (normalized, its <= 3 files)
    tails: dict[tuple[str, str], int] = {}
    import_ks = np.nonzero((kind_arr == 1) & (nid_arr < 0))[0]
    fix_ks: list[int] = []
    fix_ids: list[int] = []
    for k, i in zip(import_ks.tolist(), file_arr[import_ks].tolist()):
        name = flat_names[k]
        hit = memo.get(name, False)
        if hit is False:
            if "." not in name and "/" not in name and "::" not in name:
                hit = memo[name] = None  # a plain name, not a module path
            else:
                norm = _normalize_import(name)
                targets = module_files.get(norm)
                hit = memo[name] = (norm, targets if targets and len(targets) <= 3 else None)
        if hit is None:
            continue
        norm, targets = hit
        if targets is not None:
            share = MODULE_IMPORT_WEIGHT / len(targets)
            for j in targets:
                if j != i:
                    mod_edges[(i, j)] = mod_edges.get((i, j), 0.0) + share
        fam = families[i]
        tid = tails.get((fam, norm))
        if tid is None:
            tid = tails[(fam, norm)] = per_family.get(fam, {}).get(norm.rpartition(".")[2], -1)
        fix_ks.append(k)
        fix_ids.append(tid)
    if fix_ks:
        nid_arr[np.array(fix_ks, dtype=np.int64)] = np.array(fix_ids, dtype=np.int64)

    n_names = max(len(names), 1)
    valid = nid_arr >= 0
    weights = np.asarray(KIND_WEIGHTS)[kind_arr[valid]] * count_arr[valid]
    # one entry per (file, name, plain or member access): `x.save()` may mean a method, `save()` may not
    member_ref = (kind_arr[valid] == MEMBER_CALL).astype(np.int64)
    uniq, inverse = np.unique((file_arr[valid] * n_names + nid_arr[valid]) * 2 + member_ref, return_inverse=True)
    ref_w = np.bincount(inverse, weights=weights, minlength=len(uniq))
    r_plain = (uniq % 2) == 0
    pair_key = uniq // 2
    r_file, r_name = pair_key // n_names, pair_key % n_names
    first = np.ones(len(pair_key), dtype=bool)
    first[1:] = pair_key[1:] != pair_key[:-1]
    df = np.bincount(r_name[first], minlength=n_names).astype(np.float64)
    r_w = np.sqrt(ref_w)
    # name damping: spread over definers, fewer points for private names and names (nearly) everyone uses
    n_names = len(names)
    n_def = np.bincount(d_name, minlength=max(n_names, 1)).astype(np.float64)
    private = np.ones(max(n_names, 1), dtype=np.float64)
    for (_fam, name), nid in names.items():
        if name[0] == "_" or len(name) < 3:
            private[nid] = 0.1 if name.startswith("__") or len(name) < 3 else 0.3
    idf = np.log1p(n / np.maximum(df, 1.0)) / math.log1p(max(n, 1))
    many = np.where(n_def > 5, 0.2, 1.0)
    name_w = private * idf * many / np.maximum(n_def, 1.0)

    if len(r_file):
        starts = np.searchsorted(d_name, r_name, side="left")
        counts = n_def[r_name].astype(np.int64)
        total = int(counts.sum())
        rep = np.repeat(np.arange(len(r_file)), counts)
        offs = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        pair = np.repeat(starts, counts) + offs
        tgt = d_file[pair]
        s_src = r_file[rep]
        s_name = r_name[rep]
        s_w = r_w[rep] * name_w[s_name]
        keep = (s_src != tgt) & ~(r_plain[rep] & d_member[pair] & strict[s_src])
        s_src, s_dst, s_name, s_w = s_src[keep], tgt[keep], s_name[keep], s_w[keep]
    else:
        s_src = s_dst = s_name = np.zeros(0, dtype=np.int64)
        s_w = np.zeros(0, dtype=np.float64)

    if mod_edges:
        keys = sorted(mod_edges)
        mk = np.array(keys, dtype=np.int64).reshape(-1, 2)
        m_src, m_dst = mk[:, 0].copy(), mk[:, 1].copy()
        m_w = np.array([mod_edges[k] for k in keys], dtype=np.float64)
    else:
        m_src = m_dst = np.zeros(0, dtype=np.int64)
        m_w = np.zeros(0, dtype=np.float64)
    all_src = np.concatenate([s_src, m_src])
    all_dst = np.concatenate([s_dst, m_dst])
    all_w = np.concatenate([s_w, m_w])
    if len(all_src):
        key = all_src * max(n, 1) + all_dst
        uniq, inverse = np.unique(key, return_inverse=True)
        w = np.bincount(inverse, weights=all_w, minlength=len(uniq))
        src, dst = uniq // max(n, 1), uniq % max(n, 1)
    else:
        src = dst = np.zeros(0, dtype=np.int64)
        w = np.zeros(0, dtype=np.float64)
    sym_key = s_dst * max(n_names, 1) + s_name
    order = np.argsort(sym_key, kind="stable")
    sym_keys, sym_starts = np.unique(sym_key[order], return_index=True)
    return Graph(
        paths, families, src, dst, w, s_src[order], s_w[order], sym_keys, sym_starts,
        names, d_name, d_file, d_member, module_files, suffixes,
    )


def pagerank(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, personal: np.ndarray) -> np.ndarray:
    """Personalized PageRank by power iteration; dangling mass returns to the personalization vector."""
    if n == 0:
        return np.zeros(0)
    p = personal / personal.sum()
    out = np.bincount(src, weights=weight, minlength=n)
    share = weight / np.where(out[src] > 0, out[src], 1.0)
    dangling = out == 0
    r = p.copy()
    for _ in range(_MAX_ITERATIONS):
        flow = np.bincount(dst, weights=r[src] * share, minlength=n)
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
        files = graph.module_files.get(_normalize_import(module))
        if files and len(files) <= 3:
            add_files(files, weight)
            return True
        return False

    for text in focus.paths:
        add_files(match_path(graph, normalize_frame_path(text)), PATH_WEIGHT)
    frames = [f for f in focus.frames if not is_library_path(f.path)]
    for pos, frame in enumerate(frames):
        # innermost frames (printed last) point closest to the failure
        add_files(match_path(graph, normalize_frame_path(frame.path)), PATH_WEIGHT * (1.0 + pos / max(len(frames), 1)))
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


def rank(graph: Graph, focus: Focus | None) -> Ranking:
    """Rank the graph's files and symbols for a focus."""
    n = len(graph.paths)
    p, mentioned = personalization(graph, focus)
    has_focus = bool(p.sum() > 0)
    base = p if has_focus else np.ones(n, dtype=np.float64)
    r = pagerank(n, graph.src, graph.dst, graph.weight, base) if n else np.zeros(0)
    scores = r + (p / p.sum() if has_focus else 0.0)
    keys = np.zeros(0, dtype=np.int64)
    values = np.zeros(0, dtype=np.float64)
    if len(graph.sym_src) and n:
        out = np.bincount(graph.src, weights=graph.weight, minlength=n)
        contrib = r[graph.sym_src] * graph.sym_weight / np.where(out[graph.sym_src] > 0, out[graph.sym_src], 1.0)
        keys = graph.sym_keys
        values = np.add.reduceat(contrib, graph.sym_starts)
    return Ranking(scores, keys, values, mentioned)

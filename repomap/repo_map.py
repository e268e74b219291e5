"""Build a repository map: walk, tag (cached by content hash), rank for a focus, render within a token budget."""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from repomap import cache as _cache
from repomap import graph as _graphs
from repomap._parse import ParsePipeline
from repomap.config import MapConfig
from repomap.focus import Focus
from repomap.gate import Gate, Refused
from repomap.graph import Graph
from repomap.index import SymbolIndex
from repomap.names import NameStore
from repomap.languages import EXTENSIONS, FAMILY, language_for
from repomap.rank import Ranking, rank
from repomap.render import MODULE_TREE_VERSION, RenderInput, module_tree, render_map
from repomap.tags import Definition, FileTags, Reference
from repomap import walk_snapshot as _walks
from repomap.walk import IgnoreRules, MapCancelled, SkipReason, WalkResult, walk_files


_GRAPH_VERSION = 6
"""Bump when `repomap.graph` changes: stored graph snapshots are keyed by it."""
_SNAPSHOT_MIN_FILES = 200
"""Smaller trees rebuild their graph faster than a snapshot loads."""
_PATCH_MIN_FILES = 50
"""A stored graph of the same directory is patched when at most this many files changed, ..."""
_PATCH_FRACTION = 4
"""... or at most this fraction (1/n) of the files: beyond that a fresh build costs about the same."""


class MapInputError(ValueError):
    """The caller's fault: the root to map does not exist or is not a directory."""


@dataclass(frozen=True)
class RankedFile:
    """One indexed file and its score for the map's focus."""

    path: str
    """Repository-relative POSIX path."""
    score: float
    """Higher is more relevant; scores of one map sum to about 1 (2 with a focus)."""


@dataclass(frozen=True)
class RankedSymbol:
    """One definition and its score for the map's focus."""

    definition: Definition
    """The definition."""
    score: float
    """Higher is more relevant."""


@dataclass
class MapStats:
    """How a map was built."""

    files_indexed: int = 0
    """Files with a grammar that were tagged."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Skipped entries per `SkipReason` value."""
    parse_errors: int = 0
    """Indexed files whose syntax tree had errors (their parsable parts were still tagged)."""
    cache_hits: int = 0
    """Files whose tags came from the cache."""
    cache_misses: int = 0
    """Files parsed in this build."""
    definitions: int = 0
    """Definitions across all indexed files."""
    languages: dict[str, int] = field(default_factory=dict)
    """Indexed files per language."""
    seconds: float = 0.0
    """Wall time of the build (or of the re-ranking, for `refocus`)."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per phase (walk, hash, load, parse, graph, rank, render)."""
    cache_path: str | None = None
    """The SQLite cache file, or None when the cache is in memory only."""
    graph: str = ""
    """Where the reference graph came from: `built` from all tags, `snapshot` (this exact tree was seen before)
    or `patched` (the stored graph of the same directory with the rows of changed files replaced)."""
    graph_files: int = 0
    """Files the graph was (re)built for in this build: all when built, the changed, added and removed ones when
    patched, none from a snapshot."""
    walk: str = ""
    """How the file list was found: `walked` (every directory listed and judged) or `snapshot` (the last walk of
    this directory, its directories, ignore files and files found unchanged by their stats)."""
    files_hashed: int = 0
    """Files read and hashed in this build (not trusted to the stat pre-check)."""
    precheck_rows: int = 0
    """Stat pre-check rows read from the cache's `files` table (0 when the walk snapshot supplied them)."""
    cores_decoded: int = 0
    """Files whose cached tags were read and decoded by the build itself (rendering and graph work)."""


@dataclass
class _Corpus:
    """A tagged tree, independent of focus: shared by a map and its refocused copies."""

    root: Path
    """The mapped directory."""
    paths: list[str]
    """Indexed files, sorted."""
    tags: _LazyTags
    """Tags per file of `paths` (without the per-line references, which stay in the cache), decoded on use."""
    keys: list[bytes]
    """Cache key per file of `paths`."""
    languages: dict[str, int]
    """Indexed files per language."""
    graph: Graph
    """The reference graph."""
    cache: _cache.TagCache
    """Where per-line references are loaded from on demand."""
    stats: MapStats
    """Statistics of the build."""
    position: dict[str, int]
    """Path → index in `paths`."""
    tree_key: bytes | None = None
    """Digest of `paths` and `keys`, computed on first use (`RepoMap.tree_key`)."""
    key_position: dict[bytes, int] | None = None
    """Content key → an index in `paths` with that key, built on first use."""
    module_tree: str | None = None
    """The rendered module tree (`repomap.render.module_tree`), computed or read back on first use."""


class RepoMap:
    """A ranked, rendered map of one tree for one focus. Build with `build_repo_map`."""

    def __init__(self, corpus: _Corpus, focus: Focus | None, token_budget: int, stats: MapStats) -> None:
        started = time.perf_counter()
        self._corpus = corpus
        self.focus = focus
        """The focus the map was ranked for (None: plain PageRank)."""
        self.token_budget = token_budget
        """The token budget `text` fits."""
        self.root = corpus.root
        """The mapped directory."""
        self.stats = stats
        """How it was built."""
        self._ranking: Ranking = rank(corpus.graph, focus, corpus.cache if corpus.cache.persistent else None,
                                      corpus.graph.key)
        scores = self._ranking.file_scores.tolist()
        order = sorted(range(len(corpus.paths)), key=lambda i: (-scores[i], corpus.paths[i]))
        self._order = order
        self._scores = scores
        self._files: list[RankedFile] | None = None
        self._symbols: list[RankedSymbol] | None = None
        store = NameStore(corpus.cache.db, lambda: self.tree_key, corpus.keys, self._defs_of_key)
        self.index = SymbolIndex(self._load_definitions, corpus.paths, {corpus.paths[i]: r for r, i in enumerate(order)},
                                 store=store, keys=corpus.keys)
        """Definition lookup over the whole tree (names from the persisted index beside the tags cache)."""
        t = time.perf_counter()
        stats.timings["rank"] = t - started
        self.text, self.files_shown = self._render(token_budget)
        stats.timings["render"] = time.perf_counter() - t

    @property
    def files(self) -> list[RankedFile]:
        """Every indexed file, best first."""
        if self._files is None:
            paths, scores = self._corpus.paths, self._scores
            self._files = [RankedFile(paths[i], scores[i]) for i in self._order]
        return self._files

    def _module_tree(self) -> str:
        """The module tree of the corpus, kept beside its graph snapshot (it depends on the paths alone)."""
        corpus = self._corpus
        if corpus.module_tree is None:
            key = None
            if corpus.cache.persistent and corpus.graph.key is not None:
                digest = hashlib.blake2b(f"module-tree-v{MODULE_TREE_VERSION}".encode(), digest_size=16)
                digest.update(corpus.graph.key + repr(sorted(corpus.languages.items())).encode())
                key = digest.digest()
                blob = corpus.cache.load_result(key)
                if blob is not None:
                    corpus.module_tree = blob.decode("utf-8", "surrogatepass")
                    return corpus.module_tree
            corpus.module_tree = module_tree(corpus.paths, corpus.languages)
            if key is not None:
                corpus.cache.store_result(key, corpus.module_tree.encode("utf-8", "surrogatepass"))
        return corpus.module_tree

    def _load_definitions(self, path: str) -> list[Definition]:
        i = self._corpus.position.get(path)
        return self._corpus.tags[i].definitions(path) if i is not None else []

    def _defs_of_key(self, key: bytes) -> tuple:
        if self._corpus.key_position is None:
            self._corpus.key_position = {k: i for i, k in enumerate(self._corpus.keys)}
        return self._corpus.tags[self._corpus.key_position[key]].defs

    def _symbol_scores(self, fi: int) -> list[float]:
        defs = self._corpus.tags[fi].defs
        if not defs:
            return []
        keys = self._corpus.graph.symbol_keys(fi, [d[0] for d in defs])
        incoming = self._ranking.incoming(keys).tolist()
        mentioned = self._ranking.mentioned
        fs = float(self._ranking.file_scores[fi])
        out: list[float] = []
        for d, s in zip(defs, incoming):
            s += fs * (1e-3 if "." not in d[1] else 5e-4)
            if mentioned and (d[0] in mentioned or d[1] in mentioned or ".".join(d[1].split(".")[-2:]) in mentioned):
                s += fs
            out.append(s)
        return out

    def _render(self, token_budget: int) -> tuple[str, int]:
        corpus = self._corpus
        # only the best files can fit; widen the window when everything offered fits
        window = token_budget // 25 + 10
        while True:
            top = self._order[:window]
            inp = RenderInput(
                paths=[corpus.paths[i] for i in top],
                scores=[float(self._ranking.file_scores[i]) for i in top],
                defs=[list(corpus.tags[i].defs) for i in top],
                symbol_scores=[self._symbol_scores(i) for i in top],
                languages=corpus.languages,
                all_paths=corpus.paths,
                tree=self._module_tree(),
            )
            text, shown, complete = render_map(inp, token_budget)
            if not complete or window >= len(self._order):
                return text, shown
            window *= 4

    @property
    def symbols(self) -> list[RankedSymbol]:
        """Every definition, best first."""
        if self._symbols is None:
            ranked: list[tuple[float, str, int, RankedSymbol]] = []
            for fi, path in enumerate(self._corpus.paths):
                scores = self._symbol_scores(fi)
                for d, s in zip(self._corpus.tags[fi].definitions(path), scores):
                    ranked.append((-s, path, d.start_line, RankedSymbol(d, s)))
            ranked.sort(key=lambda r: r[:3])
            self._symbols = [r[3] for r in ranked]
        return self._symbols

    def content_key(self, path: str) -> bytes | None:
        """The content key of one indexed file (a hash of its language and bytes), None when it is not indexed."""
        i = self._corpus.position.get(path)
        return self._corpus.keys[i] if i is not None else None

    @property
    def tree_key(self) -> bytes:
        """A digest of every indexed path and its content key: equal for two maps of the same files."""
        if self._corpus.tree_key is None:
            digest = hashlib.blake2b(b"tree-v1", digest_size=16)
            for path, key in zip(self._corpus.paths, self._corpus.keys):
                digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
                digest.update(key)
            self._corpus.tree_key = digest.digest()
        return self._corpus.tree_key

    def definitions(self, path: str) -> list[Definition]:
        """Definitions of one file in line order (empty when the file is not indexed)."""
        return self.index.definitions(path)

    def references_of(self, path: str) -> list[Reference]:
        """References made by one file, in line order."""
        i = self._corpus.position.get(path)
        if i is None:
            return []
        blob = self._corpus.cache.load_refs(self._corpus.keys[i])
        if blob is None:
            return []
        names, kinds, lines = pickle.loads(blob)
        return FileTags(ref_names=names, ref_kinds=kinds, ref_lines=lines).references(path)

    @property
    def references(self) -> list[Reference]:
        """Every reference of every indexed file, by path then line."""
        return [r for path in self._corpus.paths for r in self.references_of(path)]

    def refocus(self, focus: str | Focus | None, token_budget: int | None = None) -> RepoMap:
        """The same tree ranked and rendered for another focus (no walking or parsing)."""
        started = time.perf_counter()
        base = self._corpus.stats
        stats = MapStats(
            files_indexed=base.files_indexed,
            skipped=dict(base.skipped),
            parse_errors=base.parse_errors,
            cache_hits=base.cache_hits,
            cache_misses=base.cache_misses,
            definitions=base.definitions,
            languages=dict(base.languages),
            cache_path=base.cache_path,
        )
        result = RepoMap(self._corpus, _as_focus(focus), token_budget or self.token_budget, stats)
        stats.seconds = time.perf_counter() - started
        return result


def _as_focus(focus: str | Focus | None) -> Focus | None:
    if focus is None or isinstance(focus, Focus):
        return focus
    return Focus.from_text(focus)


class _LazyTags:
    """Tags per file, decoded from their cache rows on first use: a warm build reads only the files it renders
    (and those whose graph rows it patches)."""

    def __init__(self, keys: list[bytes], tags: list[FileTags | None], cache: _cache.TagCache) -> None:
        self._keys = keys
        self._tags = tags
        self._cache = cache
        self.decoded = 0
        """Files decoded from their cache rows so far."""

    def __len__(self) -> int:
        return len(self._tags)

    def __getitem__(self, i: int) -> FileTags:
        tags = self._tags[i]
        if tags is None:
            core = self._cache.load_core([self._keys[i]]).get(self._keys[i])
            # a row evicted by another process since the build saw it: the file maps as empty until rebuilt
            tags = self._tags[i] = _cache.decode_core(core) if core else FileTags()
            self.decoded += 1
        return tags

    def prefetch(self) -> None:
        """Decode every file not decoded yet, reading their rows in batches (a graph built from all tags)."""
        todo = [i for i, t in enumerate(self._tags) if t is None]
        cores = self._cache.load_core(dict.fromkeys(self._keys[i] for i in todo))
        for i in todo:
            core = cores.get(self._keys[i])
            self._tags[i] = _cache.decode_core(core) if core else FileTags()
        self.decoded += len(todo)

    def __iter__(self):
        return map(self.__getitem__, range(len(self._tags)))


_CHUNK_FILES = 512
"""Files read and hashed before their cache rows are looked up and the missing ones are fed to the parser."""
_STORE_ROWS = 2000
"""Parsed rows written to the cache per transaction (the blobs are not all held until the end)."""


@dataclass
class _Collected:
    """What `_collect` knows about the content keys of one build."""

    binary: dict[bytes, bool] = field(default_factory=dict)
    """Key → stored as binary, for every key whose row is in the cache (found there or written now)."""
    decoded: dict[bytes, FileTags] = field(default_factory=dict)
    """Tags (without per-line references) of the keys parsed in this build."""
    queued: set[bytes] = field(default_factory=set)
    """Keys sent to the parser or stored as binary in this build."""
    rows: list[tuple[bytes, bytes, bytes]] = field(default_factory=list)
    """Tag rows not written yet."""
    name_keys: list[bytes] = field(default_factory=list)
    """Keys of `rows` whose name index rows are in `name_rows`."""
    name_rows: list[tuple[str, bytes]] = field(default_factory=list)
    """Name index rows of `name_keys`, not written yet."""

    def add_parsed(self, rows: list) -> None:
        """Take the parser's rows `(key, core, refs, tags, names)`."""
        for key, core, refs, tags, names in rows:
            self.binary[key] = False
            self.decoded[key] = tags
            self.rows.append((key, core, refs))
            self.name_keys.append(key)
            self.name_rows.extend(names)

    def flush(self, cache: _cache.TagCache, stat_rows: list[tuple[str, int, int, bytes]] | None = None) -> None:
        """Write the rows held (and `stat_rows`) in one transaction."""
        cache.store(self.rows, stat_rows or [], (self.name_keys, self.name_rows))
        self.rows, self.name_keys, self.name_rows = [], [], []


def _read_chunk(gate: Gate, walked: WalkResult, files: list, config: MapConfig, real_root: str,
                known: dict[str, tuple[int, int, bytes]], out: tuple[dict, dict, list], stats: MapStats,
                cancel: threading.Event | None) -> list[tuple[str, bytes, bytes | None]]:
    """Pre-check or read and hash `files`: (path, key, bytes or `BINARY`, None when trusted to the pre-check)."""
    keys, langs, stat_rows = out
    chunk: list[tuple[str, bytes, bytes | None]] = []
    for f in files:
        if cancel is not None and cancel.is_set():
            raise MapCancelled("cancelled while reading files")
        spec = language_for(f.path)
        if spec is None:
            walked.skip(SkipReason.unsupported)
            continue
        langs[f.path] = spec.name
        real = f"{real_root}/{f.path}"
        hit = known.get(real)
        if hit is not None and hit[0] == f.size and hit[1] == f.mtime_ns:
            keys[f.path] = hit[2]
            chunk.append((f.path, hit[2], None))
            continue
        try:
            data = gate.read_bytes(f.path)
        except Refused as refused:
            walked.skip(SkipReason(refused.reason.value))
            continue
        key = keys[f.path] = _cache.content_key(spec.name, data)
        stats.files_hashed += 1
        chunk.append((f.path, key, _cache.BINARY if b"\0" in data[: config.sniff_bytes] else data))
        stat_rows.append((real, f.size, f.mtime_ns, key))
    return chunk


def _jobs_of(gate: Gate, chunk: list[tuple[str, bytes, bytes | None]], langs: dict[str, str], config: MapConfig,
             cache: _cache.TagCache, got: _Collected, timings: dict[str, float]) -> list[tuple[bytes, str, bytes]]:
    """The parse jobs of a chunk's keys that are neither cached nor queued (binary ones are stored as such)."""
    t = time.perf_counter()
    present = cache.present(dict.fromkeys(k for _, k, _ in chunk if k not in got.queued and k not in got.binary))
    got.binary.update(present)
    timings["load"] = timings.get("load", 0.0) + time.perf_counter() - t
    jobs: list[tuple[bytes, str, bytes]] = []
    for path, key, data in chunk:
        if key in got.binary or key in got.queued:
            continue
        if data is None:  # pre-check said known but the row is gone: read again
            try:
                data = gate.read_bytes(path)
            except Refused:
                continue
            if b"\0" in data[: config.sniff_bytes]:
                data = _cache.BINARY
        got.queued.add(key)
        if data is _cache.BINARY:
            got.rows.append((key, _cache.BINARY, b""))
            got.binary[key] = True
        else:
            jobs.append((key, langs[path], data))
    return jobs


def _collect(
    gate: Gate, walked: WalkResult, config: MapConfig, cache: _cache.TagCache, stats: MapStats,
    cancel: threading.Event | None, known: dict[str, tuple[int, int, bytes]] | None = None,
) -> tuple[list[str], _LazyTags, list[bytes], dict[str, int], dict[str, bytes]]:
    """Hash (or pre-check against `known`, else the cache's rows), find cached tags and parse the rest; skipped
    files are counted in `walked`. Every file is read through `gate`; raises `MapCancelled` once `cancel` is set.
    Also returns the content key of every supported file.

    Files are read in chunks and their missing keys fed to the parser at once, so reading overlaps parsing,
    file bytes are held only until parsed, and rows are written as they come."""
    started = time.perf_counter()
    real_root = os.path.realpath(gate.root)
    if known is None:
        known = cache.known_files(real_root) if cache.persistent else {}
        stats.precheck_rows = len(known)
    keys: dict[str, bytes] = {}
    langs: dict[str, str] = {}
    stat_rows: list[tuple[str, int, int, bytes]] = []
    got = _Collected()
    timings = {"hash": 0.0, "load": 0.0}
    pipeline = ParsePipeline(max_signature_chars=config.max_signature_chars, workers=config.workers,
                             threshold=config.parallel_threshold, adaptive=config.adaptive_workers, cancel=cancel)
    try:
        files = walked.files
        for i in range(0, len(files), _CHUNK_FILES):
            t = time.perf_counter()
            chunk = _read_chunk(gate, walked, files[i : i + _CHUNK_FILES], config, real_root, known,
                                (keys, langs, stat_rows), stats, cancel)
            timings["hash"] += time.perf_counter() - t
            got.add_parsed(pipeline.feed(_jobs_of(gate, chunk, langs, config, cache, got, timings)))
            if len(got.rows) >= _STORE_ROWS:
                got.flush(cache)
        got.add_parsed(pipeline.finish())
    except BaseException:
        pipeline.close(wait_for_workers=False)
        raise
    stats.cache_misses = len(got.decoded)
    stats.timings["hash"] = timings["hash"]
    stats.timings["load"] = timings["load"]
    stats.timings["parse"] = time.perf_counter() - started - timings["hash"] - timings["load"]
    got.flush(cache, stat_rows)

    paths: list[str] = []
    tags: list[FileTags | None] = []
    key_list: list[bytes] = []
    languages: dict[str, int] = {}
    for path in sorted(keys):
        key = keys[path]
        binary = got.binary.get(key)
        if binary is None:
            walked.skip(SkipReason.unreadable)
            continue
        if binary:
            walked.skip(SkipReason.binary)
            continue
        parsed = got.decoded.get(key)
        if parsed is None:
            stats.cache_hits += 1
        paths.append(path)
        tags.append(parsed)
        key_list.append(key)
        languages[langs[path]] = languages.get(langs[path], 0) + 1
    return paths, _LazyTags(key_list, tags, cache), key_list, languages, keys


def _graph(root: Path, corpus_rows: tuple[list[str], _LazyTags, list[bytes]], cache: _cache.TagCache,
           stats: MapStats) -> Graph:
    """The tree's reference graph: its snapshot when the exact same files were seen, else the stored tables of
    the same directory with the changed files' rows replaced (when few changed), else built from all tags."""
    paths, tags, keys = corpus_rows
    # a content key covers the file's language, hence its family: the paths and keys identify the graph
    digest = hashlib.blake2b(f"graph-v{_GRAPH_VERSION}".encode(), digest_size=16)
    digest.update(b"".join(path.encode("utf-8", "surrogateescape") + b"\0" + key for path, key in zip(paths, keys)))
    snapshot_key = digest.digest()
    use_snapshots = cache.persistent and len(paths) >= _SNAPSHOT_MIN_FILES

    def families_of() -> list[str]:
        return [FAMILY[language_for(p).name] for p in paths]

    def rebuild() -> Graph:
        tags.prefetch()
        return _graphs.assemble(_graphs.tables_from_tags(paths, tags, families_of(), keys))

    base_key = f"graph-v{_GRAPH_VERSION}:{os.path.realpath(root)}"  # the tables last fully built in this directory
    if use_snapshots:
        # a damaged or outdated snapshot is rebuilt, never fatal
        try:
            graph = _graphs.load_graph(paths, lambda part: cache.load_graph(snapshot_key, part), rebuild)
            graph.key = snapshot_key
            stats.graph = "snapshot"
            return graph
        except Exception:
            pass
        families = families_of()
        blob = cache.load_base(base_key)
        if blob is not None:
            try:
                base = _graphs.loads(blob, _graphs.Tables)
                changed = _graphs.changed_files(base, paths, families, keys)
                if changed <= max(_PATCH_MIN_FILES, len(paths) // _PATCH_FRACTION):
                    tables, stats.graph_files = _graphs.patch_tables(base, paths, families, keys, tags)
                    stats.graph = "patched"
                    graph = _graphs.assemble(tables)
                    graph.key = snapshot_key
                    return graph
            except Exception:
                pass
    else:
        families = families_of()
    tags.prefetch()
    tables = _graphs.tables_from_tags(paths, tags, families, keys)
    graph = _graphs.assemble(tables)
    stats.graph, stats.graph_files = "built", len(paths)
    if use_snapshots:
        graph.key = snapshot_key
        cache.store_graph(snapshot_key, _graphs.graph_parts(graph), base=(base_key, _graphs.dumps(tables)))
    return graph


def _walk(root: Path, config: MapConfig, gate: Gate, cache: _cache.TagCache, cancel: threading.Event | None
          ) -> tuple[WalkResult, dict[str, tuple[int, int, bytes]] | None, list[str] | None]:
    """The files to map: from the last walk of this directory when nothing it depends on changed (with the
    pre-check rows of unchanged files and the ignore files consulted), else walked (pre-check rows None)."""
    if cache.persistent:
        found = _walks.load(cache.db, _walks.snapshot_name(str(root), config, EXTENSIONS), str(root), config)
        if found is not None:
            return found
    rules = IgnoreRules(root, config)
    walked = walk_files(root, config, extensions=EXTENSIONS, sniff=False, rules=rules, gate=gate, cancel=cancel)
    return walked, None, rules.consulted


def build_repo_map(
    root: Path | str,
    *,
    focus: str | Focus | None = None,
    token_budget: int = 2048,
    config: MapConfig | None = None,
    cache_dir: Path | str | None = None,
    cancel: threading.Event | None = None,
) -> RepoMap:
    """Map the tree at `root`: every supported file tagged (cached by content), ranked for `focus`, rendered.

    `cache_dir` defaults to `$BUGSLEUTH_CACHE_DIR/repomap` (else `~/.cache/bugsleuth/repomap`). Every file is
    read through one `repomap.gate.Gate` (a symlink to a secret or out of the tree is skipped, never read).
    Raises `MapInputError` when `root` is missing or not a directory, `MapCancelled` once `cancel` is set
    (looked at between files, in the parse pool and between phases).
    """
    started = time.perf_counter()
    root = Path(root)
    if not root.exists():
        raise MapInputError(f"no such directory: {root}")
    if not root.is_dir():
        raise MapInputError(f"not a directory: {root}")
    config = config or MapConfig()
    stats = MapStats()
    t = time.perf_counter()
    cache = _cache.TagCache(Path(cache_dir) if cache_dir is not None else _cache.default_cache_dir())
    stats.cache_path = str(cache.path) if cache.path else None
    gate = Gate(root, deny=config.deny)
    walked, known, consulted = _walk(root, config, gate, cache, cancel)
    stats.walk = "walked" if known is None else "snapshot"
    stats.timings["walk"] = time.perf_counter() - t
    walk_skipped = dict(walked.skipped)  # before the files' own skips (unsupported, binary) are counted
    paths, tags, keys, languages, all_keys = _collect(gate, walked, config, cache, stats, cancel, known)
    if cache.persistent and (known is None or stats.files_hashed):
        _walks.store(cache.db, _walks.snapshot_name(str(root), config, EXTENSIONS), walked, walk_skipped,
                     consulted, all_keys)
    if cancel is not None and cancel.is_set():
        raise MapCancelled("cancelled before the graph was built")
    t = time.perf_counter()
    graph = _graph(root, (paths, tags, keys), cache, stats)
    stats.timings["graph"] = time.perf_counter() - t
    stats.files_indexed = len(paths)
    stats.definitions = int(graph.file_defs.sum())
    stats.parse_errors = int(graph.file_errors.sum())
    stats.skipped = dict(sorted(walked.skipped.items()))
    stats.languages = dict(sorted(languages.items()))
    corpus = _Corpus(root, paths, tags, keys, stats.languages, graph, cache, stats, {p: i for i, p in enumerate(paths)})
    repo_map = RepoMap(corpus, _as_focus(focus), token_budget, stats)
    stats.cores_decoded = tags.decoded
    stats.seconds = time.perf_counter() - started
    return repo_map

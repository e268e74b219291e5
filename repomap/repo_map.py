"""Build a repository map: walk, tag (cached by content hash), rank for a focus, render within a token budget."""

from __future__ import annotations

import hashlib
import pickle
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from repomap import cache as _cache
from repomap._collect import LazyTags, collect, reference_graph
from repomap.config import MapConfig
from repomap.focus import Focus
from repomap.gate import Gate
from repomap.graph import Graph
from repomap.index import SymbolIndex
from repomap.names import NameStore
from repomap.languages import EXTENSIONS, TEXT_SOURCE_EXTENSIONS, is_text_source
from repomap.rank import Ranking, rank
from repomap.render import MODULE_TREE_VERSION, RenderInput, module_tree, render_map
from repomap.tags import Definition, FileTags, Reference
from repomap import walk_snapshot as _walks
from repomap.walk import IgnoreRules, MapCancelled, WalkedFile, WalkResult, walk_files

_WALKED = EXTENSIONS | TEXT_SOURCE_EXTENSIONS
"""What the walk keeps: files the map parses, and the text sources it lists for the offline ranking."""


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
    tags: LazyTags
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
    text_sources: list[WalkedFile] = field(default_factory=list)
    """Files of languages with no grammar here the walk kept (`TEXT_SOURCE_EXTENSIONS`): listed, not parsed."""
    attribute_dirs: list[str] = field(default_factory=list)
    """Directories whose listing holds a `.gitattributes` (`WalkResult.attribute_dirs`)."""


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

    @property
    def text_sources(self) -> list[WalkedFile]:
        """The tree's source files of languages with no grammar here (`repomap.languages.TEXT_SOURCE_EXTENSIONS`),
        found by the same walk and rules as the mapped files, with their size and mtime: not parsed, listed for
        the offline ranking, which reads them as text."""
        return self._corpus.text_sources

    @property
    def attribute_dirs(self) -> list[str]:
        """The directories of the walked tree (root-relative, "" for the root) whose listing holds a
        `.gitattributes`: found by the walk (or its snapshot), so a reader of the attributes probes nothing."""
        return self._corpus.attribute_dirs

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


def _walk(root: Path, config: MapConfig, gate: Gate, cache: _cache.TagCache, cancel: threading.Event | None
          ) -> tuple[WalkResult, dict[str, tuple[int, int, bytes]] | None, list[str] | None]:
    """The files to map: from the last walk of this directory when nothing it depends on changed (with the
    pre-check rows of unchanged files and the ignore files consulted), else walked (pre-check rows None)."""
    if cache.persistent:
        found = _walks.load(cache.db, _walks.snapshot_name(str(root), config, _WALKED), str(root), config)
        if found is not None:
            return found
    rules = IgnoreRules(root, config)
    walked = walk_files(root, config, extensions=_WALKED, sniff=False, rules=rules, gate=gate, cancel=cancel)
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
    every = walked.files
    walked.files = [f for f in every if not is_text_source(f.path)]
    text_sources = [f for f in every if is_text_source(f.path)]
    paths, tags, keys, languages, all_keys = collect(gate, walked, config, cache, stats, cancel, known)
    if cache.persistent and (known is None or stats.files_hashed):
        _walks.store(cache.db, _walks.snapshot_name(str(root), config, _WALKED), replace(walked, files=every),
                     walk_skipped, consulted, all_keys)
    if cancel is not None and cancel.is_set():
        raise MapCancelled("cancelled before the graph was built")
    t = time.perf_counter()
    graph = reference_graph(root, (paths, tags, keys), cache, stats)
    stats.timings["graph"] = time.perf_counter() - t
    stats.files_indexed = len(paths)
    stats.definitions = int(graph.file_defs.sum())
    stats.parse_errors = int(graph.file_errors.sum())
    stats.skipped = dict(sorted(walked.skipped.items()))
    stats.languages = dict(sorted(languages.items()))
    corpus = _Corpus(root, paths, tags, keys, stats.languages, graph, cache, stats, {p: i for i, p in enumerate(paths)},
                     text_sources=text_sources, attribute_dirs=walked.attribute_dirs)
    repo_map = RepoMap(corpus, _as_focus(focus), token_budget, stats)
    stats.cores_decoded = tags.decoded
    stats.seconds = time.perf_counter() - started
    return repo_map

"""A graph snapshot as raw arrays, one stored part each, read on first use; name and path lookups that decode
only the language family (or the table) a query needs.

A snapshot is a header (JSON: format version, file count, dtype and length of every part) and parts: each array
of `repomap.graph.Graph` as raw bytes (integer columns narrowed to int32), the names in (family, name) order
"\0"-joined, the per-file family codes and the two path lookups (`module_files`, `suffixes`) as sorted keys with
rows of file ids. Loading reads the header and the small parts; PageRank's edge arrays are read when a ranking
is not cached.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable

import numpy as np

SNAPSHOT_VERSION = 2
"""Format of a stored graph snapshot (1 was one pickle)."""

_NARROW = frozenset({"src", "dst", "sym_src", "def_rank", "def_file", "file_defs", "sym_starts"})
"""Integer arrays stored as int32 and widened on load (halves the bytes read)."""

class Names:
    """Name → position in (language family, name) order, the order of every floating-point sum over names: from
    a vocabulary and its order (a built graph) or from the sorted names of a snapshot, split per family on use."""

    def __init__(self, vocab: dict[str, dict[str, int]] | None = None, order: np.ndarray | None = None,
                 stored: tuple[list[str], list[int], list[int], bytes] | None = None) -> None:
        self._vocab = vocab
        self._order = order
        # (families, first position per family and the total, byte bounds per family, names "\0"-joined)
        self._stored = stored
        self._tables: dict[str, tuple[int, list[bytes]]] = {}

    def _table(self, family: str) -> tuple[int, list[bytes]] | None:
        """(first position, the family's names as sorted UTF-8 bytes: the same order as the strings)."""
        table = self._tables.get(family)
        if table is None and self._stored is not None:
            families, starts, bounds, blob = self._stored
            if family not in families:
                return None
            k = families.index(family)
            names = blob[bounds[k]:bounds[k + 1]].split(b"\0") if starts[k + 1] > starts[k] else []
            table = self._tables[family] = (starts[k], names)
        return table

    def _find(self, table: tuple[int, list[bytes]], name: str) -> int:
        first, names = table
        encoded = name.encode("utf-8", "surrogatepass")
        k = bisect.bisect_left(names, encoded)
        return first + k if k < len(names) and names[k] == encoded else -1

    def position(self, family: str, name: str) -> int | None:
        """The position of a name of a language family, None when the tree never mentions it."""
        if self._vocab is not None:
            nid = self._vocab.get(family, {}).get(name)
            return None if nid is None else int(self._order[nid])
        table = self._table(family)
        found = self._find(table, name) if table is not None else -1
        return found if found >= 0 else None

    def positions(self, family: str, names: list[str]) -> np.ndarray:
        """The position of each name of a language family (-1 for a name the tree never mentions)."""
        if self._vocab is not None:
            vocab = self._vocab.get(family, {})
            ids = np.array([vocab.get(name, -1) for name in names], dtype=np.int64)
            return np.where(ids >= 0, self._order[np.maximum(ids, 0)], -1) if len(ids) else ids
        table = self._table(family)
        return np.array([self._find(table, name) if table is not None else -1 for name in names], dtype=np.int64)

    def dump(self) -> tuple[list[str], list[int], list[int], bytes]:
        """(families, first position per family, byte bounds per family, names in position order "\0"-joined)."""
        if self._stored is not None:
            return self._stored
        assert self._vocab is not None
        families = sorted(self._vocab)
        starts, bounds, chunks, position, offset = [], [], [], 0, 0
        for family in families:
            names = sorted(self._vocab[family])
            chunk = "\0".join(names).encode("utf-8", "surrogatepass")
            starts.append(position)
            bounds.append(offset)
            chunks.append(chunk)
            position += len(names)
            offset += len(chunk)
        return families, starts + [position], bounds + [offset], b"".join(chunks)


class StoredIndex:
    """A `str → list of file ids` map stored as sorted keys and rows of ids (`Graph.suffixes` of a snapshot)."""

    def __init__(self, keys: bytes, offsets: np.ndarray, values: np.ndarray) -> None:
        self._blob = keys
        self._keys: list[bytes] | None = None
        self._offsets = offsets
        self._values = values

    def get(self, key: str, default: list[int] | None = None) -> list[int] | None:
        """The file ids of `key` in path order, `default` when absent."""
        if self._keys is None:
            self._keys = self._blob.split(b"\0") if len(self._offsets) > 1 else []
        encoded = key.encode("utf-8", "surrogatepass")
        k = bisect.bisect_left(self._keys, encoded)
        if k == len(self._keys) or self._keys[k] != encoded:
            return default
        return self._values[self._offsets[k]:self._offsets[k + 1]].tolist()


def _index_parts(mapping: dict[str, list[int]]) -> tuple[bytes, np.ndarray, np.ndarray]:
    keys = sorted(mapping)
    counts = np.array([len(mapping[k]) for k in keys], dtype=np.int64)
    offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(counts)]).astype(np.int64)
    values = np.fromiter((i for k in keys for i in mapping[k]), dtype=np.int32, count=int(offsets[-1]))
    return "\0".join(keys).encode("utf-8", "surrogatepass"), offsets, values


def dump_parts(graph, arrays: tuple[str, ...]) -> dict[str, bytes]:
    """The stored parts of a built graph (`arrays`: the names of its arrays), the header under `header`."""
    parts: dict[str, bytes] = {}
    specs: dict[str, tuple[str, int]] = {}

    def put(name: str, value: np.ndarray) -> None:
        value = np.ascontiguousarray(value.astype(np.int32) if name in _NARROW else value)
        parts[name] = value.tobytes()
        specs[name] = (value.dtype.str, len(value))

    for name in arrays:
        put(name, getattr(graph, name))
    families = sorted(set(graph.families))
    code = {f: i for i, f in enumerate(families)}
    put("family_codes", np.array([code[f] for f in graph.families], dtype=np.uint8))
    name_families, starts, bounds, blob = graph.names.dump()
    parts["names"] = blob
    for label in ("module_files", "suffixes"):
        keys, offsets, values = _index_parts(getattr(graph, label))
        parts[f"{label}.keys"] = keys
        put(f"{label}.offsets", offsets)
        put(f"{label}.values", values)
    header = {"version": SNAPSHOT_VERSION, "files": len(graph.paths), "families": families,
              "name_families": name_families, "name_starts": starts, "name_bounds": bounds, "arrays": specs}
    parts["header"] = json.dumps(header, sort_keys=True).encode()
    return parts


def load_parts(paths: list[str], read: Callable[[str], bytes | None], graph_cls, fallback: Callable[[], object]):
    """The graph of the files `paths` from its stored parts (`read`: name → bytes, None when gone); arrays are
    read on first use, from `fallback()` (the graph built afresh) when their part is gone by then. Raises
    ValueError when the header is missing, of another format or of another file count."""
    header_blob = read("header")
    if header_blob is None:
        raise ValueError("no snapshot header")
    header = json.loads(header_blob)
    if (header.get("version") != SNAPSHOT_VERSION or header.get("files") != len(paths)
            or len(header["name_starts"]) != len(header["name_families"]) + 1):
        raise ValueError(f"not a graph snapshot of version {SNAPSHOT_VERSION} for {len(paths)} files")
    specs = header["arrays"]
    rebuilt: list[object] = []

    def array(name: str) -> np.ndarray:
        data = read(name)
        if data is None:  # evicted by another process since the header was read: identical when rebuilt
            if not rebuilt:
                rebuilt.append(fallback())
            return getattr(rebuilt[0], name)
        dtype, length = specs[name]
        value = np.frombuffer(data, dtype=np.dtype(dtype), count=length)
        return value.astype(np.int64) if name in _NARROW else value

    def blob(name: str) -> bytes:
        data = read(name)
        if data is None:
            raise ValueError(f"snapshot part {name} is missing")
        return data

    families_of = header["families"]
    families = [families_of[c] for c in array("family_codes").tolist()]
    names = Names(stored=(header["name_families"], header["name_starts"], header["name_bounds"], blob("names")))
    indexes = [StoredIndex(blob(f"{label}.keys"), array(f"{label}.offsets"), array(f"{label}.values"))
               for label in ("module_files", "suffixes")]
    return graph_cls(paths, families, names, *indexes, load=array)

"""Look definitions up by name: plain, qualified (`Class.method`), dotted module paths, and fuzzily."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from repomap.names import NameStore
from repomap.rank import module_keys
from repomap.tags import Definition


class SymbolIndex:
    """Every definition of a map, by file, name and qualified name.

    Results come best-ranked file first (the map's file order), then by path and line. With `store` (and `keys`,
    the content key per path) names are looked up in the persisted name index and only the files defining a name
    are decoded; without it the first lookup decodes every file. Both give the same results.
    """

    def __init__(
        self,
        loader: Callable[[str], list[Definition]],
        paths: list[str],
        file_order: dict[str, int] | None = None,
        *,
        store: NameStore | None = None,
        keys: list[bytes] | None = None,
    ) -> None:
        self._loader = loader
        self._paths = list(paths)
        self._store = store
        self._key_paths: dict[bytes, list[str]] | None = None
        if store is not None:
            assert keys is not None and len(keys) == len(paths)
            self._keys = keys
        self._order = file_order or {p: i for i, p in enumerate(sorted(paths))}
        self._by_file: dict[str, list[Definition]] = {}
        self._by_name: dict[str, list[Definition]] | None = None
        self._by_qual: dict[str, list[Definition]] | None = None
        self._by_lower: dict[str, list[str]] | None = None
        self._modules: dict[str, list[str]] | None = None

    def definitions(self, path: str) -> list[Definition]:
        """Definitions of one file in line order; empty for unknown files."""
        defs = self._by_file.get(path)
        if defs is None:
            defs = self._loader(path) if path in self._order else []
            self._by_file[path] = defs
        return defs

    @property
    def store(self) -> NameStore | None:
        """The persisted name index lookups use, None when they scan every file."""
        return self._store

    def _build(self) -> None:
        if self._by_name is not None:
            return
        if self._store is not None:
            self._store.ensure()
            self._by_name, self._by_qual = {}, {}
            return
        by_name: dict[str, list[Definition]] = {}
        by_qual: dict[str, list[Definition]] = {}
        modules: dict[str, list[str]] = {}
        for path in sorted(self._paths):
            for d in self.definitions(path):
                by_name.setdefault(d.name, []).append(d)
                by_qual.setdefault(d.qualname, []).append(d)
            for key in module_keys(path):
                modules.setdefault(key, []).append(path)
        by_lower: dict[str, list[str]] = {}
        for name in sorted(set(by_name) | set(by_qual)):
            by_lower.setdefault(name.lower(), []).append(name)
        self._by_name, self._by_qual, self._by_lower, self._modules = by_name, by_qual, by_lower, modules

    def _sorted(self, defs: list[Definition]) -> list[Definition]:
        unique = dict.fromkeys(defs)
        return sorted(unique, key=lambda d: (self._order.get(d.path, 1 << 30), d.path, d.start_line, d.qualname))

    def _stored(self, name: str) -> None:
        """Fill `_by_name` / `_by_qual` for one name from the persisted rows (only its files are decoded)."""
        assert self._store is not None and self._by_name is not None and self._by_qual is not None
        if name in self._by_name:
            return
        if self._key_paths is None:
            self._key_paths = {}
            for path, key in zip(self._paths, self._keys):
                self._key_paths.setdefault(key, []).append(path)
        paths = sorted(p for k in self._store.keys_of(name) for p in self._key_paths.get(k, ()))
        by_name: list[Definition] = []
        by_qual: list[Definition] = []
        for path in paths:
            self._store.stats.files_decoded += path not in self._by_file
            for d in self.definitions(path):
                if d.name == name:
                    by_name.append(d)
                if d.qualname == name:
                    by_qual.append(d)
        self._by_name[name] = by_name
        self._by_qual[name] = by_qual

    def _qual(self, name: str) -> list[Definition]:
        assert self._by_qual is not None
        if self._store is not None:
            self._stored(name)
        return self._by_qual.get(name, [])

    def _name(self, name: str) -> list[Definition]:
        assert self._by_name is not None
        if self._store is not None:
            self._stored(name)
        return self._by_name.get(name, [])

    def _module_files(self, module: str) -> list[str]:
        if self._modules is None:
            modules: dict[str, list[str]] = {}
            for path in sorted(self._paths):
                for key in module_keys(path):
                    modules.setdefault(key, []).append(path)
            self._modules = modules
        return self._modules.get(module, [])

    def _lower(self) -> dict[str, list[str]]:
        if self._by_lower is None:
            assert self._store is not None
            by_lower: dict[str, list[str]] = {}
            for name in self._store.names():
                by_lower.setdefault(name.lower(), []).append(name)
            self._by_lower = by_lower
        return self._by_lower

    def _exact(self, name: str) -> list[Definition]:
        name = name.strip().replace("::", ".").replace("#", ".")
        hits = list(self._qual(name)) + list(self._name(name))
        if hits or "." not in name:
            return hits
        parts = name.split(".")
        # a dotted module path: the longest module prefix, then a qualified name inside that file
        for k in range(len(parts) - 1, 0, -1):
            files = self._module_files(".".join(parts[:k]))
            if not files:
                continue
            rest = ".".join(parts[k:])
            found = [d for f in files for d in self.definitions(f) if d.qualname == rest]
            if found:
                return found
        # a qualified tail (`pkg.Class.method` where only `Class.method` is known)
        for k in range(1, len(parts) - 1):
            found = self._qual(".".join(parts[k:]))
            if found:
                return list(found)
        return []

    def lookup(self, name: str, *, fuzzy: bool = True, limit: int = 20) -> list[Definition]:
        """Definitions named `name` (plain, `Class.method`, dotted module path); near matches when `fuzzy`."""
        self._build()
        hits = self._exact(name)
        if hits or not fuzzy:
            return self._sorted(hits)[:limit]
        return self._sorted([d for n in self._near(name, limit) for d in self._exact(n)])[:limit]

    def _near(self, name: str, limit: int) -> list[str]:
        key = name.strip().lower()
        if not key:
            return []
        by_lower = self._lower()
        found: list[str] = list(by_lower.get(key, ()))
        if len(found) < limit and len(key) >= 3:
            tail = key.rpartition(".")[2]
            for lower in by_lower:
                if lower != key and (key in lower or (len(tail) >= 3 and lower.endswith("." + tail))):
                    found.extend(by_lower[lower])
                    if len(found) >= limit:
                        break
        if len(found) < limit:
            close = difflib.get_close_matches(key, list(by_lower), n=limit, cutoff=0.75)
            for lower in close:
                found.extend(by_lower[lower])
        return list(dict.fromkeys(found))[:limit]

    def suggest(self, name: str, limit: int = 5) -> list[str]:
        """Known names close to `name`, for a "did you mean" hint; excludes `name` itself."""
        self._build()
        return [n for n in self._near(name, limit + 1) if n != name][:limit]

    def enclosing(self, path: str, line: int) -> Definition | None:
        """The innermost definition of `path` whose lines contain `line`."""
        best: Definition | None = None
        for d in self.definitions(path):
            if d.start_line <= line <= d.end_line:
                if best is None or (d.end_line - d.start_line) <= (best.end_line - best.start_line):
                    best = d
        return best

    @property
    def paths(self) -> list[str]:
        """Indexed files, sorted."""
        return sorted(self._paths)

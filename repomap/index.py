"""Look definitions up by name: plain, qualified (`Class.method`), dotted module paths, and fuzzily."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from repomap.rank import module_keys
from repomap.tags import Definition


class SymbolIndex:
    """Every definition of a map, by file, name and qualified name.

    Results come best-ranked file first (the map's file order), then by path and line.
    """

    def __init__(
        self,
        loader: Callable[[str], list[Definition]],
        paths: list[str],
        file_order: dict[str, int] | None = None,
    ) -> None:
        self._loader = loader
        self._paths = list(paths)
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

    def _build(self) -> None:
        if self._by_name is not None:
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

    def _exact(self, name: str) -> list[Definition]:
        assert self._by_name is not None and self._by_qual is not None and self._modules is not None
        name = name.strip().replace("::", ".").replace("#", ".")
        hits = list(self._by_qual.get(name, ())) + list(self._by_name.get(name, ()))
        if hits or "." not in name:
            return hits
        parts = name.split(".")
        # a dotted module path: the longest module prefix, then a qualified name inside that file
        for k in range(len(parts) - 1, 0, -1):
            files = self._modules.get(".".join(parts[:k]))
            if not files:
                continue
            rest = ".".join(parts[k:])
            found = [d for f in files for d in self.definitions(f) if d.qualname == rest]
            if found:
                return found
        # a qualified tail (`pkg.Class.method` where only `Class.method` is known)
        for k in range(1, len(parts) - 1):
            found = self._by_qual.get(".".join(parts[k:]))
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
        assert self._by_lower is not None
        key = name.strip().lower()
        if not key:
            return []
        found: list[str] = list(self._by_lower.get(key, ()))
        if len(found) < limit and len(key) >= 3:
            tail = key.rpartition(".")[2]
            for lower in self._by_lower:
                if lower != key and (key in lower or (len(tail) >= 3 and lower.endswith("." + tail))):
                    found.extend(self._by_lower[lower])
                    if len(found) >= limit:
                        break
        if len(found) < limit:
            close = difflib.get_close_matches(key, list(self._by_lower), n=limit, cutoff=0.75)
            for lower in close:
                found.extend(self._by_lower[lower])
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

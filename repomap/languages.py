"""File extension → tree-sitter grammar and tags queries; each language is compiled once per process and reused."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

QUERY_DIR = Path(__file__).parent / "queries"


@dataclass(frozen=True)
class LanguageSpec:
    """Where one language's grammar lives and which files it parses."""

    name: str
    """Language name; also the stem of its query files (`queries/<name>-defs.scm`, `-refs.scm`)."""
    module: str
    """The grammar wheel's import name."""
    function: str
    """The function of `module` returning the language pointer."""
    extensions: tuple[str, ...]
    """Lower-case file extensions, with the dot."""
    query_name: str = ""
    """Stem of the query files when it differs from `name` (TSX reuses TypeScript's)."""
    family: str = ""
    """Languages of one family reference each other's names (JS/TS, C/C++); default: the name."""
    shared_defs: str = ""
    """Stem of a definitions query file read before the language's own, for what a family writes alike
    (`ecmascript-defs.scm`: JavaScript's and TypeScript's function shapes)."""


LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec("python", "tree_sitter_python", "language", (".py", ".pyi")),
    LanguageSpec("javascript", "tree_sitter_javascript", "language", (".js", ".jsx", ".mjs", ".cjs"), family="js",
                 shared_defs="ecmascript"),
    LanguageSpec("typescript", "tree_sitter_typescript", "language_typescript", (".ts", ".mts", ".cts"), family="js",
                 shared_defs="ecmascript"),
    LanguageSpec("tsx", "tree_sitter_typescript", "language_tsx", (".tsx",), query_name="typescript", family="js",
                 shared_defs="ecmascript"),
    LanguageSpec("go", "tree_sitter_go", "language", (".go",)),
    LanguageSpec("java", "tree_sitter_java", "language", (".java",)),
    LanguageSpec("rust", "tree_sitter_rust", "language", (".rs",)),
    LanguageSpec("c", "tree_sitter_c", "language", (".c", ".h"), family="c"),
    LanguageSpec("cpp", "tree_sitter_cpp", "language", (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++"), family="c"),
    LanguageSpec("ruby", "tree_sitter_ruby", "language", (".rb", ".rake", ".gemspec")),
    LanguageSpec("csharp", "tree_sitter_c_sharp", "language", (".cs",)),
    LanguageSpec("kotlin", "tree_sitter_kotlin", "language", (".kt", ".kts")),
    LanguageSpec("php", "tree_sitter_php", "language_php", (".php",)),
    LanguageSpec("swift", "tree_sitter_swift", "language", (".swift",)),
    LanguageSpec("scala", "tree_sitter_scala", "language", (".scala",)),
)
"""Every supported language."""

FAMILY: dict[str, str] = {spec.name: spec.family or spec.name for spec in LANGUAGES}
"""Language name → family name."""
BY_NAME: dict[str, LanguageSpec] = {spec.name: spec for spec in LANGUAGES}
BY_EXTENSION: dict[str, LanguageSpec] = {ext: spec for spec in LANGUAGES for ext in spec.extensions}
EXTENSIONS: frozenset[str] = frozenset(BY_EXTENSION)
"""Every extension with a grammar."""
TEXT_SOURCE_EXTENSIONS: frozenset[str] = frozenset(
    ".groovy .m .mm .fs .pl .pm .lua .r .jl .dart .ex .exs .erl .hs .ml .clj .el "
    ".tcl .zig .nim .vue .svelte .cu .cuh .pyx .pxd .pxi .jq .y .yy .l .ll .proto .sql".split())
"""Source files of languages with no grammar here (Groovy, Dart, Lua, ..., a project's own DSL like jq, a
parser generator's input): the repo map does not parse them, the offline ranking reads them as text with pattern
definitions. Shell scripts are left out: in most projects they are tooling."""


def is_text_source(path: str) -> bool:
    """A source file of a language with no grammar here (`TEXT_SOURCE_EXTENSIONS`), by its name."""
    return os.path.splitext(path)[1].lower() in TEXT_SOURCE_EXTENSIONS


CPP_HEADER = re.compile(
    rb"^[ \t]*(?:template[ \t]*<|namespace(?:[ \t]+[A-Za-z_][\w:]*)?\s*\{|(?:class|struct)[ \t]+[A-Za-z_]\w*"
    rb"[ \t]*(?:final[ \t]*)?:[ \t]*(?:public|protected|private|virtual)\b|(?:public|protected|private)[ \t]*:"
    rb"|class[ \t]+[A-Za-z_]\w*[ \t]*(?:\{|$))|\bstd::\w",
    re.MULTILINE,
)
"""What only C++ has, at the start of a line (templates, namespaces, classes and access labels) or anywhere
(`std::`): a `.h` header holding one of them is C++, not C. (`using namespace` is left out: C headers write it in
their `#ifdef __cplusplus` sections.)"""


def language_for(path: str, data: bytes | None = None) -> LanguageSpec | None:
    """The language of a file, from its extension; None when unsupported. With its bytes, a `.h` header written in
    C++ is C++ (parsed as C it costs three times as much and yields garbled definitions)."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    if dot <= 0:
        return None
    ext = name[dot:].lower()
    if ext == ".h" and data is not None and CPP_HEADER.search(data):
        return BY_NAME["cpp"]
    return BY_EXTENSION.get(ext)


@dataclass(frozen=True)
class Grammar:
    """A compiled language: parser and the two tags queries."""

    spec: LanguageSpec
    """Which language."""
    language: Any
    """The `tree_sitter.Language`."""
    parser: Any
    """A `tree_sitter.Parser` for it (not thread-safe: one process, one parser)."""
    query: Any
    """Both query files as one query, so each tree is traversed once: `@def.<kind>` on a definition node,
    `@name` on its name, optional `@receiver`; `@scope` marks containers that qualify names without being
    definitions (Rust `impl`); `@ref.<kind>` on a referenced name."""


@cache
def grammar(name: str) -> Grammar:
    """The compiled grammar and queries of a language, built on first use."""
    # lazy: tree-sitter loads with the first parse; a map read from its cache needs none
    from tree_sitter import Language, Parser, Query

    spec = BY_NAME[name]
    module = importlib.import_module(spec.module)
    language = Language(getattr(module, spec.function)())
    stem = spec.query_name or spec.name
    files = [f"{spec.shared_defs}-defs.scm"] if spec.shared_defs else []
    files += [f"{stem}-defs.scm", f"{stem}-refs.scm"]
    source = "\n".join((QUERY_DIR / name).read_text(encoding="utf-8") for name in files)
    return Grammar(spec, language, Parser(language), Query(language, source))


@cache
def grammar_versions() -> str:
    """Versions of tree-sitter and every grammar wheel plus a digest of the queries: part of the cache key.

    Read from the dist-info directory names (cheap) rather than `importlib.metadata` (slow on the warm path).
    """
    parts: list[str] = []
    spec = importlib.util.find_spec("tree_sitter")
    if spec is not None and spec.origin:
        site = Path(spec.origin).parent.parent
        try:
            parts = sorted(n for n in os.listdir(site) if n.startswith("tree_sitter") and n.endswith(".dist-info"))
        except OSError:
            parts = []
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(QUERY_DIR.glob("*.scm")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return ";".join(parts) + ";q=" + digest.hexdigest()

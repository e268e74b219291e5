"""The repo map: a tree-sitter index of a repository, ranked by a bug report and rendered within a token budget."""

from repomap.config import MapConfig
from repomap.focus import Focus
from repomap.frames import Frame
from repomap.index import SymbolIndex
from repomap.repo_map import MapInputError, MapStats, RankedFile, RankedSymbol, RepoMap, build_repo_map
from repomap.tags import Definition, DefKind, Reference, RefKind
from repomap.tokens import count_tokens
from repomap.gate import DENY_GLOBS, DenyRules, Gate, Refused
from repomap.walk import IgnoreRules, MapCancelled, SkipReason, WalkResult, walk_files

__all__ = (
    "DENY_GLOBS",
    "DenyRules",
    "Gate",
    "MapCancelled",
    "Refused",
    "DefKind",
    "Definition",
    "Focus",
    "Frame",
    "IgnoreRules",
    "MapConfig",
    "MapInputError",
    "MapStats",
    "RankedFile",
    "RankedSymbol",
    "RefKind",
    "Reference",
    "RepoMap",
    "SkipReason",
    "SymbolIndex",
    "WalkResult",
    "build_repo_map",
    "count_tokens",
    "walk_files",
)

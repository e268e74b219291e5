"""Limits and switches of the repo map, as plain data."""

from __future__ import annotations

from dataclasses import dataclass

from repomap.encoding import SNIFF_BYTES

MAX_DEPTH = 100
"""Directory levels below the root that are walked (the map) or searched (`search`); deeper ones are skipped."""

DEPENDENCY_DIRS: tuple[str, ...] = (
    "node_modules",
    "bower_components",
    ".venv",
    "venv",
    "site-packages",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hg",
    ".svn",
)
"""Dependency, virtualenv, cache and foreign-VCS directory names: never walked, never searched (funnel's `search`
skips them even when no `.gitignore` names them)."""

DEFAULT_EXCLUDE_DIRS: tuple[str, ...] = (
    *DEPENDENCY_DIRS,
    "vendor",
    "third_party",
    "build",
    "dist",
    "target",
    "out",
    ".next",
)
"""Directory names never walked into: dependencies, virtualenvs, caches and build outputs."""

SECRET_FILE_GLOBS: tuple[str, ...] = (
    ".env*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".htpasswd",
    "credentials*",
    "*.p12",
    "*.pfx",
    "*.jks",
)
"""File-name patterns of secret files (dotenv files, keys, credentials): never indexed, shown, searched or read."""

SECRET_DIRS: tuple[str, ...] = (".ssh", ".aws", ".gnupg")
"""Directory names whose whole subtree is secret."""

DEFAULT_EXCLUDE_FILES: tuple[str, ...] = (
    "*.min.js",
    "*.min.css",
    "*.map",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.generated.*",
    "*.lock",
    "package-lock.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "poetry.lock",
    "Cargo.lock",
    "Gemfile.lock",
    "go.sum",
    "composer.lock",
    # secrets: never indexed, so never shown in the map (the same lists make repomap.gate.DENY_GLOBS)
    *SECRET_FILE_GLOBS,
    *(f"**/{d}/**" for d in SECRET_DIRS),
)
"""File-name patterns (gitignore syntax) of minified, generated and lock files, and of secret files."""


@dataclass(frozen=True)
class MapConfig:
    """What the walker skips and how the map is built."""

    exclude_dirs: tuple[str, ...] = DEFAULT_EXCLUDE_DIRS
    """Directory names skipped wherever they appear."""
    exclude_files: tuple[str, ...] = DEFAULT_EXCLUDE_FILES
    """Extra gitignore-style patterns, applied at the repository root like a top-level `.gitignore`."""
    extra_excludes: tuple[str, ...] = ()
    """More gitignore-style patterns on top of the defaults (the usual knob to turn)."""
    honour_gitignore: bool = True
    """Read `.gitignore` files (nested ones too) and `.git/info/exclude`."""
    max_file_bytes: int = 1_000_000
    """Files larger than this are skipped as too large."""
    sniff_bytes: int = SNIFF_BYTES
    """How much of a file's head is searched for a NUL byte to call it binary."""
    follow_symlinks: bool = True
    """Follow directory and file symlinks (loops, escapes and links to secrets are skipped and counted)."""
    max_depth: int = MAX_DEPTH
    """Directories nested deeper than this below the root are not walked (counted as `too_deep`)."""
    deny: tuple[str, ...] = ()
    """Per-repository deny patterns on top of `repomap.gate.DENY_GLOBS` (never indexed; the tools refuse them too)."""
    parallel_threshold: int = 200
    """Cold parses of more files than this run in a process pool."""
    workers: int = 2
    """Process pool size for cold parses (at most the number of cores)."""
    adaptive_workers: bool = True
    """Start only as many parse processes as there are idle cores (sampled for 0.1 s from /proc/stat, else by the
    1-minute load average)."""
    max_signature_chars: int = 200
    """Signatures are trimmed to this many characters."""

    @property
    def file_patterns(self) -> tuple[str, ...]:
        """Every file-level exclusion pattern, defaults first."""
        return self.exclude_files + self.extra_excludes

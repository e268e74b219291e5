"""The house rules of `funnel/` (tests/funnel/test_house_rules.py) hold in the other packages too: small functions
and files in `app/`, `repomap/`, `schemas/`, the benchmark scripts of `bench/` and the tests themselves, and a
lazy import that says why (`# lazy:`) everywhere but the tests. Alembic migrations (`app/migrations/`) are exempt:
they are never edited after release."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.funnel.test_house_rules import oversized, unexplained_imports

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "repomap", "schemas", "bench")
"""The packages held to every rule."""
SIZED_ONLY = ("tests",)
"""Held to the size rules only: a test may import inside itself to scope what it needs."""
MIGRATIONS = ROOT / "app" / "migrations"


def _sources(packages: tuple[str, ...]) -> list[Path]:
    return sorted(path for package in packages for path in (ROOT / package).rglob("*.py")
                  if not path.is_relative_to(MIGRATIONS))  # fmt: skip


SOURCES = _sources(PACKAGES)
SIZED = _sources(PACKAGES + SIZED_ONLY)


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_sources_of_every_package_are_found_and_migrations_left_out():
    assert {path.relative_to(ROOT).parts[0] for path in SIZED} == set(PACKAGES + SIZED_ONLY)
    assert len(SOURCES) > 100
    assert not any(path.is_relative_to(MIGRATIONS) for path in SIZED)


@pytest.mark.parametrize("path", SIZED, ids=_name)
def test_functions_and_files_stay_small(path):
    assert oversized(path) == []


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_imports_inside_functions_state_why(path):
    assert unexplained_imports(path) == []

"""The size rules of `funnel/` (tests/funnel/test_house_rules.py) hold in the other packages too: `app/`, `repomap/`
and `schemas/`. Alembic migrations (`app/migrations/`) are exempt: they are never edited after release."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.funnel.test_house_rules import oversized

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "repomap", "schemas")
MIGRATIONS = ROOT / "app" / "migrations"

SOURCES = sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
                 if not path.is_relative_to(MIGRATIONS))  # fmt: skip


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_sources_of_every_package_are_found_and_migrations_left_out():
    assert {path.relative_to(ROOT).parts[0] for path in SOURCES} == set(PACKAGES)
    assert len(SOURCES) > 100
    assert not any(path.is_relative_to(MIGRATIONS) for path in SOURCES)


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_functions_and_files_stay_small(path):
    assert oversized(path) == []

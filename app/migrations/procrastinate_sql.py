"""procrastinate's own SQL migrations, applied by our Alembic revisions (PostgreSQL only).

procrastinate ships its schema history as SQL files in the package (`procrastinate/sql/migrations`,
`{xx.yy.zz}_{ab}_{pre|post}_{what}.sql`), applied in name order; its Django app wraps one file per Django
migration. We do the same with Alembic: each revision that brings procrastinate's schema forward lists the files
it applies (`MIGRATIONS = (...)`), so one `alembic upgrade head` — run at every start-up under the advisory
lock — moves both our tables and procrastinate's, in order. Bumping the procrastinate pin means adding a
revision for the files the new version ships (`tests/app/test_procrastinate_migrations.py` fails until then).

Each file runs in its own transaction (an `ALTER TYPE ... ADD VALUE` must be committed before a later file
uses the value), atomically with its row in the ledger table, which makes a re-run skip what is already in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from importlib import resources

from alembic import op
from sqlalchemy.engine import Connection

PACKAGE = "procrastinate.sql.migrations"
"""Where the installed procrastinate keeps its migration files."""
LEDGER = "bugsleuth_procrastinate_migrations"
"""One row per procrastinate migration file applied to this database."""
LEGACY_SCHEMA_VERSION = "03.10.00"
"""Databases created before this ledger got procrastinate 3.10.0's `schema.sql` in one go: every migration
file up to this version is already in them."""

_NAME = re.compile(r"\d\d\.\d\d\.\d\d_\d\d_[a-z0-9_]+\.sql")


def shipped() -> list[str]:
    """The migration files of the installed procrastinate, in the order they apply."""
    return sorted(p.name for p in resources.files(PACKAGE).iterdir() if _NAME.fullmatch(p.name))


def version_of(name: str) -> str:
    """The `xx.yy.zz` version a migration file is named after."""
    return name[:8]


def up_to(version: str, *, below: bool = False) -> tuple[str, ...]:
    """The shipped migration files named after `version` or an earlier one (strictly earlier with `below`)."""
    return tuple(n for n in shipped() if version_of(n) < version or (not below and version_of(n) == version))


def _ensure_ledger(bind: Connection) -> None:
    if bind.exec_driver_sql(f"SELECT to_regclass('{LEDGER}')").scalar() is not None:
        return
    legacy = bind.exec_driver_sql("SELECT to_regclass('procrastinate_jobs')").scalar() is not None
    bind.exec_driver_sql(
        f"CREATE TABLE {LEDGER} (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    if legacy:
        _record(bind, up_to(LEGACY_SCHEMA_VERSION))


def _record(bind: Connection, names: Iterable[str]) -> None:
    for name in names:
        bind.exec_driver_sql(f"INSERT INTO {LEDGER} (name) VALUES ('{_checked(name)}') ON CONFLICT DO NOTHING")


def _checked(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a procrastinate migration file name: {name!r}")
    return name


def applied(bind: Connection) -> set[str]:
    """The migration files recorded in this database's ledger (empty before the first one)."""
    if bind.exec_driver_sql(f"SELECT to_regclass('{LEDGER}')").scalar() is None:
        return set()
    return {row[0] for row in bind.exec_driver_sql(f"SELECT name FROM {LEDGER}")}


def apply(names: Sequence[str]) -> None:
    """Apply the listed procrastinate migration files not applied yet, each in its own transaction.

    Called from a revision's `upgrade()`; does nothing on SQLite (procrastinate runs on PostgreSQL only).
    """
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    missing = sorted(set(names) - set(shipped()))
    if missing:
        raise RuntimeError(f"the installed procrastinate does not ship {', '.join(missing)}: check its version")
    _ensure_ledger(bind)
    done = applied(bind)
    todo = [name for name in names if name not in done]
    if not todo:
        return
    with op.get_context().autocommit_block():
        for name in todo:
            sql = resources.files(PACKAGE).joinpath(name).read_text(encoding="utf-8")
            # One simple-query string is one implicit transaction: the file and its ledger row commit together.
            # exec_driver_sql goes through the driver's parameter parsing: escape the literal percent signs.
            statement = f"{sql}\n;\nINSERT INTO {LEDGER} (name) VALUES ('{_checked(name)}');"
            bind.exec_driver_sql(statement.replace("%", "%%"))

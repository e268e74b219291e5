"""procrastinate's schema through our Alembic revisions, on the real PostgreSQL (each test in its own schema).

The reference is the installed procrastinate's `schema.sql`: a fresh database, a database upgraded from the
previous procrastinate release's schema, and a database created before the revisions existed must all end with
exactly its tables, columns, constraints, indexes, enums, functions and triggers.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from procrastinate.schema import SchemaManager

from app.db import MIGRATIONS_DIR, run_migrations
from app.migrations import procrastinate_sql

DATABASE = os.environ.get("BUGSLEUTH_TEST_PG_DATABASE", "test")
PG = f"postgres@127.0.0.1:5432/{DATABASE}"

CATALOG = {
    "columns": "SELECT table_name, column_name, data_type, udt_name, is_nullable, coalesce(column_default, '') "
    "FROM information_schema.columns WHERE table_schema = %(s)s AND table_name LIKE 'procrastinate%%'",
    "indexes": "SELECT indexname, replace(indexdef, %(s)s || '.', '') FROM pg_indexes WHERE schemaname = %(s)s "
    "AND tablename LIKE 'procrastinate%%'",
    "constraints": "SELECT c.conrelid::regclass::text, conname, pg_get_constraintdef(c.oid) FROM pg_constraint c "
    "JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = %(s)s "
    "AND c.conrelid::regclass::text LIKE 'procrastinate%%'",
    "enums": "SELECT t.typname, string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e "
    "JOIN pg_type t ON t.oid = e.enumtypid JOIN pg_namespace n ON n.oid = t.typnamespace "
    "WHERE n.nspname = %(s)s GROUP BY 1",
    "functions": "SELECT p.proname, pg_get_function_identity_arguments(p.oid), pg_get_function_result(p.oid), "
    "regexp_replace(p.prosrc, '\\s+', ' ', 'g') FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
    "WHERE n.nspname = %(s)s",
    "triggers": "SELECT t.tgrelid::regclass::text, t.tgname, replace(pg_get_triggerdef(t.oid), %(s)s || '.', '') "
    "FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = %(s)s AND NOT t.tgisinternal",
}


@pytest.fixture(scope="module")
def pg() -> Iterator[psycopg.Connection]:
    try:
        conn = psycopg.connect(f"postgresql://{PG}", connect_timeout=3, autocommit=True)
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is unreachable on 127.0.0.1:5432 (database {DATABASE}, user postgres): {exc}")
    with conn:
        yield conn


@pytest.fixture
def new_schema(pg: psycopg.Connection) -> Iterator[Callable[[], str]]:
    """Makes empty schemas, dropped after the test."""
    made: list[str] = []

    def make() -> str:
        name = f"bugsleuth_pmig_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        pg.execute(f"CREATE SCHEMA {name}")
        made.append(name)
        return name

    yield make
    for name in made:
        pg.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def url_for(schema: str) -> str:
    return f"postgresql+psycopg://{PG}?options=-csearch_path%3D{schema}"


def catalog(pg: psycopg.Connection, schema: str) -> dict[str, list[tuple[str, ...]]]:
    """procrastinate's objects in `schema`, schema names left out, in a comparable order."""
    pg.execute(f"SET search_path TO {schema}")
    try:
        return {
            kind: sorted(tuple(str(v) for v in row) for row in pg.execute(query, {"s": schema}).fetchall())
            for kind, query in CATALOG.items()
        }
    finally:
        pg.execute("RESET search_path")


@pytest.fixture
def reference(pg: psycopg.Connection, new_schema) -> dict[str, list[tuple[str, ...]]]:
    """The catalog of the installed procrastinate's own `schema.sql`."""
    schema = new_schema()
    pg.execute(f"SET search_path TO {schema}")
    pg.execute(SchemaManager.get_schema())
    pg.execute("RESET search_path")
    return catalog(pg, schema)


def _revisions() -> list:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return list(ScriptDirectory.from_config(config).walk_revisions())


def test_every_migration_file_of_the_installed_procrastinate_is_applied_by_a_revision():
    listed = [name for script in _revisions() for name in getattr(script.module, "MIGRATIONS", ())]
    missing = sorted(set(procrastinate_sql.shipped()) - set(listed))
    assert not missing, (
        f"procrastinate ships migrations no Alembic revision applies: {missing}. Add a revision in "
        "app/migrations/versions/ like 0003_procrastinate_03_04.py with MIGRATIONS = these names."
    )
    assert len(listed) == len(set(listed))


@pytest.mark.postgres
def test_a_fresh_database_gets_exactly_procrastinates_schema(pg, new_schema, reference):
    schema = new_schema()
    run_migrations(url_for(schema))
    assert catalog(pg, schema) == reference
    pg.execute(f"SET search_path TO {schema}")
    assert {r[0] for r in pg.execute(f"SELECT name FROM {procrastinate_sql.LEDGER}")} == set(procrastinate_sql.shipped())
    pg.execute("RESET search_path")


@pytest.mark.postgres
def test_a_database_on_the_previous_procrastinate_schema_is_upgraded_and_keeps_its_jobs(pg, new_schema, reference):
    schema = new_schema()
    url = url_for(schema)
    run_migrations(url, "0002")  # procrastinate's schema before its 03.04.00 migrations
    before = catalog(pg, schema)
    assert before != reference
    assert not any(f[0] == "procrastinate_retry_job_v2" for f in before["functions"])
    pg.execute(f"SET search_path TO {schema}")
    job_id = pg.execute(
        "SELECT procrastinate_defer_jobs_v1(ARRAY[ROW('investigations', 'bugsleuth.investigate', 0, NULL, NULL, "
        "'{\"investigation_id\": 7}'::jsonb, NULL)::procrastinate_job_to_defer_v1])"
    ).fetchone()[0][0]
    pg.execute("RESET search_path")

    run_migrations(url)

    assert catalog(pg, schema) == reference
    pg.execute(f"SET search_path TO {schema}")
    row = pg.execute("SELECT status::text, args FROM procrastinate_jobs WHERE id = %s", (job_id,)).fetchone()
    pg.execute("RESET search_path")
    assert row == ("todo", {"investigation_id": 7})


@pytest.mark.postgres
def test_a_database_made_from_procrastinates_schema_sql_before_the_revisions_upgrades_without_reapplying(
    pg, new_schema, reference
):
    schema = new_schema()
    url = url_for(schema)
    run_migrations(url, "0001")
    pg.execute(f"SET search_path TO {schema}")
    pg.execute(SchemaManager.get_schema())  # what revision 0001 used to do
    pg.execute("RESET search_path")

    run_migrations(url)
    run_migrations(url)  # and a second start changes nothing

    assert catalog(pg, schema) == reference

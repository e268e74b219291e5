"""Alembic environment, async-aware: migrations run on the same async drivers the service uses."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from app.models import Base

target_metadata = Base.metadata

_PG_MIGRATION_LOCK = 7_411_092_333
"""Advisory lock id: the API and several workers may start (and migrate) at the same moment."""


def _run(connection: Connection) -> None:
    is_sqlite = connection.dialect.name == "sqlite"
    is_postgres = connection.dialect.name == "postgresql"
    if is_postgres:
        # A session lock, not a transaction one: procrastinate's migrations commit file by file
        # (app/migrations/procrastinate_sql.py). Committed here so that Alembic owns the transactions.
        connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        connection.commit()
    try:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=is_sqlite)
        with context.begin_transaction():
            context.run_migrations()
    finally:
        if is_postgres:
            connection.rollback()
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _PG_MIGRATION_LOCK})
            connection.commit()


async def _run_async(url: str) -> None:
    engine = create_async_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            await conn.run_sync(_run)
            await conn.commit()
    finally:
        await engine.dispose()


def _url() -> str:
    url = context.config.attributes.get("url") or context.config.get_main_option("sqlalchemy.url")
    if not url:
        from app.config import get_settings  # lazy: only when the caller passed no URL

        url = get_settings().resolved_database_url
    return url


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_async(_url()))

"""The database: one SQLAlchemy async code path for SQLite (aiosqlite, WAL) and PostgreSQL (psycopg)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, event, text
from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
T = TypeVar("T")


def create_engine(url: str, *, echo: bool = False) -> AsyncEngine:
    """An async engine for `url`, tuned per backend (SQLite: WAL, busy timeout, immediate write locks)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        # Keep the pool's reset-on-return: a request cancelled in the middle of a session (a browser closing
        # an event stream) can hand its connection back with our BEGIN IMMEDIATE still open, and without the
        # ROLLBACK on return that connection would hold the write lock and stall every other writer.
        engine = create_async_engine(url, echo=echo, pool_size=8, max_overflow=8, connect_args={"timeout": 30})
        _tune_sqlite(engine)
        return engine
    return create_async_engine(url, echo=echo, pool_size=10, max_overflow=10, pool_pre_ping=True)


def _tune_sqlite(engine: AsyncEngine) -> None:
    _tune_sqlite_connections(engine.sync_engine)


def _tune_sqlite_connections(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Manage transactions ourselves so every one takes the write lock up front: a deferred transaction
        # that reads then writes fails with SQLITE_BUSY instead of waiting when another writer got in first.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


class Database:
    """The engine and session factory of one process."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = url
        """SQLAlchemy URL."""
        self.engine = create_engine(url, echo=echo)
        """The async engine."""
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        """Session factory (objects stay readable after commit)."""
        self._sync_engine: Engine | None = None
        self._writer: ThreadPoolExecutor | None = None

    @property
    def is_postgres(self) -> bool:
        """Whether this is PostgreSQL."""
        return self.engine.dialect.name == "postgresql"

    @property
    def is_sqlite(self) -> bool:
        """Whether this is SQLite."""
        return self.engine.dialect.name == "sqlite"

    async def run_sqlite_write(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn(connection)` in one transaction on a dedicated writer thread (SQLite only).

        The same SQLAlchemy Core statements as the async path, but the whole transaction is one hop to
        the thread instead of three per statement through aiosqlite: about 5x less CPU per intake commit
        (measured: 0.7 ms against 3.6 ms), which is what keeps ingest latency flat on a busy machine."""
        if not self.is_sqlite:
            raise RuntimeError("run_sqlite_write is for SQLite; use a session")
        if self._sync_engine is None:
            self._sync_engine = create_sync_engine(self.engine.url.set(drivername="sqlite+pysqlite"), pool_size=1,
                                                   max_overflow=0, pool_reset_on_return=None)
            _tune_sqlite_connections(self._sync_engine)
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bugsleuth-sqlite-writer")
        engine = self._sync_engine

        def transaction() -> T:
            with engine.begin() as conn:
                return fn(conn)

        return await asyncio.get_running_loop().run_in_executor(self._writer, transaction)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session in a transaction: committed on success, rolled back on error."""
        async with self.sessions() as session, session.begin():
            yield session

    async def ping(self) -> bool:
        """True when the database answers a trivial query."""
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
            return True
        except Exception:
            return False

    async def migrate(self) -> None:
        """Bring the schema to the newest migration (safe to call from several processes at once)."""
        await asyncio.to_thread(run_migrations, self.url)

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
        if self._sync_engine is not None:
            self._sync_engine.dispose()
            self._sync_engine = None


def run_migrations(url: str, revision: str = "head") -> None:
    """Run Alembic migrations up to `revision` (blocking; runs its own event loop)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["url"] = url
    command.upgrade(config, revision)


async def driver_connection(conn: AsyncConnection) -> Any:
    """The DB-API driver connection under a SQLAlchemy async connection (psycopg `AsyncConnection` on
    PostgreSQL), so another library can write inside the same transaction."""
    raw = await conn.get_raw_connection()
    return raw.driver_connection

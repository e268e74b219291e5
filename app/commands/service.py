"""`bugsleuth serve`, `bugsleuth worker`, `bugsleuth repo add|list`: run and configure the service."""

from __future__ import annotations

import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any

import typer

from app.commands._settings import settings_or_exit


def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default: settings.host, 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: settings.port, 8000)")] = None,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(help="Reverse proxies trusted for X-Forwarded-For/-Proto, comma-separated, '*' for any "
                          "(default: settings.forwarded_allow_ips; none: proxy headers ignored)"),
    ] = None,
) -> None:
    """Run the HTTP service (API, webhooks, dashboard; in-process workers on the embedded default)."""
    import uvicorn  # lazy: uvicorn would slow `bugsleuth --help` and every other command

    # Hand the GIL back sooner: the event loop waits on driver threads (aiosqlite) at every statement,
    # and the default 5 ms switch interval shows up directly in request latency.
    sys.setswitchinterval(0.0005)

    if host:
        os.environ["BUGSLEUTH_HOST"] = host
    if port:
        os.environ["BUGSLEUTH_PORT"] = str(port)
    if forwarded_allow_ips:
        os.environ["BUGSLEUTH_FORWARDED_ALLOW_IPS"] = forwarded_allow_ips
    settings = settings_or_exit()
    typer.echo(
        f"bugsleuth on http://{settings.host}:{settings.port}  (docs: /docs, data: {settings.data_dir.resolve()}, "
        f"jobs: {settings.resolved_job_backend})",
        err=True,
    )
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        access_log=False,
        # The client address (login throttle, logs) is the connection's unless a trusted proxy forwards it.
        proxy_headers=bool(settings.forwarded_allow_ips),
        forwarded_allow_ips=settings.forwarded_allow_ips or None,
    )


def worker(
    concurrency: Annotated[int | None, typer.Option(help="Jobs run at once (default: settings.workers)")] = None,
) -> None:
    """Run a procrastinate worker (PostgreSQL scale-out): investigations, retries, stalled-job repair."""
    settings = settings_or_exit()
    if not settings.is_postgres:
        typer.echo("error: `bugsleuth worker` needs BUGSLEUTH_DATABASE_URL=postgresql+psycopg://...; "
                   "on SQLite, `bugsleuth serve` runs the workers in-process", err=True)
        raise typer.Exit(2)
    _run(_run_worker(settings, concurrency))


def repo_add(
    name: Annotated[str, typer.Argument(help="owner/name, as webhooks and reports name it")],
    location: Annotated[str, typer.Argument(help="Local path, or git URL (cloned into the data dir)")],
    default_ref: Annotated[str | None, typer.Option(help="Branch investigated when a report names none")] = None,
    replace: Annotated[bool, typer.Option(help="Replace an existing registration")] = False,
) -> None:
    """Register a repository."""
    # lazy: the service, the store and SQLAlchemy would slow `bugsleuth --help` and every other command
    from app import service, store
    from app.repos import is_git_url  # lazy: as above

    target = location if is_git_url(location) else str(Path(location).expanduser().resolve())

    async def run() -> None:
        runtime = await _runtime(settings_or_exit())
        try:
            view = await service.register_repository(
                runtime, name, target, default_ref=default_ref, replace=replace
            )
            typer.echo(f"registered {view.name} -> {view.location} ({view.kind})")
        except (store.DuplicateError, service.InvalidRepositoryError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        finally:
            await runtime.db.dispose()

    _run(run())


def repo_list() -> None:
    """List registered repositories."""
    from app import store  # lazy: the store and SQLAlchemy would slow every other command

    async def run() -> None:
        runtime = await _runtime(settings_or_exit())
        try:
            async with runtime.db.session() as s:
                repos = await store.list_repositories(s)
        finally:
            await runtime.db.dispose()
        if not repos:
            typer.echo("no repositories registered (bugsleuth repo add NAME PATH|URL)")
        for r in repos:
            typer.echo(f"{r.name}\t{r.kind}\t{r.location}" + (f"\t{r.default_ref}" if r.default_ref else ""))

    _run(run())


def register(cli: typer.Typer) -> None:
    """Add `serve`, `worker` and the `repo` group to the CLI."""
    cli.command("serve")(serve)
    cli.command("worker")(worker)
    repo = typer.Typer(help="The repository registry.", no_args_is_help=True)
    cli.add_typer(repo, name="repo")
    repo.command("add")(repo_add)
    repo.command("list")(repo_list)


def _run(coroutine: Coroutine[Any, Any, Any]) -> None:
    """Run a command's coroutine to its end."""
    import asyncio  # lazy: 40 ms on the start of every command (a warm `bugsleuth map` takes 0.7 s), few need it

    asyncio.run(coroutine)


async def _runtime(settings):  # noqa: ANN001, ANN202
    # lazy: SQLAlchemy would cost `bugsleuth --help` and every other command its import time
    from app.db import Database
    from app.runtime import Runtime

    db = Database(settings.resolved_database_url)
    await db.migrate()
    return Runtime(settings=settings, db=db)


async def _run_worker(settings, concurrency: int | None) -> None:  # noqa: ANN001
    # lazy: procrastinate and psycopg are needed only by `bugsleuth worker`
    from app.jobs.procrastinate_app import ProcrastinateJobs
    from app.observability import configure_logging

    configure_logging(settings.log_level, json_logs=settings.log_json)
    runtime = await _runtime(settings)
    jobs = ProcrastinateJobs(runtime)
    runtime.jobs = jobs
    await jobs.start()
    try:
        await jobs.run_worker(concurrency=concurrency)
    finally:
        await jobs.stop()
        await runtime.db.dispose()

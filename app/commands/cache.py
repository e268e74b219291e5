"""`bugsleuth cache show|prune`: what the caches hold, and pruning them under their caps."""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer

from app.commands._settings import settings_or_exit


def _human(n: int) -> str:
    from pydantic import ByteSize  # lazy: pydantic costs every other command (`map` first) 0.1 s to import

    return ByteSize(n).human_readable(separator=" ")


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "-"


def _parse_size(value: str | None) -> int | None:
    if value is None:
        return None
    from pydantic import ByteSize, TypeAdapter, ValidationError  # lazy: as in `_human`

    try:
        return int(TypeAdapter(ByteSize).validate_python(value))
    except ValidationError as exc:
        raise typer.BadParameter(f"{value!r} is not a size: use e.g. 500MB, 2GiB or a number of bytes") from exc


def register(cli: typer.Typer) -> None:
    """Add the `cache` group to the CLI."""
    group = typer.Typer(help="The caches that grow with use: trees, repo-map tags, term counts.", no_args_is_help=True)
    cli.add_typer(group, name="cache")

    @group.command("show")
    def show(as_json: Annotated[bool, typer.Option("--json", help="One JSON object per cache")] = False) -> None:
        """Show each cache: where it is, entries, size against its cap, last use, stale files."""
        from app import caches  # lazy: like every command, so that `bugsleuth --help` stays fast

        reports = caches.show(settings_or_exit(check=False))
        if as_json:
            for r in reports:
                typer.echo(json.dumps({
                    "cache": r.name, "location": str(r.location), "entries": r.entries, "bytes": r.bytes,
                    "disk_bytes": r.disk_bytes, "cap_bytes": r.cap, "oldest_use": r.oldest_use,
                    "newest_use": r.newest_use, "stale_files": [str(p) for p in r.stale],
                }))
            return
        typer.echo(f"{'cache':<6} {'entries':>8} {'size':>10} {'on disk':>10} {'cap':>10}  {'least recent use':<17} location")
        for r in reports:
            cap = _human(r.cap) if r.cap else "none"
            typer.echo(f"{r.name:<6} {r.entries:>8} {_human(r.bytes):>10} {_human(r.disk_bytes):>10} {cap:>10}  "
                       f"{_when(r.oldest_use):<17} {r.location}")
            if r.stale:
                typer.echo(f"       + {len(r.stale)} stale file(s) of older cache versions "
                           f"({_human(sum(p.stat().st_size for p in r.stale if p.exists()))}): removed by prune")

    @group.command("prune")
    def prune(
        max_size: Annotated[str | None, typer.Option(
            help="Prune each chosen cache down to this size (500MB, 2GiB...) instead of its configured cap")] = None,
        only: Annotated[list[str] | None, typer.Option(
            help="Prune only this cache: trees, tags or terms; repeatable")] = None,
    ) -> None:
        """Evict least recently used entries down to the caps, delete stale cache files, give the space back."""
        from app import caches  # lazy: like every command, so that `bugsleuth --help` stays fast

        unknown = [name for name in only or () if name not in caches.CACHES]
        if unknown:
            raise typer.BadParameter(f"unknown cache {unknown[0]!r}: choose from {', '.join(caches.CACHES)}",
                                     param_hint="--only")
        chosen = tuple(name for name in caches.CACHES if not only or name in only)
        results = caches.prune(settings_or_exit(check=False), only=chosen, max_size=_parse_size(max_size))
        if not results:
            typer.echo("nothing to prune: no cap is set (give --max-size)")
        for r in results:
            kept = f" (still over: {r.kept_in_use} used in the last hour, kept)" if r.kept_in_use else ""
            typer.echo(f"{r.name}: evicted {r.dropped} entr{'y' if r.dropped == 1 else 'ies'}, "
                       f"freed {_human(r.freed_bytes)}{kept}")

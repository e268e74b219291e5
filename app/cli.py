"""The `bugsleuth` command line: one Typer app; each command group lives in `app/commands/`."""

from __future__ import annotations

import os

import typer

from app.commands import cache, evaluate, investigate, mapping, mcp, schema, service, tools

cli = typer.Typer(
    name="bugsleuth",
    help="Read-only bug investigation: bug report in, validated diagnosis out.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)



@cli.callback()
def _root() -> None:
    """Read-only bug investigation: bug report in, validated diagnosis out."""


for _module in (mapping, tools, investigate, schema, evaluate, service, mcp, cache):
    _module.register(cli)


def main() -> None:
    """Entry point of the `bugsleuth` script."""
    # numpy's OpenBLAS starts a thread per core when numpy is first imported (CPU in every process that builds
    # a repo map) and nothing here multiplies matrices; set before any numpy import, inherited by workers, and
    # an explicit setting by the caller wins
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    cli()

"""The `bugsleuth` command line: one Typer app; each command group lives in `app/commands/`."""

from __future__ import annotations

import typer

from app.commands import evaluate, investigate, mapping, schema, service, tools

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


for _module in (mapping, tools, investigate, schema, evaluate, service):
    _module.register(cli)


def main() -> None:
    """Entry point of the `bugsleuth` script."""
    cli()

"""`bugsleuth schema`: print the diagnosis JSON Schema."""

from __future__ import annotations

import json

import typer


def register(cli: typer.Typer) -> None:
    """Add `schema` to the CLI."""

    @cli.command("schema")
    def schema_command() -> None:
        """Print the versioned JSON Schema of a diagnosis."""
        from schemas import diagnosis_json_schema  # lazy: the pydantic models cost every other command 0.1 s

        typer.echo(json.dumps(diagnosis_json_schema(), indent=2, sort_keys=True))

"""CLI commands: placeholder until its capability lands."""

from __future__ import annotations

import typer


def register(cli: typer.Typer) -> None:
    """Add this module's commands to the CLI."""

"""The service's settings as a command reads them: an invalid one ends the command with exit code 2 and its reason."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # only for the annotation: importing the settings costs every command, `--help` included
    from app.config import Settings


def settings_or_exit(*, check: bool = True) -> Settings:
    """The settings (`app.config.get_settings`), and with `check` refused when unusable together (`Settings.check`:
    a public bind without a token, a database URL no backend serves, a data directory that cannot be written); any
    `ConfigurationError` is printed and the command exits with code 2."""
    from app.config import ConfigurationError, get_settings  # lazy: pydantic-settings would slow `bugsleuth --help`

    try:
        settings = get_settings()
        if check:
            settings.check()
    except ConfigurationError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    return settings

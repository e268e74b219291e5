"""`bugsleuth mcp`: serve bugsleuth's tools to a coding agent (Claude Code, Cursor, Codex...) over MCP on stdio.

The same tools are served over streamable HTTP at `/mcp` by `bugsleuth serve`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(cli: typer.Typer) -> None:
    """Add `mcp` to the CLI."""

    @cli.command("mcp")
    def mcp_command(
        root: Annotated[
            list[Path] | None,
            typer.Option("--root", help="Directory under which repositories may be named by path (repeatable; "
                                        "default: the current directory). Registered repositories are always available."),
        ] = None,
    ) -> None:
        """Serve investigate, get_investigation, list_investigations, repo_map and the read-only tools over MCP
        (stdio), on the service's settings and database: investigations show on the dashboard."""
        # lazy: like every command, so that `bugsleuth --help` stays fast
        from app.commands._settings import settings_or_exit
        from app.commands.service import _run
        from app.mcp_server.stdio import serve_stdio

        roots = root or [Path.cwd()]
        missing = [str(r) for r in roots if not r.expanduser().is_dir()]
        if missing:
            typer.echo(f"error: --root is not a directory: {', '.join(missing)}", err=True)
            raise typer.Exit(2)
        _run(serve_stdio(settings_or_exit(), roots))

"""`bugsleuth map`: print the ranked repo map of a directory (text or JSON).

Exit codes: 0 on success (an empty tree gives an empty map), 2 on bad input (missing path, not a directory,
unreadable focus file).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from app.commands._files import read_text_source
from app.commands._terminal import say, terminal_safe


def _fail(message: str) -> None:
    say(f"bugsleuth map: {message}", err=True)
    raise typer.Exit(2)


def map_json(repo_map: Any, symbol_limit: int) -> dict[str, Any]:
    """The JSON document `map --json` prints: text, ranked files, top symbols and stats."""
    return {
        "root": str(repo_map.root),
        "token_budget": repo_map.token_budget,
        "text": repo_map.text,
        "files": [{"path": f.path, "score": round(f.score, 12)} for f in repo_map.files],
        "symbols": [
            {
                "name": s.definition.name,
                "qualname": s.definition.qualname,
                "kind": s.definition.kind.value,
                "path": s.definition.path,
                "start_line": s.definition.start_line,
                "end_line": s.definition.end_line,
                "signature": s.definition.signature,
                "score": round(s.score, 12),
            }
            for s in repo_map.symbols[:symbol_limit]
        ],
        "stats": asdict(repo_map.stats),
    }


def register(cli: typer.Typer) -> None:
    """Add `map` to the CLI."""

    @cli.command("map")
    def map_command(
        path: Annotated[Path, typer.Argument(help="Directory to map.")],
        focus: Annotated[str | None, typer.Option("--focus", help="Bug report text to rank for.")] = None,
        focus_file: Annotated[
            Path | None, typer.Option("--focus-file", help="Read the focus text from this file ('-': stdin).")
        ] = None,
        tokens: Annotated[int, typer.Option("--tokens", min=0, help="Token budget of the rendered map.")] = 2048,
        as_json: Annotated[bool, typer.Option("--json", help="Print ranked files, symbols and stats as JSON.")] = False,
        symbols: Annotated[int, typer.Option("--symbols", min=0, help="How many ranked symbols --json lists.")] = 200,
        cache_dir: Annotated[
            Path | None, typer.Option("--cache-dir", help="Tags cache directory (default: $BUGSLEUTH_CACHE_DIR/repomap).")
        ] = None,
        stats: Annotated[bool, typer.Option("--stats", help="Print build statistics to stderr.")] = False,
    ) -> None:
        """Print the token-budgeted repo map of PATH, ranked for an optional bug report."""
        # lazy: like every command, so that `bugsleuth --help` stays fast
        from repomap import MapInputError, build_repo_map

        if not path.exists():
            _fail(f"no such directory: {path}")
        if not path.is_dir():
            _fail(f"not a directory: {path}")
        text = focus
        if focus_file is not None:
            text = ((text + "\n") if text else "") + read_text_source(focus_file, "--focus-file")
        try:
            repo_map = build_repo_map(path, focus=text, token_budget=tokens, cache_dir=cache_dir)
        except MapInputError as exc:
            _fail(str(exc))
        if as_json:
            typer.echo(json.dumps(map_json(repo_map, symbols), indent=2, sort_keys=True, ensure_ascii=False))
        else:
            sys.stdout.write(terminal_safe(repo_map.text))
            sys.stdout.flush()
        if stats:
            s = repo_map.stats
            typer.echo(
                f"{s.files_indexed} files indexed, {s.definitions} definitions, "
                f"cache {s.cache_hits} hits / {s.cache_misses} misses, {s.parse_errors} with syntax errors, "
                f"skipped {s.skipped}, {s.seconds:.2f}s",
                err=True,
            )
            phases = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in s.timings.items())
            typer.echo(f"phases: {phases}; walk {s.walk or '-'}, graph {s.graph or '-'} ({s.graph_files} files), "
                       f"{s.files_hashed} hashed, {s.precheck_rows} pre-check rows, {s.cores_decoded} decoded",
                       err=True)

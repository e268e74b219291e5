"""`bugsleuth tools search|read|ls|symbol`: run one read-only tool and print exactly what the agent would see (a
control character written as its escape, `\\x1b`, so that a file's bytes cannot drive the terminal).

Exit codes: 0 on a result, 2 on a refused or invalid request (the reason on stderr), 1 when the
environment is broken (repository gone, ripgrep missing).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from app.commands._terminal import say

RepoOption = Annotated[Path, typer.Option("--repo", "-r", help="Repository root the tool is confined to.")]
DenyOption = Annotated[
    list[str] | None,
    typer.Option("--deny", help="Extra glob of withheld files (repeatable), on top of the built-in secret list."),
]


def _run(repo: Path, deny: list[str] | None, call: Callable) -> None:
    # lazy: the funnel's sandbox would slow `bugsleuth --help` and every other command
    from funnel.errors import ToolError, UnrecoverableError, UserError
    from funnel.tools.sandbox import Sandbox

    try:
        sb = Sandbox(repo, deny=tuple(deny or ()))
        result = call(sb)
    except (ToolError, UserError) as exc:
        say(str(exc), err=True)
        raise typer.Exit(2) from None
    except UnrecoverableError as exc:
        say(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    say(result.render())


def search_command(
    pattern: Annotated[str, typer.Argument(help="Rust-syntax regex (or literal text with --fixed-strings).")],
    repo: RepoOption = Path("."),
    path: Annotated[str, typer.Option("--path", help="Directory or file to search in.")] = ".",
    glob: Annotated[list[str] | None, typer.Option("--glob", "-g", help="Only paths matching (repeatable).")] = None,
    exclude: Annotated[list[str] | None, typer.Option("--exclude", help="Drop paths matching (repeatable).")] = None,
    fixed_strings: Annotated[bool, typer.Option("--fixed-strings", "-F", help="Pattern is literal text.")] = False,
    ignore_case: Annotated[bool, typer.Option("--ignore-case", "-i")] = False,
    context: Annotated[int, typer.Option("--context", "-C", help="Context lines around each match.")] = 0,
    max_results: Annotated[int, typer.Option("--max-results")] = 50,
    max_per_file: Annotated[int, typer.Option("--max-per-file")] = 10,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before ripgrep is killed.")] = 10.0,
    deny: DenyOption = None,
) -> None:
    """Search the repository with ripgrep (respects .gitignore, skips secrets and binaries)."""
    from funnel.tools import search  # lazy: only the command that runs a tool imports the tools

    _run(
        repo,
        deny,
        lambda sb: search(
            sb,
            pattern,
            path=path,
            fixed_strings=fixed_strings,
            globs=tuple(glob or ()),
            exclude=tuple(exclude or ()),
            ignore_case=ignore_case,
            context=context,
            max_results=max_results,
            max_per_file=max_per_file,
            timeout_s=timeout,
        ),
    )


def read_command(
    path: Annotated[str, typer.Argument(help="Repository-relative file path.")],
    repo: RepoOption = Path("."),
    start: Annotated[int, typer.Option("--start", "-s", help="First line (1-based).")] = 1,
    end: Annotated[int | None, typer.Option("--end", "-e", help="Last line (inclusive).")] = None,
    deny: DenyOption = None,
) -> None:
    """Print numbered lines of one file (at most 200 per call)."""
    from funnel.tools import read_range  # lazy: as in `search_command`

    _run(repo, deny, lambda sb: read_range(sb, path, start, end))


def ls_command(
    path: Annotated[str, typer.Argument(help="Repository-relative directory.")] = ".",
    repo: RepoOption = Path("."),
    depth: Annotated[int, typer.Option("--depth", "-d", help="Levels to expand.")] = 1,
    deny: DenyOption = None,
) -> None:
    """List a directory with kinds and sizes, under the repo map's ignore rules."""
    from funnel.tools import list_dir  # lazy: as in `search_command`

    _run(repo, deny, lambda sb: list_dir(sb, path, depth))


def symbol_command(
    name: Annotated[str, typer.Argument(help="Name, qualified name (Class.method) or approximate name.")],
    repo: RepoOption = Path("."),
    deny: DenyOption = None,
) -> None:
    """Find definitions of a symbol through the repo map's index."""
    from funnel.tools import find_symbol  # lazy: as in `search_command`

    def call(sb):
        from repomap import build_repo_map  # lazy: tree-sitter and the grammars load only when a symbol is looked up

        return find_symbol(sb, build_repo_map(sb.root).index, name)

    _run(repo, deny, call)


def register(cli: typer.Typer) -> None:
    """Add the `tools` command group to the CLI."""
    group = typer.Typer(
        name="tools",
        help="Run one of the four read-only tools and print exactly what the agent would see.",
        no_args_is_help=True,
    )
    group.command("search")(search_command)
    group.command("read")(read_command)
    group.command("ls")(ls_command)
    group.command("symbol")(symbol_command)
    cli.add_typer(group)

"""The MCP server: bugsleuth's tools for coding agents, on the official SDK's `MCPServer` (FastMCP in mcp 1.x).

Each tool only translates arguments to a `Backend` call and its answer to text (plus JSON as structured content);
a request that cannot be served raises `RequestError`, which the SDK returns as a tool error with its message.
"""

from __future__ import annotations

import logging
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from app.mcp_server import render
from app.mcp_server.backend import Backend, Tree, report_of
from app.mcp_server.progress import Step
from app.models import MAX_ID
from app.routes._types import MAX_OFFSET
from funnel.tools import find_symbol, list_dir, read_range, search
from schemas import Classification, Status
from schemas.report import MAX_BODY_CHARS, MAX_TITLE_CHARS

INSTRUCTIONS = """\
bugsleuth investigates bug reports without changing anything: `investigate` takes a report (title, and a body with \
the stack trace, logs and steps) and a repository, runs a bounded read-only investigation (explore -> deep_dive -> \
output, progress reported per phase) and returns a diagnosis whose every cited file and line was checked against the \
code. Name a repository as `list_repositories` shows it{paths}. `search`, `read_range`, `list_dir`, `find_symbol` and \
`repo_map` read the same read-only tree an investigation reads (a git repository at its default head or at `ref`), \
under the same sandbox as bugsleuth's own agents: secrets and files outside the repository are refused."""

Repository = Annotated[
    str, Field(description="A registered repository name (see list_repositories), or a directory path where allowed.")
]
Ref = Annotated[str | None, Field(description="Branch, tag, commit or version (default: the default branch head).")]
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _header(tree: Tree, text: str) -> str:
    return f"[{tree.label}]{' (' + tree.note + ')' if tree.note else ''}\n{text}"


def _new_server(instructions: str) -> MCPServer:
    """An `MCPServer`; its constructor calls `logging.basicConfig` (a Rich handler on the root logger) unless the
    root logger has a handler, and the process's logging is the service's to configure: give it one meanwhile."""
    root = logging.getLogger()
    placeholder = logging.NullHandler() if not root.handlers else None
    if placeholder is not None:
        root.addHandler(placeholder)
    try:
        return MCPServer(name="bugsleuth", title="bugsleuth", version="0.1.0", instructions=instructions,
                         log_level="WARNING")  # fmt: skip
    finally:
        if placeholder is not None:
            root.removeHandler(placeholder)


def build_server(backend: Backend, *, dashboard_url: str = "") -> MCPServer:
    """The MCP server over `backend`; `dashboard_url` prefixes the dashboard links it prints."""
    paths = f", or as a directory path under {', '.join(map(str, backend.roots))}" if backend.roots else ""
    server = _new_server(INSTRUCTIONS.format(paths=paths))
    _add_investigation_tools(server, backend, dashboard_url)
    _add_tree_tools(server, backend)
    return server


def _add_investigation_tools(server: MCPServer, backend: Backend, dashboard_url: str) -> None:
    """`investigate`, `get_investigation`, `list_investigations`, `list_repositories`."""

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
    async def investigate(
        repository: Repository,
        title: Annotated[str, Field(max_length=MAX_TITLE_CHARS, description="One-line summary of the bug.")],
        body: Annotated[str, Field(max_length=MAX_BODY_CHARS, description="Description, stack trace, logs, steps.")] = "",
        ref: Ref = None,
        explorer: Annotated[str | None, Field(description="'offline' or a model string such as 'openai:gpt-4o' "
                                              "(default: the server's configured explorer).")] = None,  # fmt: skip
        labels: Annotated[list[str], Field(max_length=50, description="Tracker labels, if any.")] = [],  # noqa: B006
        wait: Annotated[bool, Field(description="Wait for the diagnosis (False: return the queued investigation; "
                                    "get_investigation fetches it later).")] = True,  # fmt: skip
        ctx: Context | None = None,
    ) -> CallToolResult:
        """Investigate a bug report in a repository, read-only, and return the validated diagnosis: summary, root
        cause, suspects (file:line, symbol, evidence) and proposed changes. Reports progress per phase. The
        investigation is stored: it shows on the bugsleuth dashboard and in list_investigations."""

        async def progress(step: Step) -> None:
            if ctx is not None:
                await ctx.report_progress(step.progress, step.total, step.message)

        report = report_of(title, body, ref, labels)
        detail, notes = await backend.investigate(report, repository, explorer=explorer, wait=wait, progress=progress)
        return render.result(render.investigation_text(detail, notes, dashboard_url), render.investigation_json(detail))

    @server.tool(annotations=_READ_ONLY)
    async def get_investigation(
        investigation_id: Annotated[int, Field(ge=1, le=MAX_ID, description="Investigation id (from investigate or "
                                               "the list).")],
    ) -> CallToolResult:
        """One investigation: its status, the report, and the validated diagnosis once it is finished."""
        detail = await backend.investigation(investigation_id)
        return render.result(render.investigation_text(detail, base_url=dashboard_url), render.investigation_json(detail))

    @server.tool(annotations=_READ_ONLY)
    async def list_investigations(
        repository: Annotated[str | None, Field(description="Only this registered repository.")] = None,
        status: Status | None = None,
        classification: Classification | None = None,
        search: Annotated[str | None, Field(max_length=200, description="Text in the report title.")] = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 20,
        offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
    ) -> CallToolResult:
        """Stored investigations, newest first (from every intake: API, webhooks, dashboard, MCP)."""
        page = await backend.investigations(repo=repository, status=status, classification=classification,
                                            search=search, limit=limit, offset=offset)  # fmt: skip
        return render.result(render.page_text(page), page.model_dump(mode="json"))

    @server.tool(annotations=_READ_ONLY)
    async def list_repositories() -> CallToolResult:
        """The repositories this server can investigate (and where directories may be named by path)."""
        repos = await backend.repositories()
        text = render.repositories_text(repos, backend.roots)
        return render.result(text, {"repositories": [r.model_dump(mode="json") for r in repos],
                                    "roots": [str(r) for r in backend.roots or ()]})  # fmt: skip


def _add_tree_tools(server: MCPServer, backend: Backend) -> None:
    """`repo_map` and the four read-only tools, on a repository's read-only tree."""

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def repo_map(
        repository: Repository,
        focus: Annotated[str | None, Field(max_length=MAX_BODY_CHARS, description="Bug report text to rank the "
                                           "files and symbols for.")] = None,  # fmt: skip
        ref: Ref = None,
        tokens: Annotated[int, Field(ge=128, le=16384, description="Token budget of the map.")] = 2048,
    ) -> str:
        """The tree-sitter repo map of a repository: its most relevant files and definitions, ranked for `focus`."""
        tree, repo_map_ = await backend.repo_map(repository, ref, focus, tokens)
        s = repo_map_.stats
        stats = f"({s.files_indexed} files indexed, {s.definitions} definitions)"
        return _header(tree, f"{stats}\n{repo_map_.text}")

    @server.tool(name="search", annotations=_READ_ONLY, structured_output=False)
    async def search_tool(
        repository: Repository,
        pattern: Annotated[str, Field(min_length=1, max_length=1000, description="Rust-syntax regex, or literal "
                                      "text with fixed_strings.")],  # fmt: skip
        path: Annotated[str, Field(description="Directory or file to search in.")] = ".",
        fixed_strings: bool = False,
        globs: Annotated[list[str], Field(max_length=20, description="Only paths matching these globs.")] = [],  # noqa: B006
        exclude: Annotated[list[str], Field(max_length=20, description="Drop paths matching these globs.")] = [],  # noqa: B006
        ignore_case: bool = False,
        context: Annotated[int, Field(ge=0, le=10)] = 0,
        max_results: Annotated[int, Field(ge=1, le=200)] = 50,
        max_per_file: Annotated[int, Field(ge=1, le=200)] = 10,
        ref: Ref = None,
    ) -> str:
        """Search a repository with ripgrep (respects .gitignore; never secrets, binaries or .git)."""
        tree = await backend.tree(repository, ref)
        text = await backend.run_tool(tree, lambda sb, cancel: search(
            sb, pattern, path=path, fixed_strings=fixed_strings, globs=tuple(globs), exclude=tuple(exclude),
            ignore_case=ignore_case, context=context, max_results=max_results, max_per_file=max_per_file,
            cancel=cancel))  # fmt: skip
        return _header(tree, text)

    @server.tool(name="read_range", annotations=_READ_ONLY, structured_output=False)
    async def read_range_tool(
        repository: Repository,
        path: Annotated[str, Field(description="Repository-relative file path.")],
        start: Annotated[int, Field(ge=1, description="First line (1-based).")] = 1,
        end: Annotated[int | None, Field(ge=1, description="Last line, inclusive (at most 200 lines a call).")] = None,
        ref: Ref = None,
    ) -> str:
        """Numbered lines of one file of a repository."""
        tree = await backend.tree(repository, ref)
        text = await backend.run_tool(tree, lambda sb, _: read_range(sb, path, start, end))
        return _header(tree, text)

    @server.tool(name="list_dir", annotations=_READ_ONLY, structured_output=False)
    async def list_dir_tool(
        repository: Repository,
        path: Annotated[str, Field(description="Repository-relative directory.")] = ".",
        depth: Annotated[int, Field(ge=1, le=5)] = 1,
        ref: Ref = None,
    ) -> str:
        """Entries of a repository directory with kinds and sizes (ignored and secret files marked, never read)."""
        tree = await backend.tree(repository, ref)
        text = await backend.run_tool(tree, lambda sb, _: list_dir(sb, path, depth))
        return _header(tree, text)

    @server.tool(name="find_symbol", annotations=_READ_ONLY, structured_output=False)
    async def find_symbol_tool(
        repository: Repository,
        name: Annotated[str, Field(min_length=1, max_length=300, description="Name, Class.method, or approximate.")],
        ref: Ref = None,
    ) -> str:
        """Definitions of a symbol (path, lines, signature) from the repo map's index, with near names."""
        tree = await backend.tree(repository, ref)
        index = await backend.symbol_index(tree)
        text = await backend.run_tool(tree, lambda sb, _: find_symbol(sb, index, name))
        return _header(tree, text)

"""What the MCP tools do, on a service runtime: resolve a repository to its read-only tree, submit and follow an
investigation with progress, read stored investigations, build repo maps, run the four read-only tools.

The runtime is either the service's own (`/mcp` under `bugsleuth serve`: its job backend runs investigations, only
registered repositories are named) or one that `bugsleuth mcp` opens on the same settings and database (stdio:
this process runs the investigations it submits, and directories under its allowed roots may be named by path).
Either way an investigation is stored through `app.service`, so it shows on the dashboard.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from app import service, store
from app.dashboard.queries import search_investigations
from app.db import run_to_completion
from app.jobs.runner import run_investigation
from app.mcp_server.progress import PhaseProgress, Step
from app.repos import RepositoryError, name_from_remote, prepare_tree
from app.runtime import Runtime
from app.streams import poll_events
from app.views import InvestigationDetail, InvestigationSummary, Page, RepoView
from funnel.cancel import CancelToken
from funnel.explorers import resolve_explorer
from funnel.tools import Sandbox, UnrecoverableError, UserError
from funnel.tools import ToolError as FunnelToolError
from repomap import MapInputError, RepoMap, build_repo_map
from schemas import BugReport, Classification, Source, Status

log = logging.getLogger("bugsleuth.mcp")

POLL_S = 0.3
"""How often a followed investigation is checked for new events."""
SHUTDOWN_S = 3.0
"""How long closing waits for the runs this process started to record their cancellation (a stdio client kills
the server 4 s after closing its stdin)."""
MAP_CACHE = 4
"""Repo maps kept for `find_symbol` (per-commit trees only: a directory read in place may change)."""

ProgressFn = Callable[[Step], Awaitable[None]]
"""Receives each progress step of an `investigate` call."""


class RequestError(ToolError):
    """The caller's request cannot be served (unknown repository, path outside the allowed roots, bad ref, refused
    file): returned as an MCP tool error whose text says why and what to do instead."""


@dataclass(frozen=True)
class Tree:
    """The read-only tree one request reads."""

    repository: str
    """Registered name (or, for a directory named by path, the name it would be registered under)."""
    root: Path
    """Root of the tree: a per-commit read-only copy, or a directory that is not a git repository, in place."""
    commit: str | None
    """Commit of the tree (None: not a git repository)."""
    note: str | None = None
    """What the tree preparation wants said (a ref resolved to a tag, a directory read as is)."""

    @property
    def label(self) -> str:
        """`name @ commit` for headers."""
        return f"{self.repository} @ {self.commit[:12]}" if self.commit else f"{self.repository} (no git history)"


def _derived_name(path: Path) -> str:
    """The registry name of a directory named by path: its origin's `owner/name`, else the directory name."""
    return name_from_remote(path, default=path.name or "local")


class Backend:
    """The MCP tools' operations on one runtime."""

    def __init__(
        self, runtime: Callable[[], Runtime | None], *, roots: Sequence[Path] | None = None, runs_jobs: bool = False
    ) -> None:
        """`runtime` returns the runtime in force (None while the service starts); `roots`: directories under
        which a repository may be named by path (None: registered repositories only); `runs_jobs`: this process
        runs the investigations it submits (stdio) instead of the runtime's job backend (HTTP)."""
        self._runtime = runtime
        self.roots = [Path(r).expanduser().resolve() for r in roots] if roots is not None else None
        self.runs_jobs = runs_jobs
        self._runs: dict[int, tuple[asyncio.Task[None], CancelToken]] = {}
        self._maps: OrderedDict[Path, RepoMap] = OrderedDict()

    @property
    def runtime(self) -> Runtime:
        """The runtime in force."""
        runtime = self._runtime()
        if runtime is None:
            raise RequestError("the service is starting; try again in a moment")
        return runtime

    # ------------------------------------------------------------------------------------------- repositories

    async def repositories(self) -> list[RepoView]:
        """Every registered repository."""
        async with self.runtime.db.read_session() as s:
            return await store.list_repositories(s)

    async def resolve(self, spec: str) -> tuple[RepoView, bool]:
        """The repository a tool argument names, and whether it is registered: a registered name first, then
        (stdio) a directory under the allowed roots, matched to its registration by location when it has one."""
        spec = spec.strip()
        if not spec:
            raise RequestError("no repository given: name a registered one (list_repositories) or a directory")
        repos = await self.repositories()
        for repo in repos:
            if repo.name == spec:
                return repo, True
        path = self._local_path(spec, [r.name for r in repos])
        for repo in repos:
            if repo.kind == "path" and repo.location == str(path):
                return repo, True
        now = datetime.now(timezone.utc)
        return RepoView(name=_derived_name(path), location=str(path), kind="path", created_at=now), False

    def _local_path(self, spec: str, names: list[str]) -> Path:
        known = ", ".join(names[:20]) + (" ..." if len(names) > 20 else "") if names else "none"
        if self.roots is None:
            raise RequestError(
                f"repository {spec!r} is not registered (registered: {known}); this server reads registered "
                "repositories only: register it with POST /api/repos or `bugsleuth repo add NAME PATH|URL`"
            )
        roots = ", ".join(map(str, self.roots))
        try:
            raw = Path(spec).expanduser()
            path = (raw if raw.is_absolute() else self.roots[0] / raw).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            raise RequestError(f"{spec!r} is neither a registered repository nor a usable path: {exc}") from None
        if not any(path.is_relative_to(root) for root in self.roots):
            raise RequestError(
                f"{spec!r} ({path}) is outside the allowed roots ({roots}); name a directory under them, "
                "or start the server with `bugsleuth mcp --root DIR` to allow another"
            )
        if not _is_dir(path):
            raise RequestError(
                f"{spec!r} is neither a registered repository (registered: {known}) nor a directory under {roots}"
            )
        return path

    async def _register(self, repo: RepoView) -> tuple[RepoView, str]:
        """Register a directory named by path (its derived name, or that name with a hash of its path when taken)."""
        digest = hashlib.sha256(repo.location.encode()).hexdigest()[:8]
        for name in (repo.name, f"{repo.name}-{digest}"):
            try:
                view = await service.register_repository(self.runtime, name, repo.location)
            except store.DuplicateError:
                continue
            except service.InvalidRepositoryError as exc:
                raise RequestError(str(exc)) from None
            return view, f"registered {repo.location} as {view.name!r}"
        raise RequestError(f"could not register {repo.location}: the names {repo.name!r} and {name!r} are taken")

    async def tree(self, spec: str, ref: str | None = None) -> Tree:
        """The read-only tree of a repository at `ref` (default: its default branch head, or HEAD)."""
        repo, _ = await self.resolve(spec)
        try:
            prepared = await prepare_tree(self.runtime.settings, repo, (ref or "").strip() or None)
        except RepositoryError as exc:
            raise RequestError(str(exc)) from None
        return Tree(repo.name, prepared.root, prepared.commit, prepared.note)

    # ------------------------------------------------------------------------------------------ investigations

    async def investigate(
        self, report: BugReport, repository: str, *, explorer: str | None, wait: bool, progress: ProgressFn
    ) -> tuple[InvestigationDetail, list[str]]:
        """Store and run an investigation of `report` in `repository` (whatever its classification: it was asked
        for), report progress per phase, and return it finished (or as it stands when `wait` is False) with notes."""
        repo, registered = await self.resolve(repository)
        notes: list[str] = []
        if not registered:
            repo, note = await self._register(repo)
            notes.append(note)
        chosen = self._explorer(explorer)
        runtime = self.runtime
        try:
            accepted = await service.submit_report(
                runtime, report.model_copy(update={"repo": repo.name}), force=True, explorer=chosen
            )
        except service.UnknownRepositoryError as exc:
            raise RequestError(str(exc)) from None
        steps = PhaseProgress()
        await progress(steps.queued(accepted.id))
        if self.runs_jobs:
            await self._start(accepted.id)
        elif runtime.settings.resolved_job_backend == "none":
            wait = False
            notes.append("this service runs no jobs (job_backend = none): the investigation stays queued")
        if wait:
            await self._follow(accepted.id, steps, progress)
        detail = await self.investigation(accepted.id)
        if wait:
            suspect = f"prime suspect {detail.prime_suspect}" if detail.prime_suspect else detail.error or ""
            await progress(steps.finished(detail.status.value, suspect))
        return detail, notes

    def _explorer(self, name: str | None) -> str | None:
        """The explorer asked for (None: the configured one); a shell-command explorer only when configured."""
        name = (name or "").strip()
        if not name or name == self.runtime.settings.explorer:
            return None
        if name.startswith("command:"):
            raise RequestError(
                f"explorer {name!r} runs a shell command: over MCP only the configured explorer "
                f"({self.runtime.settings.explorer!r}, BUGSLEUTH_EXPLORER) may be one"
            )
        try:
            resolve_explorer(name)
        except UserError as exc:
            raise RequestError(str(exc)) from None
        return name

    async def _start(self, investigation_id: int) -> None:
        """Run a submitted investigation in this process, unless a service's pool on the same database took it."""
        runtime = self.runtime
        async with runtime.db.session() as s:
            if not await store.claim(s, investigation_id, worker=runtime.worker_name, only_queued=True):
                return
        token = CancelToken()
        task = asyncio.create_task(self._run(runtime, investigation_id, token), name=f"bugsleuth-mcp-{investigation_id}")
        self._runs[investigation_id] = (task, token)
        task.add_done_callback(lambda _: self._runs.pop(investigation_id, None))

    @staticmethod
    async def _run(runtime: Runtime, investigation_id: int, token: CancelToken) -> None:
        try:
            await run_investigation(runtime, investigation_id, cancel=token, claimed=True)
        except Exception as exc:  # the database failed under the run: record it if it can be
            log.exception("investigation crashed", extra={"investigation_id": investigation_id})
            async with runtime.db.session() as s:
                await store.finish(s, investigation_id, status=Status.failed, error=f"{type(exc).__name__}: {exc}")

    async def _follow(self, investigation_id: int, steps: PhaseProgress, progress: ProgressFn) -> None:
        """Report the investigation's events as progress until it is finished; a cancelled call cancels it."""
        after = 0
        try:
            while True:
                events, status = await run_to_completion(poll_events(self.runtime, investigation_id, after))
                for event in events:
                    after = event.id
                    step = steps.step(event.kind, event.data)
                    if step is not None:
                        await progress(step)
                if events:
                    continue
                if status is None or status in store.FINISHED:
                    return
                await asyncio.sleep(POLL_S)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):  # the client gave up on the call: the investigation stops too
                try:
                    await service.cancel(self.runtime, investigation_id)
                except Exception:
                    log.warning("could not cancel investigation %s", investigation_id, exc_info=True)
                token = self._runs.get(investigation_id, (None, None))[1]
                if token is not None:
                    token.cancel("the MCP call was cancelled")
            raise

    async def investigation(self, investigation_id: int) -> InvestigationDetail:
        """One stored investigation."""
        async with self.runtime.db.read_session() as s:
            detail = await store.get_investigation(s, investigation_id)
        if detail is None:
            raise RequestError(f"investigation {investigation_id} not found (list_investigations lists them)")
        return detail

    async def investigations(
        self, *, repo: str | None, status: Status | None, classification: Classification | None,
        search: str | None, limit: int, offset: int,
    ) -> Page[InvestigationSummary]:  # fmt: skip
        """Stored investigations, newest first."""
        async with self.runtime.db.read_session() as s:
            return await search_investigations(s, repo=repo or None, status=status, classification=classification,
                                               text=search or None, limit=limit, offset=offset)  # fmt: skip

    async def close(self) -> None:
        """Cancel the runs this process started and wait (bounded) until they have recorded it."""
        runs = list(self._runs.values())
        for _, token in runs:
            token.cancel("the MCP server stopped")
        if runs:
            await asyncio.wait([task for task, _ in runs], timeout=SHUTDOWN_S)

    # -------------------------------------------------------------------------------------- maps and tools

    async def repo_map(self, spec: str, ref: str | None, focus: str | None, tokens: int) -> tuple[Tree, RepoMap]:
        """The ranked repo map of a repository's tree, focused on a bug report's text when one is given."""
        tree = await self.tree(spec, ref)
        try:
            repo_map = await asyncio.to_thread(build_repo_map, tree.root, focus=focus or None, token_budget=tokens)
        except MapInputError as exc:
            raise RequestError(str(exc)) from None
        return tree, repo_map

    @staticmethod
    async def run_tool(tree: Tree, call: Callable[[Sandbox, threading.Event], Any]) -> str:
        """Run one read-only tool on a tree, under the agents' sandbox and limits; returns exactly the text an
        agent would see. A refused or invalid request becomes a RequestError with the tool's own reason."""
        cancel = threading.Event()
        try:
            result = await asyncio.to_thread(call, Sandbox(tree.root), cancel)
        except (FunnelToolError, UserError) as exc:
            raise RequestError(str(exc)) from None
        except UnrecoverableError as exc:
            raise RequestError(f"error: {exc}") from None
        except BaseException:
            cancel.set()  # a cancelled call stops ripgrep within ~50 ms
            raise
        return result.render()

    async def symbol_index(self, tree: Tree) -> Any:
        """The symbol index of a tree (cached for per-commit trees, which never change)."""
        cached = self._maps.get(tree.root) if tree.commit else None
        if cached is None:
            cached = await asyncio.to_thread(build_repo_map, tree.root)
            if tree.commit:
                self._maps[tree.root] = cached
                while len(self._maps) > MAP_CACHE:
                    self._maps.popitem(last=False)
        else:
            self._maps.move_to_end(tree.root)
        return cached.index


def report_of(title: str, body: str, ref: str | None, labels: Sequence[str] = ()) -> BugReport:
    """The BugReport of an `investigate` call (repository filled in later); RequestError when it is unusable."""
    if not (title.strip() or body.strip()):
        raise RequestError("the report is empty: give at least a title or a body (stack traces welcome)")
    try:
        return BugReport(title=title.strip(), body=body, ref=(ref or "").strip() or None, labels=list(labels),
                         source=Source.mcp)  # fmt: skip
    except ValidationError as exc:
        error = exc.errors()[0]
        raise RequestError(f"report rejected: {'.'.join(map(str, error['loc']))}: {error['msg']}") from None


def _is_dir(path: Path) -> bool:
    """Whether `path` is a directory; False for a name no file system takes (too long, half a surrogate pair)."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False

"""The explorer context of an investigation: sandbox, focused repo map, git history and (for explorers that ask
for it) the lexical pre-pass, built once, off the event loop, and shared by every run of the investigation."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from funnel.explorers import ExplorerContext
from funnel.limits import Limits
from funnel.localize.history import HistorySource
from funnel.localize.prepass import Prepass, run_prepass
from funnel.run import prompts
from funnel.tools.sandbox import Sandbox
from repomap import RepoMap, build_repo_map
from repomap.focus import Focus
from repomap.walk import MapCancelled
from schemas.enums import Classification
from schemas.report import BugReport

__all__ = ("ContextRequest", "Contexts")

_log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class ContextRequest:
    """What the context of one investigation is built from."""

    report: BugReport
    root: Path
    repo_map: RepoMap | None
    extra: str | None
    memory: str | None
    limits: Limits
    prepass: bool
    """Run the lexical pre-pass (the explorer asks for it and the limits allow it)."""
    git_dir: Path | str | None = None
    commit: str | None = None
    cancel: threading.Event | None = None
    """Set when the run is cancelled: the map build stops (`MapCancelled`)."""
    classification: Classification = Classification.bug
    """What kind of report it is (`funnel.classify`), passed on to the explorers."""


class Contexts:
    """Builds the explorer context (sandbox, focused repo map, pre-pass) once, off the event loop, for every run."""

    def __init__(self, request: ContextRequest) -> None:
        self._request = request
        self._value: tuple[ExplorerContext, Prepass | None] | None = None

    @property
    def prepass(self) -> Prepass | None:
        """The pre-pass, once the context is built and when it ran."""
        return self._value[1] if self._value is not None else None

    async def get(self) -> tuple[ExplorerContext, Prepass | None]:
        """The context and the pre-pass (None when it did not run)."""
        if self._value is None:
            self._value = await asyncio.to_thread(_context, self._request)  # the map: off the loop
        return self._value


def _context(req: ContextRequest) -> tuple[ExplorerContext, Prepass | None]:
    """Build the sandbox, the focused repo map, the explorer context, the history source and (when asked) the
    lexical pre-pass. Raises `MapCancelled` when `cancel` is set during the map build (the run is ending)."""
    report, root, repo_map, limits = req.report, req.root, req.repo_map, req.limits
    focus = None
    try:
        focus = Focus.from_text(report.text)
    except Exception:
        _log.warning("could not extract a focus from the report", exc_info=True)
    if repo_map is None:
        try:
            repo_map = build_repo_map(root, focus=focus or report.text, token_budget=limits.repo_map_tokens,
                                      cancel=req.cancel)
        except MapCancelled:
            raise
        except Exception:  # the map helps, it is not essential: explore without it
            _log.warning("repo map unavailable for %s", root, exc_info=True)
    source = HistorySource.locate(root, req.git_dir, req.commit) if limits.history else None
    ctx = ExplorerContext(report=report, root=root, repo_map=repo_map, sandbox=Sandbox(root, limits=limits.tools), limits=limits,
                          focus=focus, extra_context=req.extra, memory=prompts.load_memory(root, limits, req.memory),
                          template=prompts.report_template(), history=source,
                          classification=req.classification)  # fmt: skip
    found = None
    if req.prepass:
        found = run_prepass(report.text, root, repo_map, focus=focus, top=limits.prepass_candidates, history=source)
    return ctx, found

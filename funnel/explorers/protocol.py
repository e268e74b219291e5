"""The contract every explorer builds against: `Explorer` and the `ExplorerContext` the harness gives it.

The harness knows explorers only through these protocols: an agent-loop explorer (`AgentExplorer`) builds a
PydanticAI model that the harness drives through its own loop; a report command (`ReportCommand`) writes the
report itself, once per attempt, from the prompt. What the harness does around an explorer (the lexical pre-pass,
the offline fallback) is asked for by its `traits`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic_ai.models import Model
from pydantic_ai.usage import RequestUsage

from funnel.cancel import CancelToken
from funnel.limits import Limits
from funnel.localize.citations import RankedLocations
from funnel.localize.history import HistorySource
from funnel.tools.sandbox import Sandbox
from repomap import RepoMap, SymbolIndex
from repomap.focus import Focus
from schemas.enums import Classification
from schemas.report import BugReport

__all__ = (
    "AgentExplorer",
    "CommandOutput",
    "Explorer",
    "ExplorerContext",
    "ExplorerSpec",
    "ExplorerTraits",
    "ReportCommand",
    "ranking_of",
    "traits_of",
)


@dataclass(kw_only=True)
class ExplorerContext:
    """Everything an explorer may know about one run; built by the harness before the first request."""

    report: BugReport
    """The bug report under investigation (untrusted data)."""
    root: Path
    """Repository root (read-only tree)."""
    repo_map: RepoMap | None = None
    """The repo map focused on the report (`.text`, `.files`, `.symbols`, `.index`), or None when unavailable."""
    sandbox: Sandbox | None = None
    """The sandbox over `root`: the same one the tools use."""
    limits: Limits = field(default_factory=Limits)
    """Budgets in force (explore calls, deep-dive reads, attempts...)."""
    focus: Focus | None = None
    """What the report points at (identifiers, paths, stack frames), or None."""
    extra_context: str | None = None
    """Extra context supplied by the caller (e.g. the service), shown to the model."""
    memory: str | None = None
    """Feedback notes from people plus the repository's memory file (`AGENTS.md`), as shown to the model."""
    template: str = ""
    """The markdown report template the output phase must follow."""
    history: HistorySource | None = None
    """The repository's git history up to the investigated commit, or None (not a git checkout, or turned off)."""
    classification: Classification = Classification.bug
    """What kind of report it is (`funnel.classify`, once per run): a feature request's report is worded as one."""

    @property
    def index(self) -> SymbolIndex | None:
        """The repo map's `SymbolIndex`, or None."""
        return getattr(self.repo_map, "index", None)


@dataclass(frozen=True)
class ExplorerTraits:
    """What an explorer asks of the harness beyond running it. Plain data; every field defaults to off."""

    prepass: bool = False
    """Show it the candidates of the lexical pre-pass before the first request (`Limits.prepass`)."""
    offline_fallback: bool = False
    """When its endpoint fails (`ModelUnavailable`, or a `UserError` while its model is built for the run), the
    offline investigator redoes the run (`Limits.fallback_to_offline`)."""


@dataclass(frozen=True)
class CommandOutput:
    """What a report command produced."""

    stdout: str
    """The markdown report."""
    stderr: str
    """The command's stderr, kept for the trace (tail, capped)."""
    seconds: float
    """How long it ran."""
    usage: RequestUsage | None = None
    """The tokens and cost the command's output counts (a CLI agent's JSON envelope), when it counts any."""


@runtime_checkable
class Explorer(Protocol):
    """Any explorer. It is also an `AgentExplorer` or a `ReportCommand`, and may declare `traits`
    (an `ExplorerTraits`; `traits_of` reads it, with everything off when absent)."""

    @property
    def name(self) -> str:
        """Name recorded in the trace and `Diagnosis.stats.explorer`."""
        ...


@runtime_checkable
class AgentExplorer(Explorer, Protocol):
    """An agent-loop explorer: gives the harness a PydanticAI model to run through the funnel."""

    def build_model(self, ctx: ExplorerContext) -> Model:
        """The model for one run (called once per run, before the first request)."""
        ...


@runtime_checkable
class ReportCommand(Explorer, Protocol):
    """An explorer that writes the whole report itself from the prompt, once per attempt (no tools pass through
    the harness), e.g. an external CLI agent."""

    async def run(self, prompt: str, *, root: Path, timeout_s: float, cancel: CancelToken) -> CommandOutput:
        """Write the report for one attempt; stop on timeout or cancellation."""
        ...


ExplorerSpec = str | Explorer
"""An explorer, or its name (`offline`, `scripted`, `command:<cmd>`, a PydanticAI model string)."""

_NO_TRAITS = ExplorerTraits()


def traits_of(explorer: Explorer) -> ExplorerTraits:
    """The explorer's traits (all off when it declares none)."""
    traits = getattr(explorer, "traits", None)
    return traits if isinstance(traits, ExplorerTraits) else _NO_TRAITS


def ranking_of(explorer: Explorer) -> RankedLocations | None:
    """The ranking behind the explorer's last run, deeper than its report names, when it keeps one (an explorer
    may offer `ranked_locations() -> RankedLocations | None`; the offline investigator does)."""
    ranked = getattr(explorer, "ranked_locations", None)
    return ranked() if callable(ranked) else None

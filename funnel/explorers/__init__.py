"""Explorers: what drives the investigation. The contract every explorer builds against.

Three kinds:

* agent-loop explorers (`Explorer`): `build_model(ctx)` returns a PydanticAI `Model` that the harness runs
  through its own agent loop, phases, stop policy, trace and verification. Any PydanticAI model string is one
  (`openai:gpt-4o`, `anthropic:...`, `ollama:...`), and so are the offline investigator (`offline`, a
  `FunctionModel` built per run) and the scripted stand-in (`scripted`).
* command explorers (`CommandExplorer`, `command:<shell command>`): an external CLI coding agent given the
  prompt on stdin; its stdout is the markdown report. No tools pass through the harness.

A `FunctionModel` explorer sees the phase from the tools it is offered:
`funnel.phases.phase_of_tools(t.name for t in info.function_tools)`. The tools and their arguments:

| phase | tools |
| --- | --- |
| explore | `search(pattern, fixed_strings=False, globs=[], ignore_case=False, context=0)`, `read_range(path, start=1, end=None)`, `list_dir(path='.', depth=1)`, `find_symbol(name)`, `begin_deep_dive(suspects: list[str])`, `request_info(questions: list[str])` |
| deep_dive | `read_range(path, start=1, end=None)`, `finish_deep_dive()`, `request_info(questions: list[str])` |
| output | none: answer with the markdown report as plain text |

Tool results come back as `ToolReturnPart`s whose content is the text the tool rendered (or the instructive
error / refusal text). A second attempt (after the verifier refused the report) continues the same message
history with a user prompt that lists the verifier's findings, starting in the deep-dive phase.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from funnel.errors import UserError
from funnel.limits import Limits
from schemas.report import BugReport

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from funnel.explorers.command import CommandExplorer
    from funnel.localize.history import HistorySource

__all__ = ("Explorer", "ExplorerContext", "explorer_name", "resolve_explorer")


@dataclass(kw_only=True)
class ExplorerContext:
    """Everything an explorer may know about one run; built by the harness before the first request."""

    report: BugReport
    """The bug report under investigation (untrusted data)."""
    root: Path
    """Repository root (read-only tree)."""
    repo_map: Any = None
    """`repomap.RepoMap` focused on the report (`.text`, `.files`, `.symbols`, `.index`), or None when unavailable."""
    sandbox: Any = None
    """`funnel.sandbox.Sandbox` over `root`: the same one the tools use."""
    limits: Limits = field(default_factory=Limits)
    """Budgets in force (explore calls, deep-dive reads, attempts...)."""
    focus: Any = None
    """`repomap.focus.Focus` extracted from the report (identifiers, paths, stack frames), or None."""
    extra_context: str | None = None
    """Extra context supplied by the caller (e.g. the service), shown to the model."""
    memory: str | None = None
    """Feedback notes from people plus the repository's memory file (`AGENTS.md`), as shown to the model."""
    template: str = ""
    """The markdown report template the output phase must follow."""
    history: HistorySource | None = None
    """The repository's git history up to the investigated commit, or None (not a git checkout, or turned off)."""

    @property
    def index(self) -> Any:
        """The repo map's `SymbolIndex`, or None."""
        return getattr(self.repo_map, "index", None)


@runtime_checkable
class Explorer(Protocol):
    """An agent-loop explorer: gives the harness a PydanticAI model to run through the funnel."""

    name: str
    """Name recorded in the trace and `Diagnosis.stats.explorer`."""

    def build_model(self, ctx: ExplorerContext) -> Model:
        """The model for one run (called once per run, before the first request)."""
        ...


def resolve_explorer(name: str | Explorer | CommandExplorer) -> Explorer | CommandExplorer:
    """The explorer for a name: `offline`, `scripted`, `command:<shell cmd>`, or any PydanticAI model string."""
    if not isinstance(name, str):
        return name
    spec = name.strip()
    if not spec:
        raise UserError("explorer name is empty; use 'offline', 'scripted', 'command:<cmd>' or a model string")
    if spec == "offline":
        try:
            from funnel.explorers.offline import OfflineExplorer
        except ImportError as e:  # the offline investigator is built in parallel
            raise UserError(f"the offline explorer is not available ({e}); try --explorer scripted") from e
        return OfflineExplorer()
    if spec == "scripted":
        from funnel.explorers.scripted import ScriptedExplorer

        return ScriptedExplorer()
    if spec.startswith("command:"):
        from funnel.explorers.command import CommandExplorer

        return CommandExplorer(spec.removeprefix("command:").strip())
    from funnel.explorers.agent import ModelExplorer

    return ModelExplorer(spec)


def explorer_name(explorer: str | Explorer | CommandExplorer) -> str:
    """The display name of an explorer or explorer spec."""
    return explorer if isinstance(explorer, str) else explorer.name

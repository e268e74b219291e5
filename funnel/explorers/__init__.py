"""Explorers: what drives the investigation. The contract every explorer builds against.

Two kinds, both `Explorer`s (`funnel.explorers.protocol`):

* agent-loop explorers (`AgentExplorer`): `build_model(ctx)` returns a PydanticAI `Model` that the harness runs
  through its own agent loop, phases, stop policy, trace and verification. Any PydanticAI model string is one
  (`openai:gpt-4o`, `anthropic:...`, `ollama:...`), and so are the offline investigator (`offline`, a
  `FunctionModel` built per run) and the scripted stand-in (`scripted`).
* report commands (`ReportCommand`; `CommandExplorer`, `command:<shell command>`): an external CLI coding agent
  given the prompt on stdin; its stdout is the markdown report. No tools pass through the harness.

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

from funnel.errors import UserError
from funnel.explorers.agent import ModelExplorer
from funnel.explorers.command import CommandExplorer
from funnel.explorers.offline import OfflineExplorer
from funnel.explorers.protocol import (
    AgentExplorer,
    CommandOutput,
    Explorer,
    ExplorerContext,
    ExplorerSpec,
    ExplorerTraits,
    ReportCommand,
    ranking_of,
    traits_of,
)
from funnel.explorers.scripted import ScriptedExplorer

__all__ = (
    "AgentExplorer",
    "CommandOutput",
    "Explorer",
    "ExplorerContext",
    "ExplorerSpec",
    "ExplorerTraits",
    "ReportCommand",
    "explorer_name",
    "ranking_of",
    "resolve_explorer",
    "traits_of",
)


def resolve_explorer(name: ExplorerSpec) -> Explorer:
    """The explorer for a name: `offline`, `scripted`, `command:<shell cmd>`, or any PydanticAI model string."""
    if not isinstance(name, str):
        return name
    spec = name.strip()
    if not spec:
        raise UserError("explorer name is empty; use 'offline', 'scripted', 'command:<cmd>' or a model string")
    if spec == "offline":
        return OfflineExplorer()
    if spec == "scripted":
        return ScriptedExplorer()
    if spec.startswith("command:"):
        return CommandExplorer(spec.removeprefix("command:").strip())
    return ModelExplorer(spec)


def explorer_name(explorer: ExplorerSpec) -> str:
    """The display name of an explorer or explorer spec."""
    return explorer if isinstance(explorer, str) else explorer.name

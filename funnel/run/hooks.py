"""Hooks: small checks run after each tool call and at each phase change.

Silent on success (return None), verbose on failure (return text): the text is appended to the tool result the
model sees. Register one with one line: `hooks.after_tool(my_check)` or `hooks.on_phase_change(my_check)`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from schemas.enums import Phase, ToolName

__all__ = ("Hooks", "PhaseChange", "ToolCall", "default_hooks")

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolCall:
    """One finished tool call, as hooks see it."""

    tool: str
    """Tool name."""
    args: dict[str, Any]
    """Arguments the model gave."""
    text: str
    """The text the model will see."""
    result: Any = None
    """The structured tool result (`SearchResult`, `ReadResult`...), None on error or refusal."""
    error: str | None = None
    """Error or refusal text, when the call failed."""
    phase: Phase = Phase.explore
    """Phase of the call."""
    budget_left: int = 0
    """Tool calls left in this phase's budget."""


@dataclass(frozen=True)
class PhaseChange:
    """One move of the funnel, as hooks see it."""

    from_phase: Phase
    """Phase left."""
    to_phase: Phase
    """Phase entered."""
    forced: bool
    """True when a budget forced the move."""
    suspects: tuple[str, ...] = ()
    """Suspects named so far."""
    budget: int = 0
    """Tool calls allowed in the phase entered."""
    reason: str = ""
    """Why the move happened."""


ToolHook = Callable[[ToolCall], str | None]
"""A check after a tool call: None when all is well, else text for the model."""
PhaseHook = Callable[[PhaseChange], str | None]
"""A check at a phase change: None when all is well, else text for the model."""


@dataclass
class Hooks:
    """The registered hooks of a run."""

    tool_hooks: list[ToolHook] = field(default_factory=list)
    """Run after every tool call, in order."""
    phase_hooks: list[PhaseHook] = field(default_factory=list)
    """Run at every phase change, in order."""

    def after_tool(self, hook: ToolHook) -> ToolHook:
        """Register a hook run after every tool call (usable as a decorator)."""
        self.tool_hooks.append(hook)
        return hook

    def on_phase_change(self, hook: PhaseHook) -> PhaseHook:
        """Register a hook run at every phase change (usable as a decorator)."""
        self.phase_hooks.append(hook)
        return hook

    def run_tool_hooks(self, call: ToolCall) -> str:
        """Text the tool hooks add to a tool result ('' when all are silent)."""
        return _run(self.tool_hooks, call)

    def run_phase_hooks(self, change: PhaseChange) -> str:
        """Text the phase hooks add ('' when all are silent)."""
        return _run(self.phase_hooks, change)


def _run(hooks: list[Callable[[Any], str | None]], arg: Any) -> str:
    notes: list[str] = []
    for hook in hooks:
        try:
            note = hook(arg)
        except Exception as e:  # a broken hook says so, and never breaks the run
            _log.exception("hook %s failed", getattr(hook, "__name__", hook))
            note = f"[hook {getattr(hook, '__name__', 'hook')} failed: {type(e).__name__}: {e}]"
        if note:
            notes.append(note)
    return "\n".join(notes)


def hint_empty_search(call: ToolCall) -> str | None:
    """After a search that found nothing: suggest how to widen it."""
    if call.tool != ToolName.search or call.error or call.result is None:
        return None
    if getattr(call.result, "matches", None) != []:
        return None
    return (
        "Hint: no match. Try a shorter pattern, `fixed_strings=true` for literal text with regex characters, "
        "`ignore_case=true`, or `find_symbol` for a definition."
    )


def warn_budget_low(call: ToolCall) -> str | None:
    """When one tool call is left in the phase: say so, so the model plans its last call."""
    if call.phase == Phase.explore and call.budget_left == 1:
        return "Note: one explore call left; then the deep-dive starts (read_range only)."
    if call.phase == Phase.deep_dive and call.budget_left == 1:
        return "Note: one read left; then you write the report."
    return None


def announce_phase(change: PhaseChange) -> str | None:
    """When the harness forced a move: tell the model why and what it may do now."""
    if not change.forced:
        return None
    if change.to_phase == Phase.deep_dive:
        return f"The explore budget is spent: deep-dive now, read_range only ({change.budget} reads), then finish_deep_dive."
    if change.to_phase == Phase.output:
        return f"Write the report now from what you have read ({change.reason}); no more tools."
    return None


def default_hooks() -> Hooks:
    """The hooks every run gets unless the caller passes its own."""
    hooks = Hooks()
    hooks.after_tool(hint_empty_search)
    hooks.after_tool(warn_budget_low)
    hooks.on_phase_change(announce_phase)
    return hooks

"""Limits as plain data: every budget, cap and threshold of an investigation (`Limits`, which holds those of one
tool call, `ToolLimits`, and of the verifier, `VerifyLimits`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from funnel.errors import UserError

__all__ = ("Limits", "ToolLimits", "VerifyLimits")


@dataclass(frozen=True)
class ToolLimits:
    """Caps that keep every tool output small and every tool call short. Plain data, set per run."""

    max_output_bytes: int = 24_000
    """Hard cap on the UTF-8 size of any rendered tool output; the cut is marked explicitly."""
    read_max_lines: int = 200
    """Most lines one `read_range` call returns."""
    max_line_chars: int = 500
    """Longest line `read_range` shows before cutting it with a `...[truncated]` marker."""
    search_line_chars: int = 300
    """Longest line `search` shows (match or context) before cutting it."""
    search_max_results: int = 200
    """Ceiling on `max_results` whatever the caller asks for."""
    search_max_context: int = 10
    """Ceiling on context lines around each match."""
    search_timeout_s: float = 10.0
    """Ceiling on one search's wall time; ripgrep is killed when it runs over."""
    search_max_read_bytes: int = 64 * 1024 * 1024
    """Most bytes of ripgrep output read before it is killed (guards against million-line matches)."""
    list_max_entries: int = 200
    """Most entries one `list_dir` call shows."""
    list_max_depth: int = 5
    """Deepest `list_dir` may go."""
    symbol_max_results: int = 20
    """Most definitions one `find_symbol` call shows."""
    agent_search_context: int = 5
    """Most context lines a model may ask `search` for (the harness's tool wrapper; `search_max_context` caps
    every caller)."""
    agent_list_depth: int = 3
    """Deepest a model may ask `list_dir` to go (the harness's tool wrapper; `list_max_depth` caps every caller)."""

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if not isinstance(value, int | float) or value <= 0:
                raise UserError(f"ToolLimits.{name} must be a positive number, got {value!r}")


@dataclass(frozen=True)
class VerifyLimits:
    """Tolerances and bounds of verification. Plain data."""

    slack_lines: int = 3
    """How far (in lines) a snippet or symbol may sit outside the cited range and still count as there."""
    max_candidates: int = 20
    """Most other files examined when looking for where a misplaced snippet really is."""
    min_relocate_chars: int = 20
    """Shortest snippet (non-blank characters) trusted to move a claim to another file."""
    max_file_bytes: int = 4_000_000
    """Larger files are not read for snippet checks (the claim is kept on path and range alone)."""
    search_timeout_s: float = 5.0
    """Time limit of the ripgrep scan for a misplaced snippet."""


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Budgets and caps for one investigation; the defaults aim at ~10 tool calls per run."""

    explore_calls: int = 8
    """Read-only tool calls allowed in the explore phase before the harness forces the deep-dive."""
    deep_dive_reads: int = 4
    """`read_range` calls allowed in the deep-dive phase before the harness forces the output phase."""
    max_tool_calls: int = 24
    """Hard cap on tool calls of a whole run (all attempts, control tools and refusals included)."""
    max_iterations: int = 24
    """Model requests allowed for the whole run (stop clause `step_budget`)."""
    max_tokens: int = 600_000
    """Input + output tokens allowed for the whole run (stop clause `cost_budget`)."""
    max_cost_usd: float | None = 2.0
    """Money allowed for the whole run when the model's prices are known; None disables the money cap."""
    timeout_s: float = 900.0
    """Wall-clock seconds for the whole run (stop clause `cost_budget`, detail `timeout`)."""
    max_attempts: int = 2
    """Verification attempts: a report that fails verification starts the next attempt with the findings."""
    max_consecutive_tool_errors: int = 5
    """Consecutive failed tool calls before the run stops with `error`."""
    max_repeats: int = 2
    """Identical read-only tool calls (same tool, same arguments) allowed in one attempt; the second is refused, the one
    after stops the run (no progress). Control tools and the calls of an earlier attempt are not repeats."""
    max_refused_calls: int = 2
    """Calls of tools the current phase does not offer (or of no tool at all) after which the harness moves the funnel
    on to the next phase, as when its budget is spent: such a model is done with the phase, whatever it calls."""
    model_retries: int = 3
    """Retries of a failing model request (connection errors, 5xx, 429) before the run stops with `error`."""
    retry_backoff_s: float = 1.0
    """First backoff between model retries; doubled on each retry (a longer `Retry-After` from the server wins)."""
    request_timeout_s: float = 300.0
    """Seconds one model request (one HTTP attempt) may take before it counts as failed and is retried."""
    output_retries: int = 2
    """Times a cut-off or empty report is sent back to the model before the run stops."""
    compaction_max_messages: int = 40
    """Compact the history the model sees once it holds more messages than this."""
    compaction_context_share: float = 0.6
    """Compact once the history is estimated to fill this share of the context window."""
    compaction_keep_recent: int = 8
    """Most recent messages kept verbatim by compaction."""
    summarizer_model: str | None = None
    """PydanticAI model string used to summarize old tool results during compaction; None = deterministic elision."""
    context_window: int = 128_000
    """Context window of the explorer model, in tokens (used by compaction)."""
    repo_map_tokens: int = 2048
    """Token budget of the repo map shown in the system prompt."""
    memory_file: str = "AGENTS.md"
    """Repository file whose text is shown to the model as project notes, when present."""
    memory_max_chars: int = 6000
    """Cap on the characters of the repository memory file shown to the model."""
    report_max_chars: int = 20_000
    """Cap on the characters of the bug report shown to the model."""
    command_timeout_s: float = 600.0
    """Timeout of an external-command explorer, in seconds."""
    prepass: bool = True
    """Before a model explorer runs, rank the tree offline and show the top candidates to the model."""
    prepass_candidates: int = 5
    """Candidate files the pre-pass shows to the model (and uses to refocus the repo map)."""
    fallback_to_offline: bool = True
    """When the model endpoint fails (unreachable, refused, retries exhausted) or the model never answers with a usable
    report or tool call (`ModelUnusable`), rerun with the offline investigator."""
    history: bool = True
    """Let the offline ranking use the repository's git history as evidence (files changed by earlier commits whose
    messages resemble the report; nothing later than the investigated commit), when the tree is a git checkout or
    a git directory is given."""
    tools: ToolLimits = field(default_factory=ToolLimits)
    """Caps of every tool call of the run (the sandbox's `ToolLimits`; what a model may ask for included)."""
    verify: VerifyLimits = field(default_factory=VerifyLimits)
    """Tolerances of the verifier between attempts and of structuring."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
                raise UserError(f"Limits.{f.name} must be >= 0, got {value!r}")
        if self.max_attempts < 1:
            raise UserError("Limits.max_attempts must be >= 1")
        if not 0 < self.compaction_context_share <= 1:
            raise UserError("Limits.compaction_context_share must be in (0, 1]")

    def to_dict(self) -> dict[str, Any]:
        """The limits as a JSON-ready dict (recorded in the trace's start event)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Limits:
        """Limits from a dict, ignoring unknown keys (older or newer traces)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name, part in (("tools", ToolLimits), ("verify", VerifyLimits)):
            if isinstance(values.get(name), dict):
                names = {f.name for f in fields(part)}
                values[name] = part(**{k: v for k, v in values[name].items() if k in names})
        return cls(**values)

    def with_(self, **changes: Any) -> Limits:
        """A copy with some limits changed."""
        return replace(self, **changes)

"""History compaction: what the model sees shrinks, the full transcript is kept elsewhere.

When the history passes a threshold (message count, or estimated tokens as a share of the context window):

* the first request (system prompt + first user message) is kept verbatim;
* the most recent `keep_recent` messages are kept verbatim, widened so a tool call is never separated from
  its result;
* older tool results are replaced by short summaries: a deterministic elision by default, or whatever a
  configured `summarize` function (e.g. a cheap model) returns.

Messages are never dropped or reordered, so every tool call keeps its result and providers accept the history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart

from funnel.limits import Limits
from repomap.tokens import count_tokens
from schemas.text import storable

__all__ = (
    "CompactionPolicy",
    "ELIDED_PREFIX",
    "Summarizer",
    "compact",
    "estimate_tokens",
    "history_processor",
    "model_summarizer",
)

ELIDED_PREFIX = "[compacted]"
"""Start of every summary that replaced a tool result; such results are never compacted again."""

Summarizer = Callable[[str, str], str]
"""`summarize(tool_name, result_text) -> summary`: a custom (e.g. cheap-model) summary of an old tool result."""


@dataclass(frozen=True, kw_only=True)
class CompactionPolicy:
    """When and how much to compact."""

    max_messages: int = 40
    """Compact once the history holds more messages than this."""
    max_tokens: int = 76_800
    """Compact once the history is estimated to hold more tokens than this."""
    keep_recent: int = 8
    """Most recent messages kept verbatim."""
    min_chars: int = 240
    """Tool results shorter than this are kept as they are."""

    @classmethod
    def from_limits(cls, limits: Limits) -> CompactionPolicy:
        """The policy a run's limits ask for."""
        return cls(
            max_messages=limits.compaction_max_messages,
            max_tokens=int(limits.context_window * limits.compaction_context_share),
            keep_recent=limits.compaction_keep_recent,
        )


def _count(text: str) -> int:
    return count_tokens(text)


def _part_text(part: object) -> str:
    content = getattr(part, "content", None)
    if isinstance(content, str):
        return content
    args = getattr(part, "args", None)
    if args is not None:
        return str(args)
    return "" if content is None else str(content)


def estimate_tokens(messages: Sequence[ModelMessage]) -> int:
    """Rough token count of a history (text of every part)."""
    return sum(_count(_part_text(p)) for m in messages for p in m.parts)


def _elide(tool_name: str, text: str) -> str:
    lines = text.splitlines()
    first = lines[0][:120] if lines else ""
    return f"{ELIDED_PREFIX} {tool_name} result elided ({len(text)} chars, {len(lines)} lines); it began: {first}"


def _tail_start(messages: Sequence[ModelMessage], keep_recent: int) -> int:
    """Index of the first message kept verbatim at the end, widened so no tool result loses its call."""
    start = max(1, len(messages) - keep_recent)
    while 1 < start < len(messages) and isinstance(messages[start], ModelRequest) and isinstance(messages[start - 1], ModelResponse):
        if not any(isinstance(p, ToolReturnPart) for p in messages[start].parts):
            break
        start -= 1
    return start


def compact(
    messages: Sequence[ModelMessage], policy: CompactionPolicy, *, summarize: Summarizer | None = None
) -> list[ModelMessage]:
    """The history the model should see: unchanged under the thresholds, else old tool results summarized."""
    messages = list(messages)
    if len(messages) <= policy.max_messages and estimate_tokens(messages) <= policy.max_tokens:
        return messages
    tail = _tail_start(messages, policy.keep_recent)
    out: list[ModelMessage] = messages[:1]
    for message in messages[1:tail]:
        if isinstance(message, ModelRequest):
            parts = [_compact_part(p, policy, summarize) for p in message.parts]
            if any(a is not b for a, b in zip(parts, message.parts)):
                message = replace(message, parts=parts)
        out.append(message)
    out.extend(messages[tail:])
    return out


def _compact_part(part: object, policy: CompactionPolicy, summarize: Summarizer | None) -> object:
    if not isinstance(part, ToolReturnPart):
        return part
    text = part.model_response_str()
    if len(text) < policy.min_chars or text.startswith(ELIDED_PREFIX):
        return part
    summary = _elide(part.tool_name, text)
    if summarize is not None:
        try:
            summary = f"{ELIDED_PREFIX} {summarize(part.tool_name, text)}"
        except Exception:  # a failing summarizer falls back to the deterministic elision
            pass
    return replace(part, content=summary)


def history_processor(
    policy: CompactionPolicy, *, summarize: Summarizer | None = None
) -> Callable[[list[ModelMessage]], list[ModelMessage]]:
    """A `ProcessHistory` processor applying `compact` with this policy before every model request."""

    def process(messages: list[ModelMessage]) -> list[ModelMessage]:
        return compact(messages, policy, summarize=summarize)

    return process


def model_summarizer(model: object, *, max_chars: int = 600) -> Summarizer:
    """A `Summarizer` asking a (cheap) PydanticAI model for a short summary of an old tool result.

    The summary keeps paths, line numbers and identifiers; failures fall back to the deterministic elision.
    """
    agent = Agent(
        model,  # type: ignore[arg-type]
        instructions=(
            "Summarize this code-search tool result for an investigator who will not see it again. "
            "Keep every file path with line numbers and every identifier that matters; at most 5 short lines."
        ),
    )

    def summarize(tool_name: str, text: str) -> str:
        # History processors run on a worker thread, so a private event loop here is safe.
        out = agent.run_sync(f"Tool: {tool_name}\n\n{text[:20_000]}").output
        return storable(out.strip()[:max_chars])  # half an emoji's surrogate pair would fail every later request

    return summarize

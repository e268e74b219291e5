"""Replies whose wire form is what misbehaving servers send: a context overflow, `created` in microseconds, a usage
counting more tokens than any request used. Shared by the conformance scenarios."""

from __future__ import annotations

from collections.abc import Callable

from tests.funnel.conformance._server import Seen, Turn, anthropic_sse, openai_json

OVERFLOW = {
    "openai": {"error": {"message": "This model's maximum context length is 128000 tokens.",
                         "type": "invalid_request_error", "code": "context_length_exceeded"}},
    "anthropic": {"type": "error", "error": {"type": "invalid_request_error",
                                             "message": "prompt is too long: 250000 tokens > 200000 maximum"}},
}  # fmt: skip


def overflow(seen: Seen) -> Turn:
    """The server's refusal of a prompt longer than its context."""
    return Turn(status=400, error=OVERFLOW[seen.protocol])


def created_in_us(turn: Turn) -> Callable[[Seen], Turn]:
    """`turn` as Chat Completions JSON whose `created` is in microseconds, as a server that times in them sends it."""
    return lambda seen: Turn(body={**openai_json(turn, "fake-model"), "created": 1_733_600_000_123_456})


UNSIGNED_MINUS_ONE = 2**64 - 1
"""A count no request used: what a server that reports an unknown count as an unsigned -1 sends."""


def uncounted(turn: Turn) -> Callable[[Seen], Turn]:
    """`turn` with every token count of its usage an unsigned -1."""
    def reply(seen: Seen) -> Turn:
        if seen.protocol == "openai":
            usage = dict.fromkeys(("prompt_tokens", "completion_tokens", "total_tokens"), UNSIGNED_MINUS_ONE)
            return Turn(body={**openai_json(turn, "fake-model"), "usage": usage})
        events = anthropic_sse(turn, "fake-model").decode()
        for count in ('"input_tokens": 900', '"output_tokens": 60', '"output_tokens": 1'):
            events = events.replace(count, f"{count.split(':')[0]}: {UNSIGNED_MINUS_ONE}")
        return Turn(raw=events.encode())
    return reply

"""Token and money meter: input, output and cached tokens per request, summed per phase and per run."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic_ai.messages import ModelResponse

from funnel.counts import price, token_count
from schemas.diagnosis import PhaseStats
from schemas.enums import Phase

__all__ = ("Meter", "RequestUsage", "response_usage")


@dataclass(frozen=True)
class RequestUsage:
    """What one model request cost."""

    input_tokens: int = 0
    """Input tokens (cached ones included)."""
    output_tokens: int = 0
    """Output tokens."""
    cached_tokens: int = 0
    """Input tokens served from the provider's cache."""
    cost_usd: float | None = None
    """Price of the request when the model's prices are known."""


def response_usage(response: ModelResponse) -> RequestUsage:
    """The usage of one model response, priced with genai-prices when the model is known to it; a count or price
    that cannot be one (`funnel.counts`) is read as 0 or unknown."""
    usage = response.usage
    cost: float | None = None
    if usage.cost is not None:
        cost = price(usage.cost)
    elif response.model_name and not response.model_name.startswith("function:"):
        try:
            cost = price(response.cost().total_price)
        except Exception:  # unknown model or provider: the price stays unknown, never fails a run
            cost = None
    return RequestUsage(
        input_tokens=token_count(usage.input_tokens),
        output_tokens=token_count(usage.output_tokens),
        cached_tokens=token_count(usage.cache_read_tokens),
        cost_usd=cost,
    )


@dataclass
class Meter:
    """Counters of one run: tokens, money, requests and tool calls, per phase and in total."""

    per_phase: dict[Phase, PhaseStats] = field(default_factory=dict)
    """Counters keyed by phase."""
    cost_usd: float | None = None
    """Money spent so far; None while no request had a known price."""

    def _phase(self, phase: Phase) -> PhaseStats:
        return self.per_phase.setdefault(phase, PhaseStats())

    def add_request(self, phase: Phase, usage: RequestUsage) -> None:
        """Count one model request in a phase."""
        stats = self._phase(phase)
        stats.requests += 1
        stats.input_tokens += usage.input_tokens
        stats.output_tokens += usage.output_tokens
        stats.cached_tokens += usage.cached_tokens
        if usage.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + usage.cost_usd

    def add_tool_call(self, phase: Phase) -> None:
        """Count one tool call in a phase."""
        self._phase(phase).tool_calls += 1

    @property
    def input_tokens(self) -> int:
        """Input tokens of the run."""
        return sum(s.input_tokens for s in self.per_phase.values())

    @property
    def output_tokens(self) -> int:
        """Output tokens of the run."""
        return sum(s.output_tokens for s in self.per_phase.values())

    @property
    def cached_tokens(self) -> int:
        """Cached input tokens of the run."""
        return sum(s.cached_tokens for s in self.per_phase.values())

    @property
    def total_tokens(self) -> int:
        """Input + output tokens of the run."""
        return self.input_tokens + self.output_tokens

    @property
    def requests(self) -> int:
        """Model requests of the run."""
        return sum(s.requests for s in self.per_phase.values())

    @property
    def tool_calls(self) -> int:
        """Tool calls of the run."""
        return sum(s.tool_calls for s in self.per_phase.values())

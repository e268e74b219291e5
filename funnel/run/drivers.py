"""The two drivers of one attempt: the agent loop (PydanticAI `agent.iter()`, with the budget rules and the stop
policy at the head of every iteration) for an `AgentExplorer`, and one request for a `ReportCommand`."""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable

from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai import exceptions as pai_exc
from pydantic_ai.capabilities import PrepareTools, ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from funnel.errors import ModelUnavailable, ModelUnusable, StepBudgetExceeded, UserError
from funnel.explorers import AgentExplorer, ExplorerContext, ReportCommand, traits_of
from funnel.explorers.agent import RetryingModel, build_model_from_spec
from funnel.retry import failure_text
from funnel.run import prompts
from funnel.run.agent_tools import funnel_tools, offered_tools
from funnel.run.budget import check_stop, enforce_budgets, usage_limits
from funnel.run.compaction import CompactionPolicy, Summarizer, history_processor, model_summarizer
from funnel.run.meter import response_usage
from funnel.run.state import RunState
from funnel.tool_calls import ToolCallRepair
from schemas.enums import Phase
from schemas.trace import RequestEvent, ToolCallEvent

__all__ = ("Attempt", "agent_attempt", "command_attempt", "record")

Attempt = Callable[[str, list[str]], Awaitable[str]]
"""One attempt: (prompt, the verifier's findings so far) -> the markdown report."""


def agent_attempt(state: RunState, explorer: AgentExplorer, ctx: ExplorerContext, system: str,
                  transcript: list[ModelMessage], summarize: Summarizer | None) -> Attempt:  # fmt: skip
    """The agent loop, as a function of one attempt's prompt (the history carries over between attempts)."""
    limits = state.limits
    try:
        built = explorer.build_model(ctx)
    except UserError as e:
        if not traits_of(explorer).offline_fallback:
            raise
        raise ModelUnavailable(f"the model could not be set up: {e}") from e
    model = RetryingModel.for_limits(ToolCallRepair(built), limits, state.cancel)
    if summarize is None and limits.summarizer_model:
        summarizer = RetryingModel.for_limits(build_model_from_spec(limits.summarizer_model), limits, state.cancel)
        summarize = model_summarizer(summarizer)

    def instructions(rc: RunContext[RunState]) -> str:
        s = rc.deps
        return prompts.phase_instructions(s.phase, limits=s.limits, used=s.phase_calls, wrap_up=s.wrap_up)

    agent: Agent[RunState, str] = Agent(
        model,
        deps_type=RunState,
        output_type=str,
        system_prompt=system,
        instructions=instructions,
        tools=funnel_tools(),
        retries={"tools": 3, "output": limits.output_retries},
        capabilities=[
            PrepareTools(lambda rc, defs: offered_tools(rc.deps, defs)),
            ProcessHistory(history_processor(CompactionPolicy.from_limits(limits), summarize=summarize)),
        ],
    )

    @agent.output_validator
    def _complete(rc: RunContext[RunState], text: str) -> str:
        last = next((m for m in reversed(rc.messages) if isinstance(m, ModelResponse)), None)
        if last is not None and last.finish_reason == "length":
            raise ModelRetry("Your report was cut off by the output-token limit. Write the whole report again, shorter.")
        if last is not None and last.finish_reason == "content_filter":
            raise ModelRetry("Your report was cut off by the provider's content filter. Write the whole report again.")
        if not text.strip():
            raise ModelRetry("Your answer was empty. Write the markdown report following the template.")
        if rc.deps.phase != Phase.output and "#" not in text:
            raise ModelRetry("Keep investigating with the tools, or call begin_deep_dive / finish_deep_dive.")
        return text

    backstop = usage_limits(limits)
    history: list[ModelMessage] | None = None

    async def run(prompt: str, findings: list[str]) -> str:
        nonlocal history
        try:
            async with agent.iter(prompt, deps=state, message_history=history, usage_limits=backstop) as agent_run:
                node = agent_run.next_node
                while not Agent.is_end_node(node):
                    if Agent.is_model_request_node(node):
                        _trace_refused(state, node.request, transcript)
                        enforce_budgets(state)
                        check_stop(state)  # the stop policy, at the head of every iteration
                        transcript.append(node.request)
                        state.iterations += 1
                        started = time.perf_counter()
                    node = await agent_run.next(node)
                    if Agent.is_call_tools_node(node):
                        record(state, node.model_response, time.perf_counter() - started, transcript)
                history = agent_run.all_messages()
                return node.data.output
        except pai_exc.UsageLimitExceeded as e:
            raise StepBudgetExceeded(str(e)) from e
        except pai_exc.UnexpectedModelBehavior as e:
            raise ModelUnusable(_unusable(state, e)) from e

    return run


def record(state: RunState, response: ModelResponse, seconds: float, transcript: list[ModelMessage]) -> None:
    """Meter and trace one model response."""
    transcript.append(response)
    usage = response_usage(response)
    state.meter.add_request(state.phase, usage)
    state.emit(RequestEvent, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
               cached_tokens=usage.cached_tokens, latency_ms=seconds * 1000, finish_reason=response.finish_reason)  # fmt: skip


_REFUSED_BEFORE_A_TOOL = frozenset({"validation_error", "unknown_tool", "unavailable_tool"})


def _trace_refused(state: RunState, request: ModelRequest, transcript: list[ModelMessage]) -> None:
    """Trace the tool calls PydanticAI refused before they reached a funnel tool (a tool not offered in this phase,
    an unknown tool, arguments that are not JSON or not the tool's schema); all count toward the hard cap, and bad
    arguments count as failed calls (like a `ToolError`)."""
    calls = {}
    if transcript and isinstance(transcript[-1], ModelResponse):
        calls = {p.tool_call_id: p for p in transcript[-1].parts if isinstance(p, ToolCallPart)}
    for part in request.parts:
        retry = getattr(part, "retry", None)
        if not isinstance(part, ToolReturnPart) or retry is None or retry.cause not in _REFUSED_BEFORE_A_TOOL:
            continue
        if retry.cause == "validation_error":  # the model's mistake, like a ToolError: a failed call
            msgs = [_invalid(d) for d in part.content] if isinstance(part.content, list) else [str(part.content)]
            refusal = "invalid arguments: " + "; ".join(msgs)
            state.consecutive_tool_errors += 1
            state.last_tool_error = refusal
        else:  # a refusal, like the funnel gate's: not a failure, but the model may be done with the phase
            refusal = state.refused(part.tool_name)
        call = calls.get(part.tool_call_id)
        try:
            args = call.args_as_dict() if call is not None else {}
        except ValueError:
            args = {"_raw": str(call.args)}
        state.tool_calls_total += 1
        state.emit(ToolCallEvent, tool=part.tool_name, args=args, error=refusal)


def _invalid(error: object) -> str:
    """One validation error of a tool call's arguments, with the argument it is about (`path: Field required`)."""
    if not isinstance(error, dict):
        return str(error)
    where = ".".join(str(x) for x in error.get("loc") or ())
    return f"{where}: {error.get('msg', error)}" if where else str(error.get("msg", error))


_GAVE_UP_ON_TOOL = re.compile(r"Tool '(?P<tool>[^']+)' exceeded max retries count of (?P<n>\d+)")


def _unusable(state: RunState, e: pai_exc.UnexpectedModelBehavior) -> str:
    """The termination detail of a model whose answers PydanticAI gave up on, in the harness's words."""
    if m := _GAVE_UP_ON_TOOL.match(str(e)):
        tool = m.group("tool")
        why = state.last_refusal if f"`{tool}`" in state.last_refusal else state.last_tool_error or "refused"
        return f"the model did not produce a usable report: it kept calling `{tool}` ({why})"
    if isinstance(e, pai_exc.ContentFilterError):
        return f"{failure_text(e)}; not asked again: the same request would be refused again"
    return f"the model did not produce a usable report: {failure_text(e)}"


def command_attempt(state: RunState, explorer: ReportCommand, ctx: ExplorerContext, system: str,
                    transcript: list[ModelMessage], summarize: Summarizer | None) -> Attempt:  # fmt: skip
    """An external CLI agent: one request per attempt, prompt on stdin, report on stdout."""

    async def run(prompt: str, findings: list[str]) -> str:
        check_stop(state)
        user = prompts.user_prompt(ctx.report, state.limits, kind=ctx.classification)
        text = prompts.command_prompt(system=system, user=user, findings=findings or None)
        state.iterations += 1
        transcript.append(ModelRequest(parts=[UserPromptPart(text)]))
        state.move_to(Phase.output, forced=False, reason="the external agent uses its own tools")
        remaining = max(1.0, min(state.limits.command_timeout_s, state.deadline - time.monotonic()))
        out = await explorer.run(text, root=ctx.root, timeout_s=remaining, cancel=state.cancel)
        response = ModelResponse(parts=[TextPart(out.stdout)], usage=out.usage or RequestUsage(),
                                 model_name=explorer.name, finish_reason="stop",
                                 provider_details={"stderr": out.stderr})  # fmt: skip
        record(state, response, out.seconds, transcript)
        return out.stdout

    return run

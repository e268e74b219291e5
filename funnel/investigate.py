"""`investigate()`: one investigation, from bug report to validated `Diagnosis`.

Two loops, one place where runs stop:

* the attempt loop (`Limits.max_attempts`): run the explorer, verify its report, and start the next attempt with
  the verifier's findings when it fails;
* the agent loop (PydanticAI `agent.iter()`), with the stop policy (`funnel.stop.check_stop`) and the funnel's
  budget gate (`RunState.enforce_budgets`) at the head of every iteration.

Every stop clause is a `StopRun` exception, caught once, in `investigate`; the trace, the transcript and the
diagnosis are saved in its `finally`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai import exceptions as pai_exc
from pydantic_ai.capabilities import PrepareTools, ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.usage import UsageLimits

from funnel import prompts
from funnel.cancel import CancelToken
from funnel.compaction import CompactionPolicy, Summarizer, history_processor, model_summarizer
from funnel.errors import UserError
from funnel.explorers import Explorer, ExplorerContext, explorer_name, resolve_explorer
from funnel.explorers.agent import RetryingModel, build_model_from_spec
from funnel.explorers.command import CommandExplorer
from funnel.hooks import Hooks, default_hooks
from funnel.limits import Limits
from funnel.meter import response_usage
from funnel.phases import RunState, funnel_tools, offered_tools, tools_for
from funnel.stop import (
    Cancelled,
    CostBudgetExceeded,
    StepBudgetExceeded,
    StopRun,
    Unrecoverable,
    assemble_diagnosis,
    check_stop,
)
from funnel.trace import TraceWriter
from schemas.diagnosis import Diagnosis, Termination
from schemas.enums import Phase, StopReason
from schemas.report import BugReport
from schemas.trace import (
    PhaseChangeEvent,
    RequestEvent,
    StartEvent,
    StopEvent,
    ToolCallEvent,
    TraceEvent,
    VerifyEvent,
)

__all__ = ("InvestigationResult", "investigate", "investigate_sync")

_log = logging.getLogger(__name__)


@dataclass
class InvestigationResult:
    """What one investigation produced."""

    diagnosis: Diagnosis
    """The validated diagnosis (partial, with its termination, when the run stopped early)."""
    report_markdown: str
    """The explorer's last markdown report ('' when it wrote none)."""
    events: list[TraceEvent] = field(default_factory=list)
    """Every trace event of the run."""
    messages: list[ModelMessage] = field(default_factory=list)
    """The full, uncompacted transcript."""
    verify_findings: list[str] = field(default_factory=list)
    """What the verifier still refused after the last attempt (empty when the report passed)."""


async def investigate(
    report: BugReport,
    root: Path | str,
    *,
    explorer: str | Explorer | CommandExplorer = "offline",
    limits: Limits | None = None,
    repo_map: Any = None,
    trace_path: Path | None = None,
    cancel: CancelToken | None = None,
    commit: str | None = None,
    structurer: str | None = None,
    extra_context: str | None = None,
    memory: str | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    hooks: Hooks | None = None,
    summarize: Summarizer | None = None,
) -> InvestigationResult:
    """Investigate a bug report in a repository tree; always returns a result whose termination says how it ended."""
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"repository root {root} is not a directory")
    limits = limits or Limits()
    explorer = resolve_explorer(explorer)
    started = time.monotonic()
    tracer = TraceWriter(trace_path, on_event)
    state = RunState(limits=limits, root=root, sandbox=None, cancel=cancel or CancelToken(), tracer=tracer,
                     hooks=hooks or default_hooks(), deadline=started + limits.timeout_s)  # fmt: skip
    transcript: list[ModelMessage] = []
    markdown, findings, stop = "", [], None
    diagnosis: Diagnosis | None = None
    try:
        state.emit(StartEvent, explorer=explorer_name(explorer), report_title=report.title, root=str(root),
                   commit=commit, limits=limits.to_dict())  # fmt: skip
        context = asyncio.to_thread(_context, report, root, state, repo_map, extra_context, memory)  # map: off-loop
        markdown, findings = await _guarded(state, _attempts(state, explorer, context, transcript, summarize))
    except StopRun as e:
        stop, markdown = e, state.last_markdown
    except UserError as e:  # misconfiguration found mid-run (e.g. by an explorer): said plainly
        stop, markdown = Unrecoverable(str(e)), state.last_markdown
    except Exception as e:  # a bug of ours: still an honest result, never a crash without a trace
        _log.exception("investigation failed")
        stop, markdown = Unrecoverable(f"internal error: {type(e).__name__}: {e}"), state.last_markdown
    finally:
        try:
            diagnosis = assemble_diagnosis(state, markdown, findings, stop, explorer=explorer_name(explorer),
                                           structurer=structurer, commit=commit, seconds=time.monotonic() - started)  # fmt: skip
        except Exception as e:  # never leave without a result
            _log.exception("could not assemble the diagnosis")
            detail = f"internal error while assembling the result: {type(e).__name__}: {e}"
            diagnosis = Diagnosis(summary=detail, termination=Termination(reason=StopReason.error, detail=detail))
        try:
            term = diagnosis.termination
            state.emit(StopEvent, reason=term.reason, detail=term.detail)
            tracer.save_diagnosis(diagnosis)
        finally:
            tracer.save_messages(transcript)
            tracer.close()
    return InvestigationResult(diagnosis, markdown, list(tracer.events), transcript, findings)


def investigate_sync(report: BugReport, root: Path | str, **kwargs: Any) -> InvestigationResult:
    """`investigate` for synchronous callers (CLI, evaluation)."""
    return asyncio.run(investigate(report, root, **kwargs))


def _context(report: BugReport, root: Path, state: RunState, repo_map: Any, extra: str | None, memory: str | None) -> ExplorerContext:
    """Build the sandbox, the focused repo map and the explorer context (and finish the run state)."""
    from funnel.sandbox import Sandbox

    focus = None
    try:
        from repomap.focus import Focus

        focus = Focus.from_text(report.text)
    except Exception:
        _log.warning("could not extract a focus from the report", exc_info=True)
    if repo_map is None:
        try:
            from repomap import build_repo_map

            repo_map = build_repo_map(root, focus=focus or report.text, token_budget=state.limits.repo_map_tokens)
        except Exception:  # the map helps, it is not essential: explore without it
            _log.warning("repo map unavailable for %s", root, exc_info=True)
    state.sandbox = Sandbox(root)
    state.index = getattr(repo_map, "index", None)
    return ExplorerContext(report=report, root=root, repo_map=repo_map, sandbox=state.sandbox, limits=state.limits,
                           focus=focus, extra_context=extra, memory=prompts.load_memory(root, state.limits, memory),
                           template=prompts.report_template())  # fmt: skip


async def _guarded(state: RunState, work: Any) -> tuple[str, list[str]]:
    """Run the attempts; stop within a second on cancellation or the wall-clock timeout."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.05)
            if done:
                return task.result()
            timed_out = time.monotonic() >= state.deadline
            if timed_out or state.cancel.cancelled:
                if timed_out:
                    state.cancel.cancel("timeout")  # kills tool subprocesses too
                task.cancel()
                await asyncio.wait({task}, timeout=0.5)
                if timed_out:
                    raise CostBudgetExceeded(f"timeout: the run took longer than {state.limits.timeout_s:.0f} s")
                raise Cancelled(state.cancel.reason or "cancelled")
    finally:
        if not task.done():
            task.cancel()


async def _attempts(state: RunState, explorer: Any, context: Awaitable[ExplorerContext], transcript: list[ModelMessage],
                    summarize: Summarizer | None) -> tuple[str, list[str]]:  # fmt: skip
    """The attempt loop: explore, verify, and retry with the verifier's findings."""
    from funnel.verify import verify_report

    ctx = await context

    system = prompts.system_prompt(limits=state.limits, repo_map=getattr(ctx.repo_map, "text", None),
                                   memory=ctx.memory, extra_context=ctx.extra_context, template=ctx.template)  # fmt: skip
    prompt = prompts.user_prompt(ctx.report, state.limits)
    run_attempt = _command_attempt if isinstance(explorer, CommandExplorer) else _agent_attempt
    runner = run_attempt(state, explorer, ctx, system, transcript, summarize)
    findings: list[str] = []
    markdown = ""
    for attempt in range(1, state.limits.max_attempts + 1):
        if attempt > 1:
            state.attempt, old = attempt, state.phase
            state.phase, state.phase_calls, state.wrap_up = Phase.deep_dive, 0, None
            state.emit(PhaseChangeEvent, from_phase=old, to_phase=Phase.deep_dive, reason=f"attempt {attempt}")
            prompt = prompts.retry_prompt(findings, attempt)
        markdown = await runner(prompt, findings)
        state.last_markdown = markdown
        verdict = await asyncio.to_thread(verify_report, markdown, ctx.root, ctx.index, sandbox=state.sandbox)
        findings = list(verdict.findings)
        state.emit(VerifyEvent, ok=verdict.ok, findings=findings)
        if verdict.ok:
            return markdown, []
    return markdown, findings


def _agent_attempt(state: RunState, explorer: Explorer, ctx: ExplorerContext, system: str,
                   transcript: list[ModelMessage], summarize: Summarizer | None) -> Callable[..., Any]:  # fmt: skip
    """The agent loop, as a function of one attempt's prompt (the history carries over between attempts)."""
    limits = state.limits
    model = RetryingModel(explorer.build_model(ctx), retries=limits.model_retries, backoff_s=limits.retry_backoff_s,
                          cancel=state.cancel)  # fmt: skip
    if summarize is None and limits.summarizer_model:
        summarize = model_summarizer(build_model_from_spec(limits.summarizer_model))

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
        if not text.strip():
            raise ModelRetry("Your answer was empty. Write the markdown report following the template.")
        if rc.deps.phase != Phase.output and "#" not in text:
            raise ModelRetry("Keep investigating with the tools, or call begin_deep_dive / finish_deep_dive.")
        return text

    usage_limits = UsageLimits(request_limit=limits.max_iterations + 1, total_tokens_limit=limits.max_tokens * 2)
    history: list[ModelMessage] | None = None

    async def run(prompt: str, findings: list[str]) -> str:
        nonlocal history
        try:
            async with agent.iter(prompt, deps=state, message_history=history, usage_limits=usage_limits) as agent_run:
                node = agent_run.next_node
                while not Agent.is_end_node(node):
                    if Agent.is_model_request_node(node):
                        state.enforce_budgets()
                        check_stop(state)  # the stop policy, at the head of every iteration
                        transcript.append(node.request)
                        state.iterations += 1
                        started = time.perf_counter()
                    node = await agent_run.next(node)
                    if Agent.is_call_tools_node(node):
                        _record(state, node.model_response, time.perf_counter() - started, transcript)
                history = agent_run.all_messages()
                return node.data.output
        except pai_exc.UsageLimitExceeded as e:
            raise StepBudgetExceeded(str(e)) from e
        except pai_exc.UnexpectedModelBehavior as e:
            raise Unrecoverable(f"the model did not produce a usable report: {e}") from e

    return run


def _record(state: RunState, response: ModelResponse, seconds: float, transcript: list[ModelMessage]) -> None:
    """Meter and trace one model response."""
    transcript.append(response)
    usage = response_usage(response)
    state.meter.add_request(state.phase, usage)
    state.emit(RequestEvent, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
               cached_tokens=usage.cached_tokens, latency_ms=seconds * 1000, finish_reason=response.finish_reason)  # fmt: skip
    offered = tools_for(state.phase)
    for part in response.parts:  # calls to hidden tools never reach our tools: PydanticAI refuses them; trace them
        if isinstance(part, ToolCallPart) and part.tool_name not in offered:
            state.tool_calls_total += 1
            refusal = f"`{part.tool_name}` is not available in the {state.phase.value} phase"
            state.emit(ToolCallEvent, tool=part.tool_name, args=part.args_as_dict(), error=refusal)


def _command_attempt(state: RunState, explorer: CommandExplorer, ctx: ExplorerContext, system: str,
                     transcript: list[ModelMessage], summarize: Summarizer | None) -> Callable[..., Any]:  # fmt: skip
    """An external CLI agent: one request per attempt, prompt on stdin, report on stdout."""

    async def run(prompt: str, findings: list[str]) -> str:
        check_stop(state)
        user = prompts.user_prompt(ctx.report, state.limits)
        text = prompts.command_prompt(system=system, user=user, findings=findings or None)
        state.iterations += 1
        transcript.append(ModelRequest(parts=[UserPromptPart(text)]))
        state.phase = Phase.output
        remaining = max(1.0, min(state.limits.command_timeout_s, state.deadline - time.monotonic()))
        out = await explorer.run(text, root=ctx.root, timeout_s=remaining, cancel=state.cancel)
        response = ModelResponse(parts=[TextPart(out.stdout)], model_name=explorer.name, finish_reason="stop",
                                 provider_details={"stderr": out.stderr})  # fmt: skip
        _record(state, response, out.seconds, transcript)
        return out.stdout

    return run

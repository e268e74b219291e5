"""`investigate()`: one investigation, from bug report to validated `Diagnosis`.

Two loops, one place where runs stop:

* the attempt loop (`Limits.max_attempts`): run the explorer, verify its report, and start the next attempt with
  the verifier's findings when it fails;
* the agent loop (PydanticAI `agent.iter()`), with the stop policy (`funnel.stop.check_stop`) and the funnel's
  budget gate (`RunState.enforce_budgets`) at the head of every iteration.

Every stop clause is a `StopRun` exception, caught once per run (`_Run.once`); the trace, the transcript and the
diagnosis are saved in `investigate`'s `finally`.

With a model explorer (a PydanticAI model string), the offline ranking runs first as a lexical pre-pass whose
candidates are shown to the model (`funnel.prepass`), and when the model endpoint fails (`ModelUnavailable`)
the offline investigator redoes the run; the trace keeps both runs, the diagnosis says it is a fallback.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai import exceptions as pai_exc
from pydantic_ai.capabilities import PrepareTools, ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.usage import UsageLimits

from funnel.run import prompts
from funnel.cancel import CancelToken
from funnel.run.compaction import CompactionPolicy, Summarizer, history_processor, model_summarizer
from funnel.errors import UserError
from funnel.explorers import Explorer, ExplorerContext, explorer_name, resolve_explorer
from funnel.explorers.agent import ModelExplorer, RetryingModel, build_model_from_spec
from funnel.explorers.command import CommandExplorer
from funnel.run.hooks import Hooks, default_hooks
from funnel.limits import Limits
from funnel.run.meter import response_usage
from funnel.phases import RunState, funnel_tools, offered_tools, tools_for
from funnel.localize.prepass import Prepass, render_candidates, run_prepass
from funnel.run.budget import (
    Cancelled,
    CostBudgetExceeded,
    ModelUnavailable,
    StepBudgetExceeded,
    StopRun,
    Unrecoverable,
    assemble_diagnosis,
    check_stop,
)
from funnel.run.trace import TraceWriter
from schemas.diagnosis import Diagnosis, PhaseStats, Termination
from schemas.enums import Phase, StopReason
from schemas.report import BugReport
from schemas.trace import (
    PhaseChangeEvent,
    PrepassEvent,
    RequestEvent,
    StartEvent,
    StopEvent,
    ToolCallEvent,
    TraceEvent,
    VerifyEvent,
)

if TYPE_CHECKING:
    from funnel.explorers.offline.rank import RankedLocations

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
    ranking: RankedLocations | None = None
    """The ranking behind the diagnosis, deeper than it names (top 10 files, top 15 functions): the offline
    investigator's own, or a model's lexical pre-pass; None when neither ran (a command explorer)."""


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
    git_dir: Path | str | None = None,
    structurer: str | None = None,
    extra_context: str | None = None,
    memory: str | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    hooks: Hooks | None = None,
    summarize: Summarizer | None = None,
) -> InvestigationResult:
    """Investigate a bug report in a repository tree; always returns a result whose termination says how it ended.

    With a model explorer, the offline ranking runs first as a cheap pre-pass (`Limits.prepass`), and a run
    the model endpoint failed is redone by the offline investigator (`Limits.fallback_to_offline`).
    """
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"repository root {root} is not a directory")
    if git_dir is not None:
        from funnel.localize.history import HistorySource

        if HistorySource.locate(root, git_dir) is None:
            raise UserError(f"git directory {git_dir} is not a git repository (bare, .git or a work tree)")
    limits = limits or Limits()
    explorer = resolve_explorer(explorer)
    started = time.monotonic()
    tracer = TraceWriter(trace_path, on_event)
    cancel = cancel or CancelToken()
    is_model = isinstance(explorer, ModelExplorer)
    wants_prepass = is_model and limits.prepass and limits.prepass_candidates > 0
    contexts = _Contexts(report, root, repo_map, extra_context, memory, limits, prepass=wants_prepass,
                         history=(git_dir, commit))
    transcript: list[ModelMessage] = []
    run = _Run(tracer=tracer, limits=limits, root=root, cancel=cancel, hooks=hooks or default_hooks(),
               deadline=started + limits.timeout_s, started=started, transcript=transcript, contexts=contexts,
               report=report, commit=commit, structurer=structurer, summarize=summarize)  # fmt: skip
    outcome: _Outcome | None = None
    used = explorer
    try:
        outcome = await run.once(explorer, explorer_name(explorer))
        reason = _fallback_reason(outcome, is_model, limits, cancel)
        if reason is not None:
            first, name = outcome, explorer_name(explorer)
            fallback = f"offline (fallback from {name}: {_short(reason)})"
            used = _offline_explorer()
            outcome = await run.once(used, fallback)
            _mark_fallback(outcome.diagnosis, first, name, reason, fallback)
    finally:
        try:
            if outcome is not None:
                tracer.save_diagnosis(outcome.diagnosis)
        finally:
            tracer.save_messages(transcript)
            tracer.close()
    return InvestigationResult(outcome.diagnosis, outcome.markdown, list(tracer.events), transcript, outcome.findings,
                               _ranked_locations(used, contexts.prepass))


def _ranked_locations(explorer: Any, prepass: Prepass | None) -> RankedLocations | None:
    """The offline investigator's ranking when it ran, else the pre-pass ranking a model was shown."""
    policy = getattr(explorer, "last_policy", None)
    located = policy.ranked_locations() if policy is not None else None
    return located or (prepass.ranking if prepass is not None else None)


def investigate_sync(report: BugReport, root: Path | str, **kwargs: Any) -> InvestigationResult:
    """`investigate` for synchronous callers (CLI, evaluation)."""
    return asyncio.run(investigate(report, root, **kwargs))


@dataclass
class _Outcome:
    """How one run of an explorer ended."""

    diagnosis: Diagnosis
    markdown: str
    findings: list[str]
    stop: StopRun | None
    state: RunState


@dataclass(kw_only=True)
class _Run:
    """What every run of one investigation shares (the model's and, after a failed endpoint, the offline fallback's)."""

    tracer: TraceWriter
    limits: Limits
    root: Path
    cancel: CancelToken
    hooks: Hooks
    deadline: float
    started: float
    transcript: list[ModelMessage]
    contexts: _Contexts
    report: BugReport
    commit: str | None
    structurer: str | None
    summarize: Summarizer | None

    async def once(self, explorer: Any, name: str) -> _Outcome:
        """Run one explorer to its end; the stop event is emitted and the diagnosis assembled whatever happens."""
        state = RunState(limits=self.limits, root=self.root, sandbox=None, cancel=self.cancel, tracer=self.tracer,
                         hooks=self.hooks, deadline=self.deadline)  # fmt: skip
        markdown, findings, stop = "", [], None
        diagnosis: Diagnosis | None = None
        try:
            state.emit(StartEvent, explorer=name, report_title=self.report.title, root=str(self.root),
                       commit=self.commit, limits=self.limits.to_dict())  # fmt: skip
            work = _attempts(state, explorer, self.contexts, self.transcript, self.summarize)
            markdown, findings = await _guarded(state, work)
        except StopRun as e:
            stop, markdown = e, state.last_markdown
        except UserError as e:  # misconfiguration found mid-run (e.g. by an explorer): said plainly
            stop, markdown = Unrecoverable(str(e)), state.last_markdown
        except Exception as e:  # a bug of ours: still an honest result, never a crash without a trace
            _log.exception("investigation failed")
            stop, markdown = Unrecoverable(f"internal error: {type(e).__name__}: {e}"), state.last_markdown
        finally:
            try:
                diagnosis = assemble_diagnosis(state, markdown, findings, stop, explorer=name,
                                               structurer=self.structurer, commit=self.commit,
                                               seconds=time.monotonic() - self.started)  # fmt: skip
            except Exception as e:  # never leave without a result
                _log.exception("could not assemble the diagnosis")
                detail = f"internal error while assembling the result: {type(e).__name__}: {e}"
                diagnosis = Diagnosis(summary=detail, termination=Termination(reason=StopReason.error, detail=detail))
            term = diagnosis.termination
            state.emit(StopEvent, reason=term.reason, detail=term.detail)
        return _Outcome(diagnosis, markdown, findings, stop, state)


class _Contexts:
    """Builds the explorer context (sandbox, focused repo map, pre-pass) once, off the event loop, for every run."""

    def __init__(self, report: BugReport, root: Path, repo_map: Any, extra: str | None, memory: str | None,
                 limits: Limits, *, prepass: bool, history: tuple[Path | str | None, str | None] = (None, None)) -> None:  # fmt: skip
        self._args = (report, root, repo_map, extra, memory, limits, prepass, history)
        self._value: tuple[ExplorerContext, Prepass | None] | None = None

    @property
    def prepass(self) -> Prepass | None:
        """The pre-pass, once the context is built and when it ran."""
        return self._value[1] if self._value is not None else None

    async def get(self) -> tuple[ExplorerContext, Prepass | None]:
        """The context and the pre-pass (None when it did not run)."""
        if self._value is None:
            self._value = await asyncio.to_thread(_context, *self._args)  # the map: off the loop
        return self._value


def _context(report: BugReport, root: Path, repo_map: Any, extra: str | None, memory: str | None, limits: Limits,
             prepass: bool, history: tuple[Path | str | None, str | None]) -> tuple[ExplorerContext, Prepass | None]:  # fmt: skip
    """Build the sandbox, the focused repo map, the explorer context, the history source and (for a model) the
    lexical pre-pass."""
    from funnel.localize.history import HistorySource
    from funnel.tools.sandbox import Sandbox

    focus = None
    try:
        from repomap.focus import Focus

        focus = Focus.from_text(report.text)
    except Exception:
        _log.warning("could not extract a focus from the report", exc_info=True)
    if repo_map is None:
        try:
            from repomap import build_repo_map

            repo_map = build_repo_map(root, focus=focus or report.text, token_budget=limits.repo_map_tokens)
        except Exception:  # the map helps, it is not essential: explore without it
            _log.warning("repo map unavailable for %s", root, exc_info=True)
    source = HistorySource.locate(root, *history) if limits.history else None
    ctx = ExplorerContext(report=report, root=root, repo_map=repo_map, sandbox=Sandbox(root), limits=limits,
                          focus=focus, extra_context=extra, memory=prompts.load_memory(root, limits, memory),
                          template=prompts.report_template(), history=source)  # fmt: skip
    found = None
    if prepass:
        found = run_prepass(report.text, root, repo_map, focus=focus, top=limits.prepass_candidates, history=source)
    return ctx, found


def _fallback_reason(outcome: _Outcome, is_model: bool, limits: Limits, cancel: CancelToken) -> str | None:
    """Why the offline investigator should redo the run (the model endpoint failed), or None."""
    if not (is_model and limits.fallback_to_offline) or cancel.cancelled:
        return None
    if isinstance(outcome.stop, ModelUnavailable):
        return outcome.stop.detail or "the model endpoint failed"
    return None


def _offline_explorer() -> Explorer:
    from funnel.explorers.offline import OfflineExplorer

    return OfflineExplorer()


def _short(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _mark_fallback(diagnosis: Diagnosis, first: _Outcome, model: str, reason: str, explorer: str) -> None:
    """Say in the diagnosis that the offline investigator produced it, and count what the model run used."""
    note = f"offline fallback: the model explorer {model} failed ({_short(reason)})"
    term = diagnosis.termination
    term.detail = f"{note}; {term.detail}" if term.detail else note
    diagnosis.summary = f"[Offline fallback: {model} failed.] {diagnosis.summary}".strip()
    stats = diagnosis.stats
    stats.explorer = explorer
    for phase, used in first.state.meter.per_phase.items():
        mine = stats.per_phase.setdefault(phase, PhaseStats())
        for f in ("tool_calls", "input_tokens", "output_tokens", "cached_tokens", "requests"):
            setattr(mine, f, getattr(mine, f) + getattr(used, f))
    stats.tool_calls += first.state.meter.tool_calls
    stats.input_tokens += first.state.meter.input_tokens
    stats.output_tokens += first.state.meter.output_tokens
    if first.state.meter.cost_usd is not None:
        stats.cost_usd = (stats.cost_usd or 0.0) + first.state.meter.cost_usd


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


async def _attempts(state: RunState, explorer: Any, contexts: _Contexts, transcript: list[ModelMessage],
                    summarize: Summarizer | None) -> tuple[str, list[str]]:  # fmt: skip
    """The attempt loop: explore, verify, and retry with the verifier's findings."""
    from funnel.report.verify import verify_report

    ctx, found = await contexts.get()
    state.sandbox, state.index = ctx.sandbox, ctx.index
    repo_map, candidates = ctx.repo_map, None
    if found is not None and isinstance(explorer, ModelExplorer):
        state.emit(PrepassEvent, candidates=found.candidates, seconds=round(found.seconds, 3), detail=found.detail)
        candidates = render_candidates(found.candidates) if found.candidates else None
        repo_map = found.repo_map or repo_map
    system = prompts.system_prompt(limits=state.limits, repo_map=getattr(repo_map, "text", None), memory=ctx.memory,
                                   extra_context=ctx.extra_context, template=ctx.template, candidates=candidates)  # fmt: skip
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
    try:
        built = explorer.build_model(ctx)
    except UserError as e:
        if not isinstance(explorer, ModelExplorer):
            raise
        raise ModelUnavailable(f"the model could not be set up: {e}") from e
    model = RetryingModel(built, retries=limits.model_retries, backoff_s=limits.retry_backoff_s, cancel=state.cancel)
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

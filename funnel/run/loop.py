"""`investigate()`: one investigation, from bug report to validated `Diagnosis`.

Two loops, one place where runs stop:

* the attempt loop (`Limits.max_attempts`): run the explorer, verify its report, and start the next attempt with
  the verifier's findings when it fails;
* the agent loop (`funnel.run.drivers`), with the stop policy and the funnel's budget gate (`funnel.run.budget`)
  at the head of every iteration.

Every stop clause is a `StopRun` exception, caught once per run (`_Run.once`); the trace, the transcript and the
diagnosis are saved in `investigate`'s `finally`.

With a model explorer (a PydanticAI model string), the offline ranking runs first as a lexical pre-pass whose
candidates are shown to the model (`funnel.localize.prepass`), and when the model endpoint fails (`ModelUnavailable`)
the offline investigator redoes the run; the trace keeps both runs, the diagnosis says it is a fallback.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage

from funnel.cancel import CancelToken
from funnel.classify import classify
from funnel.errors import Cancelled, RunFailed, StopRun, UserError
from funnel.explorers import (
    AgentExplorer,
    Explorer,
    ExplorerSpec,
    ReportCommand,
    explorer_name,
    ranking_of,
    resolve_explorer,
    traits_of,
)
from funnel.limits import Limits
from funnel.localize.citations import RankedLocations
from funnel.localize.history import HistorySource
from funnel.localize.prepass import render_candidates
from funnel.report.redact import redact_diagnosis, redact_text, withheld_values
from funnel.report.verify import verify_report
from funnel.retry import build_model_from_spec
from funnel.run import prompts
from funnel.run.budget import guarded
from funnel.run.compaction import Summarizer
from funnel.run.context import ContextRequest, Contexts
from funnel.run.drivers import agent_attempt, command_attempt
from funnel.run.hooks import Hooks, default_hooks
from funnel.run.outcome import assemble_diagnosis, fallback_reason, mark_fallback, short
from funnel.run.state import RunState
from funnel.run.trace import TraceWriter
from repomap import RepoMap
from repomap.walk import MapCancelled
from schemas.diagnosis import Diagnosis, Termination
from schemas.enums import Classification, StopReason
from schemas.report import BugReport
from schemas.trace import PrepassEvent, StartEvent, StopEvent, TraceEvent, VerifyEvent

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
    explorer: ExplorerSpec = "offline",
    limits: Limits | None = None,
    repo_map: RepoMap | None = None,
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
    root = _checked_root(root, git_dir, commit)
    if structurer not in (None, "parser"):
        build_model_from_spec(structurer)  # an unknown model or a missing key is the caller's to fix, not a fallback
    limits = limits or Limits()
    explorer = resolve_explorer(explorer)
    started = time.monotonic()
    try:
        tracer = TraceWriter(trace_path, on_event)
    except OSError as e:  # a directory, a read-only place
        raise UserError(f"cannot write the trace to {trace_path}: {e.strerror or e}") from None
    cancel = cancel or CancelToken()
    traits = traits_of(explorer)
    wants_prepass = traits.prepass and limits.prepass and limits.prepass_candidates > 0
    kind = classify(report).label
    contexts = Contexts(ContextRequest(report=report, root=root, repo_map=repo_map, extra=extra_context, memory=memory,
                                       limits=limits, prepass=wants_prepass, git_dir=git_dir, commit=commit,
                                       cancel=cancel.event, classification=kind))
    transcript: list[ModelMessage] = []
    run = _Run(tracer=tracer, limits=limits, root=root, cancel=cancel, hooks=hooks or default_hooks(),
               deadline=started + limits.timeout_s, started=started, transcript=transcript, contexts=contexts,
               report=report, classification=kind, commit=commit, structurer=structurer,
               summarize=summarize)  # fmt: skip
    outcome: _Outcome | None = None
    try:
        used = explorer
        outcome = await run.once(explorer, explorer_name(explorer))
        reason = fallback_reason(outcome.stop, traits.offline_fallback and limits.fallback_to_offline, cancel)
        if reason is not None:
            first, name = outcome, explorer_name(explorer)
            fallback = f"offline (fallback from {name}: {short(reason)})"
            used = resolve_explorer("offline")
            outcome = await run.once(used, fallback)
            mark_fallback(outcome.diagnosis, first.state, name, reason, fallback)
        values = await asyncio.to_thread(withheld_values, root)  # the last guard (funnel/report/redact.py)
        outcome.diagnosis = redact_diagnosis(outcome.diagnosis, values)
        outcome.markdown = redact_text(outcome.markdown, values)
    finally:
        try:
            if outcome is not None:
                tracer.save_diagnosis(outcome.diagnosis)
        finally:
            tracer.save_messages(transcript)
            tracer.close()
    prepass = contexts.prepass
    ranking = ranking_of(used) or (prepass.ranking if prepass is not None else None)
    return InvestigationResult(outcome.diagnosis, outcome.markdown, list(tracer.events), transcript, outcome.findings,
                               ranking)


def _checked_root(root: Path | str, git_dir: Path | str | None, commit: str | None) -> Path:
    """The repository root, resolved, once it and what it comes with are checked: a directory, a git directory that
    is one, a commit that git directory holds (`UserError` naming the one that is wrong)."""
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"repository root {root} is not a directory")
    source = HistorySource.locate(root, git_dir, commit) if git_dir is not None or commit else None
    if git_dir is not None and source is None:
        raise UserError(f"git directory {git_dir} is not a git repository (bare, .git or a work tree)")
    if commit and source is not None and not source.has_commit():
        raise UserError(f"commit {commit} is not in the git directory {source.git_dir}")
    return root


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
    contexts: Contexts
    report: BugReport
    classification: Classification
    commit: str | None
    structurer: str | None
    summarize: Summarizer | None

    async def once(self, explorer: Explorer, name: str) -> _Outcome:
        """Run one explorer to its end; the stop event is emitted and the diagnosis assembled whatever happens."""
        state = RunState(limits=self.limits, root=self.root, sandbox=None, cancel=self.cancel, tracer=self.tracer,
                         hooks=self.hooks, deadline=self.deadline)  # fmt: skip
        markdown, findings, stop = "", [], None
        diagnosis: Diagnosis | None = None
        try:
            state.emit(StartEvent, explorer=name, report_title=self.report.title, root=str(self.root),
                       commit=self.commit, limits=self.limits.to_dict())  # fmt: skip
            work = _attempts(state, explorer, self.contexts, self.transcript, self.summarize)
            markdown, findings = await guarded(state, work)
        except StopRun as e:
            stop, markdown = e, state.last_markdown
        except UserError as e:  # misconfiguration found mid-run (e.g. by an explorer): said plainly
            stop, markdown = RunFailed(str(e)), state.last_markdown
        except Exception as e:  # a bug of ours: still an honest result, never a crash without a trace
            _log.exception("investigation failed")
            stop, markdown = RunFailed(f"internal error: {type(e).__name__}: {e}"), state.last_markdown
        finally:
            try:
                diagnosis = assemble_diagnosis(state, markdown, findings, stop, explorer=name,
                                               structurer=self.structurer, commit=self.commit,
                                               seconds=time.monotonic() - self.started)  # fmt: skip
            except Exception as e:  # never leave without a result
                _log.exception("could not assemble the diagnosis")
                detail = f"internal error while assembling the result: {type(e).__name__}: {e}"
                diagnosis = Diagnosis(summary=detail, termination=Termination(reason=StopReason.error, detail=detail))
            diagnosis.classification = self.classification  # what the report is, whoever wrote the diagnosis
            term = diagnosis.termination
            state.emit(StopEvent, reason=term.reason, detail=term.detail)
        return _Outcome(diagnosis, markdown, findings, stop, state)


async def _attempts(state: RunState, explorer: Explorer, contexts: Contexts, transcript: list[ModelMessage],
                    summarize: Summarizer | None) -> tuple[str, list[str]]:  # fmt: skip
    """The attempt loop: explore, verify, and retry with the verifier's findings."""
    try:
        ctx, found = await contexts.get()
    except MapCancelled:  # the map build saw the cancel first
        raise Cancelled(state.cancel.reason or "cancelled") from None
    state.sandbox, state.index = ctx.sandbox, ctx.index
    repo_map, candidates = ctx.repo_map, None
    if found is not None and traits_of(explorer).prepass:  # not for the offline fallback sharing the context
        state.emit(PrepassEvent, candidates=found.candidates, seconds=round(found.seconds, 3), detail=found.detail)
        candidates = render_candidates(found.candidates) if found.candidates else None
        repo_map = found.repo_map or repo_map
    system = prompts.system_prompt(limits=state.limits, repo_map=getattr(repo_map, "text", None), memory=ctx.memory,
                                   extra_context=ctx.extra_context, template=ctx.template, candidates=candidates)  # fmt: skip
    prompt = prompts.user_prompt(ctx.report, state.limits, kind=ctx.classification)
    if isinstance(explorer, ReportCommand):
        runner = command_attempt(state, explorer, ctx, system, transcript, summarize)
    elif isinstance(explorer, AgentExplorer):
        runner = agent_attempt(state, explorer, ctx, system, transcript, summarize)
    else:
        raise UserError(f"explorer {explorer.name!r} has neither build_model() nor run()")
    findings: list[str] = []
    markdown = ""
    for attempt in range(1, state.limits.max_attempts + 1):
        if attempt > 1:
            note = state.start_attempt(attempt)
            prompt = prompts.retry_prompt(findings, attempt) + (f"\n\n{note}" if note else "")
        markdown = await runner(prompt, findings)
        state.last_markdown = markdown
        verdict = await asyncio.to_thread(verify_report, markdown, ctx.root, ctx.index, limits=state.limits.verify,
                                          sandbox=state.sandbox)
        state.last_verdict = (markdown, verdict)
        findings = list(verdict.findings)
        state.emit(VerifyEvent, ok=verdict.ok, findings=findings)
        if verdict.ok:
            return markdown, []
    return markdown, findings

"""Structuring: markdown report in, validated `Diagnosis` out.

By default the deterministic parser of `funnel.report.parse` reads the report (no model). When a structurer
model is configured, a cheap PydanticAI agent reads free-form markdown into the same `ReportDraft`; its
output validator runs the same repository checks (`funnel.report.verify.check_claims`) and asks the model to
retry, a bounded number of times, when it mis-copied a path or a snippet. Both paths end in
`build_diagnosis`, so they produce the same object from the same checks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
from dataclasses import dataclass, field

from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.models import Model

from funnel.limits import Limits
from funnel.report.parse import parse_report
from funnel.report.template import ReportDraft
from funnel.retry import RetryingModel, build_model_from_spec, failure_text
from funnel.tool_calls import ToolCallRepair
from funnel.tools.sandbox import Sandbox
from funnel.report.verify import CheckedClaims, SymbolLookup, VerifyLimits, check_claims
from schemas.diagnosis import ComplexityRating, Diagnosis, RiskRating, RootCause, RunStats, Termination
from schemas.enums import Classification, Complexity, Risk, StopReason


__all__ = ("STRUCTURER_INSTRUCTIONS", "StructureOptions", "build_diagnosis", "structure", "structure_async")

_log = logging.getLogger(__name__)

STRUCTURER_INSTRUCTIONS = """\
You turn a bug investigation report (markdown) into structured fields. Copy every file path, line number,
symbol name and code snippet exactly as the report gives them: never invent, shorten or "fix" them. The
snippet (`evidence`) of an affected file is the code quoted under it, verbatim. Rank affected files as the
report does, prime suspect first; role is `cause`, `symptom` or `related`. Complexity is one of
trivial|small|medium|large, risk one of low|medium|high, confidence a number from 0.0 to 1.0. When the report
does not say something, leave the field empty. Leave `notes` empty."""
"""The structurer agent's instructions."""

_LOW_CONFIDENCE_CAP = 0.2


@dataclass(frozen=True)
class StructureOptions:
    """How structuring behaves. Plain data."""

    max_retries: int = 2
    """Times the structurer model is asked to correct its output before what passed is kept."""
    prefer_parser: bool = True
    """With a model configured, use it only when the parser cannot read the report (missing template sections or
    no cited location); False sends every report to the model."""
    verify: VerifyLimits = field(default_factory=VerifyLimits)
    """Tolerances of the repository checks."""
    retry: Limits = field(default_factory=Limits)
    """The model retry policy (`model_retries`, `retry_backoff_s`, `request_timeout_s`): the structurer model runs in
    the same `RetryingModel` as the explorer."""


def build_diagnosis(
    draft: ReportDraft,
    checked: CheckedClaims,
    *,
    classification: Classification = Classification.bug,
    termination: Termination | None = None,
    stats: RunStats | None = None,
    structurer: str = "parser",
) -> Diagnosis:
    """Assemble the `Diagnosis` from a draft and the outcome of checking its claims."""
    rc = draft.root_cause
    summary = draft.summary if checked.summary is None else checked.summary
    explanation = (rc.explanation if checked.explanation is None else checked.explanation).strip()
    evidence = [" ".join(e.split()) for e in (rc.evidence if checked.evidence is None else checked.evidence)
                if e.strip()]
    root_cause = None
    if explanation or evidence:
        root_cause = RootCause(explanation=explanation or "(no explanation given; see the evidence)", evidence=evidence)
    complexity = risk = None
    if draft.complexity and draft.complexity.level in Complexity.__members__:
        complexity = ComplexityRating(level=Complexity(draft.complexity.level), reason=draft.complexity.reason.strip())
    if draft.risk and draft.risk.level in Risk.__members__:
        risk = RiskRating(level=Risk(draft.risk.level), reason=draft.risk.reason.strip())
    confidence = min(1.0, max(0.0, draft.confidence or 0.0))
    if draft.affected_files and not checked.affected_files:
        confidence = min(confidence, _LOW_CONFIDENCE_CAP)  # every suspect it named was refused
    base = stats or RunStats()
    run_stats = base.model_copy(
        update={
            "structurer": structurer,
            "claims_total": checked.claims_total,
            "claims_rejected": checked.claims_rejected,
            "claims_corrected": checked.claims_corrected,
        }
    )
    return Diagnosis(
        classification=classification,
        summary=" ".join(summary.split()) if "\n\n" not in summary else summary.strip(),
        root_cause=root_cause,
        affected_files=checked.affected_files,
        proposed_changes=checked.proposed_changes,
        complexity=complexity,
        risk=risk,
        confidence=round(confidence, 4),
        open_questions=[q.strip() for q in draft.open_questions if q.strip()],
        rejected=checked.rejected,
        corrections=checked.corrections,
        termination=termination or Termination(reason=StopReason.done),
        stats=RunStats.model_validate(run_stats.model_dump()),
    )


def _parser_is_enough(draft: ReportDraft) -> bool:
    return bool(draft.affected_files) and not any(n.startswith("missing section") for n in draft.notes)


@dataclass
class _Deps:
    markdown: str
    root: str | os.PathLike[str]
    index: SymbolLookup | None
    sandbox: Sandbox | None
    limits: VerifyLimits
    checked: CheckedClaims | None = None


def _model_faults(draft: ReportDraft, checked: CheckedClaims, markdown: str) -> list[str]:
    """Problems the structurer model caused (as opposed to problems the report itself has)."""
    squeezed = "".join(markdown.split())
    faults = []
    for claim in checked.rejected:
        path = str(claim.claim.get("path") or "")
        snippet = "".join(str(claim.claim.get("evidence") or "").split())
        if path and path not in markdown:
            faults.append(f"`{path}` does not appear in the report; copy paths exactly as written ({claim.reason}).")
        elif snippet and snippet not in squeezed:
            faults.append(f"The evidence for `{path}` is not what the report quotes; copy the snippet verbatim.")
    if not draft.summary.strip() and markdown.strip():
        faults.append("`summary` is empty; give the report's one- or two-sentence summary.")
    if draft.confidence is not None and not 0.0 <= draft.confidence <= 1.0:
        faults.append(f"`confidence` must be between 0.0 and 1.0, got {draft.confidence}.")
    for name, rating, allowed in (("complexity", draft.complexity, Complexity), ("risk", draft.risk, Risk)):
        if rating is not None and rating.level is not None and rating.level not in allowed.__members__:
            faults.append(f"`{name}.level` must be one of {'|'.join(allowed.__members__)}, got {rating.level!r}.")
    return faults


def _agent(model: str | Model, opts: StructureOptions) -> Agent[_Deps, ReportDraft]:
    agent: Agent[_Deps, ReportDraft] = Agent(
        RetryingModel.for_limits(ToolCallRepair(build_model_from_spec(model)), opts.retry),
        deps_type=_Deps,
        output_type=ReportDraft,
        instructions=STRUCTURER_INSTRUCTIONS,
        retries={"output": opts.max_retries},
    )

    @agent.output_validator
    def _check(ctx: RunContext[_Deps], draft: ReportDraft) -> ReportDraft:
        deps = ctx.deps
        draft.notes = []
        checked = check_claims(draft, deps.root, deps.index, limits=deps.limits, sandbox=deps.sandbox)
        faults = _model_faults(draft, checked, deps.markdown)
        if faults and not ctx.last_attempt:
            raise ModelRetry("Fix these and answer again:\n" + "\n".join(f"- {f}" for f in faults))
        deps.checked = checked
        return draft

    return agent


def _model_name(model: str | Model) -> str:
    if isinstance(model, str):
        return model
    system = getattr(model, "system", None)
    name = getattr(model, "model_name", None) or type(model).__name__
    return f"{system}:{name}" if system and system not in str(name) else str(name)


async def structure_async(
    markdown: str,
    root: str | os.PathLike[str],
    *,
    index: SymbolLookup | None = None,
    model: str | Model | None = None,
    classification: Classification = Classification.bug,
    termination: Termination | None = None,
    stats: RunStats | None = None,
    options: StructureOptions | None = None,
    sandbox: Sandbox | None = None,
    checked: CheckedClaims | None = None,
) -> Diagnosis:
    """Turn a markdown report into a `Diagnosis` whose every claim was checked against the repository at `root`.

    The parser reads the report; with `model` set, a structurer agent reads it instead when the parser cannot
    (or always, with `options.prefer_parser=False`). A failing model falls back to the parser. `checked` is the
    outcome of checking the parsed report's claims when the caller already has it (`VerifyResult.checked` of
    the same markdown): the parser's draft is then not checked a second time.
    """
    opts = options or StructureOptions()
    sb = sandbox
    text = markdown if isinstance(markdown, str) else ""
    draft = parse_report(text)
    if model is not None and not (opts.prefer_parser and _parser_is_enough(draft)):
        deps = _Deps(markdown=text, root=root, index=index, sandbox=sb, limits=opts.verify)
        try:
            result = await _agent(model, opts).run(
                "Structure this investigation report:\n\n" + text, deps=deps
            )
        except Exception as e:  # noqa: BLE001 - any model failure falls back to the parser
            _log.warning("structurer model %s failed (%s: %s); using the parser", _model_name(model), type(e).__name__,
                         failure_text(e))
        else:
            checked = deps.checked or check_claims(result.output, root, index, limits=opts.verify, sandbox=sb)
            return build_diagnosis(result.output, checked, classification=classification, termination=termination,
                                   stats=stats, structurer=_model_name(model))  # fmt: skip
    checked = checked or check_claims(draft, root, index, limits=opts.verify, sandbox=sb)
    return build_diagnosis(draft, checked, classification=classification, termination=termination, stats=stats)


def structure(
    markdown: str,
    root: str | os.PathLike[str],
    *,
    index: SymbolLookup | None = None,
    model: str | Model | None = None,
    classification: Classification = Classification.bug,
    termination: Termination | None = None,
    stats: RunStats | None = None,
    options: StructureOptions | None = None,
    sandbox: Sandbox | None = None,
    checked: CheckedClaims | None = None,
) -> Diagnosis:
    """Synchronous `structure_async`; safe to call from inside a running event loop (the model runs on a thread)."""
    coro_args = dict(index=index, model=model, classification=classification, termination=termination,
                     stats=stats, options=options, sandbox=sandbox, checked=checked)  # fmt: skip
    if model is None:
        opts = options or StructureOptions()
        draft = parse_report(markdown if isinstance(markdown, str) else "")
        checked = checked or check_claims(draft, root, index, limits=opts.verify, sandbox=sandbox)
        return build_diagnosis(draft, checked, classification=classification, termination=termination, stats=stats)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(structure_async(markdown, root, **coro_args))  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="structure") as pool:
        return pool.submit(asyncio.run, structure_async(markdown, root, **coro_args)).result()  # type: ignore[arg-type]

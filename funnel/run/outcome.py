"""The outcome of a run: the diagnosis assembled from the report (structured and validated) or, when the run
stopped before one, an honest partial result; and the marks of an offline fallback."""

from __future__ import annotations

import logging

from funnel.cancel import CancelToken
from funnel.errors import ModelUnavailable, ModelUnusable, NeedsInfo, StopRun
from funnel.report.structure import StructureOptions, structure
from funnel.run.state import RunState
from schemas.diagnosis import AffectedFile, Diagnosis, PhaseStats, RunStats, Termination
from schemas.enums import Role, StopReason

__all__ = ("assemble_diagnosis", "fallback_reason", "mark_fallback", "short")

_log = logging.getLogger(__name__)


def assemble_diagnosis(
    state: RunState,
    markdown: str,
    findings: list[str],
    stop: StopRun | None,
    *,
    explorer: str,
    structurer: str | None,
    commit: str | None,
    seconds: float,
) -> Diagnosis:
    """The run's diagnosis: the structured report when there is one, else an honest partial result.

    A report is always structured through `funnel.report.structure` (which validates every claim against the tree);
    a run that stopped before any report gets the suspects it named and the code it read, with no conclusion.
    """
    diagnosis: Diagnosis | None = None
    structurer_used = "parser"
    if markdown.strip():
        diagnosis, structurer_used = _structure(markdown, state, structurer)
    if diagnosis is None:
        diagnosis = _partial(state, stop)
    if stop is None:
        detail = ""
        if findings:
            detail = f"verification failed after {state.attempt} attempt(s): " + "; ".join(findings)
        termination = Termination(reason=StopReason.done, detail=detail)
    else:
        termination = Termination(reason=stop.reason, detail=stop.detail)
    if isinstance(stop, NeedsInfo):
        diagnosis.open_questions = list(dict.fromkeys([*stop.questions, *diagnosis.open_questions]))
    diagnosis.termination = termination
    meter = state.meter
    old = diagnosis.stats
    diagnosis.stats = RunStats(
        per_phase=dict(meter.per_phase),
        tool_calls=meter.tool_calls,
        input_tokens=meter.input_tokens,
        output_tokens=meter.output_tokens,
        cost_usd=meter.cost_usd,
        duration_s=round(seconds, 3),
        attempts=state.attempt,
        explorer=explorer,
        structurer=structurer_used,
        commit=commit,
        claims_total=old.claims_total,
        claims_rejected=old.claims_rejected,
        claims_corrected=old.claims_corrected,
    )
    return diagnosis


def _structure(markdown: str, state: RunState, structurer: str | None) -> tuple[Diagnosis | None, str]:
    checked = None
    if state.last_verdict is not None and state.last_verdict[0] == markdown:
        checked = state.last_verdict[1].checked  # the claims this attempt's verification already checked
    options = StructureOptions(verify=state.limits.verify, retry=state.limits)
    if state.cancel.cancelled:  # a cancelled run stops now: the parser only, no model call
        structurer = None
    for model in dict.fromkeys([structurer, None]):
        try:
            diagnosis = structure(markdown, state.root, index=state.index, model=model, sandbox=state.sandbox,
                                  options=options, checked=checked)  # fmt: skip
            # structure() may fall back to the parser itself; record what really ran.
            return diagnosis, diagnosis.stats.structurer or model or "parser"
        except Exception:
            _log.warning("structuring with %s failed", model or "the parser", exc_info=True)
    return None, "parser"


def _partial(state: RunState, stop: StopRun | None) -> Diagnosis:
    """What was found before the run stopped: suspects named and code read; no made-up conclusion."""
    why = f"{stop.reason.value}: {stop.detail}" if stop else "no report was written"
    found = []
    if state.suspects:
        found.append("suspects named: " + ", ".join(state.suspects))
    if state.reads:
        found.append("code read: " + ", ".join(f"{p}:{a}-{b}" for p, a, b in state.reads[:10]))
    summary = f"The investigation stopped before a report ({why})."
    if found:
        summary += " Found so far: " + "; ".join(found) + "."
    suspect_paths = {s.split(":", 1)[0] for s in state.suspects}
    affected = []
    for path, start, end in state.reads:
        if path in suspect_paths and not any(a.path == path for a in affected):
            affected.append(AffectedFile(path=path, line_start=max(1, start), line_end=max(1, start, end), role=Role.related))
    return Diagnosis(summary=summary, affected_files=affected, confidence=0.0, open_questions=list(state.questions))


def fallback_reason(stop: StopRun | None, may_fall_back: bool, cancel: CancelToken) -> str | None:
    """Why the offline investigator should redo the run (the model endpoint failed, or the model never gave a usable
    answer), or None."""
    if not may_fall_back or cancel.cancelled:
        return None
    if isinstance(stop, (ModelUnavailable, ModelUnusable)):
        return stop.detail or "the model endpoint failed"
    return None


def short(text: str, limit: int = 160) -> str:
    """The text on one line, cut to `limit` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def mark_fallback(diagnosis: Diagnosis, first: RunState, model: str, reason: str, explorer: str) -> None:
    """Say in the diagnosis that the offline investigator produced it, and count what the model run used."""
    note = f"offline fallback: the model explorer {model} failed ({short(reason)})"
    term = diagnosis.termination
    term.detail = f"{note}; {term.detail}" if term.detail else note
    diagnosis.summary = f"[Offline fallback: {model} failed.] {diagnosis.summary}".strip()
    stats = diagnosis.stats
    stats.explorer = explorer
    for phase, used in first.meter.per_phase.items():
        mine = stats.per_phase.setdefault(phase, PhaseStats())
        for f in ("tool_calls", "input_tokens", "output_tokens", "cached_tokens", "requests"):
            setattr(mine, f, getattr(mine, f) + getattr(used, f))
    stats.tool_calls += first.meter.tool_calls
    stats.input_tokens += first.meter.input_tokens
    stats.output_tokens += first.meter.output_tokens
    if first.meter.cost_usd is not None:
        stats.cost_usd = (stats.cost_usd or 0.0) + first.meter.cost_usd

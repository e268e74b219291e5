"""The invariants every conformance run must keep (issue 17), whatever the model did."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from funnel import PHASE_ORDER
from schemas.enums import Phase
from schemas.trace import PhaseChangeEvent, StartEvent, TraceEvent
from tests.funnel.conformance._server import Protocol
from tests.funnel.conformance._run import Outcome, run_scenario
from tests.funnel.conformance.scenarios import Scenario
from tests.funnel.harness_support import FIXTURE_REPO

_ATTEMPT = re.compile(r"Attempt (\d+): the verifier")


async def run_checked(scenario: Scenario, protocol: Protocol, extra: dict[str, Callable[[Outcome], None]]) -> Outcome:
    """Run a scenario, check every invariant, then the scenario's own assertion in `extra` (by name) if any."""
    out = await run_scenario(scenario, protocol)
    check_all(out)
    if more := extra.get(scenario.name):
        more(out)
    return out


def check_all(out: Outcome) -> None:
    """Every invariant, with a message naming the scenario."""
    check_termination(out)
    check_no_hallucination(out.result.diagnosis, FIXTURE_REPO)
    check_tools_only_narrow(out)
    check_causal_trace(out.result.events)
    check_http_bound(out)


def check_termination(out: Outcome) -> None:
    term = out.result.diagnosis.termination
    assert term.reason in out.scenario.expect, f"{out.scenario.name}/{out.protocol}: ended {term.reason}: {term.detail}"
    if term.reason != "done":
        assert term.detail, "a termination other than done says why"
    assert out.seconds < out.limits.timeout_s, f"the run took {out.seconds:.1f} s"


def _squeeze(text: str) -> str:
    return "".join(text.split())


def check_no_hallucination(diagnosis, root: Path) -> None:
    """Every path, line range and quote the diagnosis accepts exists in the tree."""
    for f in diagnosis.affected_files:
        target = root / f.path
        assert target.is_file() and target.resolve().is_relative_to(root.resolve()), f"accepted a missing path {f.path}"
        lines = target.read_text().splitlines()
        assert 1 <= f.line_start <= f.line_end <= len(lines), f"accepted {f.path}:{f.line_start}-{f.line_end}"
        if f.evidence.strip():
            quoted = _squeeze(f.evidence) in _squeeze("\n".join(lines))
            assert quoted, f"accepted a quote not in {f.path}: {f.evidence!r}"
    for c in diagnosis.proposed_changes:
        assert (root / c.path).is_file(), f"accepted a change to a missing path {c.path}"


def check_tools_only_narrow(out: Outcome) -> None:
    """Within one attempt the phases offered never go back; from attempt 2 on, explore is never offered again."""
    last_attempt, last_phase = 1, 0
    for seen in out.requests:
        if seen.role != "explorer":
            continue
        attempt = max([int(n) for n in _ATTEMPT.findall(seen.text)] or [1])
        phase = PHASE_ORDER.index(Phase(seen.phase))
        if attempt > last_attempt:
            last_attempt, last_phase = attempt, phase
            assert seen.phase != Phase.explore, "a retry re-opened explore"
            continue
        widened = f"offered tools widened from {PHASE_ORDER[last_phase]} to {seen.phase}: {seen.tools}"
        assert phase >= last_phase, widened
        last_phase = phase


def check_causal_trace(events: list[TraceEvent]) -> None:
    """Events come in causal order, each labelled with the phase it ran in: a phase change follows the event that
    caused it, and every other event carries the phase current when it happened."""
    current, attempt, iteration = Phase.explore, 1, 0
    for i, e in enumerate(events):
        where = f"event {i} ({e.kind} {getattr(e, 'tool', '')})"
        if isinstance(e, StartEvent):
            current, attempt, iteration = Phase.explore, 1, 0
        assert e.attempt >= attempt and (e.attempt > attempt or e.iteration >= iteration), f"{where} out of order"
        attempt, iteration = e.attempt, e.iteration
        if isinstance(e, PhaseChangeEvent):
            assert e.from_phase == current, f"{where}: from {e.from_phase}, but the run was in {current}"
            assert e.phase == e.to_phase
            current = e.to_phase
        else:
            assert e.phase == current, f"{where} labelled {e.phase}, but the run was in {current}"


def check_http_bound(out: Outcome) -> None:
    """Each model request is at most 1 + model_retries HTTP attempts (the SDK's own retries are off)."""
    limits = out.limits
    explorer = sum(1 for r in out.requests if r.role == "explorer")
    assert explorer <= (limits.max_iterations + 1) * (limits.model_retries + 1), f"{explorer} explorer HTTP requests"

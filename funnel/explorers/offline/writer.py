"""The offline investigator's report: the shared markdown template, filled from the ranking and the lines read.

Every claim is grounded: snippets are quoted from `read_range` output (or, for files not read, from the
definition line itself), locations are `path:start-end` of real definitions, and the confidence comes
from the ranking's score margin. With weak evidence the report says so and asks questions instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from funnel.inline import code_span, paired_ticks
from funnel.localize.calibration import calibrated, prime_language
from funnel.localize.evidence import Read
from funnel.localize.candidates import Candidate, CandidateRanking, CandidateSymbol, report_title
from funnel.localize.citations import citation_order
from funnel.explorers.offline.changes import proposed_change
from funnel.explorers.offline.feature import (place_addition, request_opening, request_place, request_summary,
                                             with_precedent)
from funnel.explorers.offline.lines import best_line, narrow_prime, pointer, shows_code
from funnel.explorers.offline.questions import open_questions
from funnel.localize.reasoning import Finding
from funnel.localize.names import report_names
from funnel.localize.requested import Addition
from funnel.localize.signals import moved_frame_reason
from funnel.report.template import DraftAffectedFile, DraftChange, DraftRating, DraftRootCause, ReportDraft, render_report
from repomap.encoding import line_count
from repomap.focus import Focus
from repomap.frames import Frame
from schemas.enums import Classification, Complexity, Risk, Role

__all__ = ("WriterConfig", "Citation", "plan_citations", "write_report")


@dataclass(frozen=True)
class WriterConfig:
    """How much the report cites."""

    files: int = 5
    """Distinct files cited (the eval scores the first five)."""
    prime_symbols: int = 4
    """Definitions cited in the prime suspect (the rest get one each); the eval scores the first five symbols."""
    max_cited_lines: int = 60
    """Longest line range cited for one definition (long ones are cut around the evidence)."""
    snippet_lines: int = 6
    """Most lines quoted per citation."""
    low_confidence: float = 0.5
    """Below this confidence (calibrated: the probability that the prime suspect file is right) the report says the
    evidence is weak and asks questions; at or above it, it names the likely cause: the words agree with the
    number the diagnosis shows."""
    first_range_lines: int = 15
    """Widest first citation: the prime suspect's range is cut to this many lines around the line the reasoning
    selected (0 keeps whole definitions)."""
    evidence_window: bool = True
    """Place that narrow range, among those holding the selected line, where the definition's evidence (lines
    sharing the report's terms, further findings) sums highest; off: a third of it before the line, the rest after."""
    extra_ranges: int = 2
    """Further narrow ranges cited at the reasoning's next findings in the prime suspect (after every file)."""
    stay_in_first: float = 0.6
    """A behaviour finding in the first cited definition is preferred to a better one in another definition when
    it scores at least this share of it (error shapes move the citation freely)."""
    pad_first_range: bool = True
    """A first range narrower than `first_range_lines` (a short definition) is widened to that many lines of the
    file around it, a third before: the class attributes, decorators and neighbouring code a two-line method is
    read with, still one narrow range."""
    cite_rest: bool = True
    """Also cite, after every file, the parts of the prime definition around the narrow first range (at most
    `max_cited_lines` in all), so narrowing the first range does not stop citing the definition."""


@dataclass
class Citation:
    """One affected-file entry before it is written."""

    path: str
    """File."""
    start: int
    """First cited line."""
    end: int
    """Last cited line."""
    symbol: str | None
    """Qualified name of the definition, if any."""
    role: Role
    """Cause for the prime suspect, related for the others."""
    focus_lines: list[int] = field(default_factory=list)
    """Lines the evidence points at (frames, messages), quoted first."""
    span: tuple[int, int] | None = None
    """The whole definition cited (the range may be cut inside it)."""
    finding: Finding | None = None
    """What the reasoning layer found at this citation's line, if anything."""
    adds: str | None = None
    """The name a feature request asks for, when this citation is the place it would be added
    (`feature.place_addition`: the last lines of the member it resembles and the room after it)."""


def _span_for(hit: CandidateSymbol | None, cand: Candidate, total_lines: int, config: WriterConfig) -> tuple[int, int]:
    if hit is None:
        line = cand.lines[0] if cand.lines else 1
        return max(1, line - 5), min(max(total_lines, 1), line + 15)
    start, end = hit.span.start_line, hit.span.end_line
    if end - start + 1 > config.max_cited_lines:
        anchor = next((ln for ln in cand.lines if start <= ln <= end), None)
        if anchor is None:
            end = start + config.max_cited_lines - 1
        else:
            start = max(start, anchor - config.max_cited_lines // 2)
            end = min(hit.span.end_line, start + config.max_cited_lines - 1)
    return start, max(start, end)


def plan_citations(ranking: CandidateRanking, texts: dict[str, str], config: WriterConfig | None = None, *,
                   report: str | None = None, focus: Focus | None = None,
                   addition: Addition | None = None) -> list[Citation]:
    """The ranked locations to cite, in `rank.citation_order` (by default the prime suspect's best definitions, then
    the best one of each next file); with the `report`, the prime suspect's first range is narrowed to the line
    the reasoning layer selects (`narrow_prime`); with an `addition` a feature request asks for, the place it would
    go in the prime suspect comes first (`feature.place_addition`)."""
    config = config or WriterConfig()
    out: list[Citation] = []
    for n, (cand, hit) in enumerate(citation_order(ranking, files=config.files, prime_symbols=config.prime_symbols)):
        total = line_count(texts.get(cand.path, ""))
        start, end = _span_for(hit, cand, total, config)
        out.append(
            Citation(
                path=cand.path,
                start=start,
                end=end,
                symbol=hit.span.qualname if hit is not None else None,
                role=Role.cause if n == 0 else Role.related,
                span=(hit.span.start_line, hit.span.end_line) if hit is not None else None,
                focus_lines=[ln for ln in cand.lines if start <= ln <= end],
            )
        )
    if report is not None and out:
        out = narrow_prime(out, report, focus or Focus.from_text(report), ranking.query_terms, texts, config)
    return place_addition(out, addition, texts, config.first_range_lines)


def _quote(cite: Citation, reads: list[Read], texts: dict[str, str], config: WriterConfig,
           query: dict[str, float] | None = None) -> tuple[str, int | None]:
    """Lines quoted verbatim for a citation (from what was read when possible) and the first quoted line number.

    A citation without focus lines gets one here: its line sharing the most terms with the report (`query`)."""
    shown: dict[int, str] = {}
    for r in reads:
        if r.path == cite.path:
            shown.update(r.lines)
    if cite.path in texts and any(ln not in shown for ln in range(cite.start, cite.end + 1)):
        all_lines = texts[cite.path].split("\n")  # the file's own text where no read showed these lines
        for i in range(cite.start - 1, min(cite.end, len(all_lines))):
            shown.setdefault(i + 1, all_lines[i])
    if not cite.focus_lines and query:
        picked_line = best_line(shown, cite.start, cite.end, query, cite.symbol)
        if picked_line is not None:
            cite.focus_lines = [picked_line]
    anchor = cite.focus_lines[0] if cite.focus_lines else cite.start
    if cite.focus_lines:
        first = max(cite.start, anchor - 2)
    else:
        first = cite.start
    picked = []
    for ln in range(first, cite.end + 1):
        if ln not in shown:
            if picked:
                break
            continue
        picked.append((ln, shown[ln]))
        if len(picked) >= config.snippet_lines:
            break
    while picked and not picked[-1][1].strip():
        picked.pop()
    if not picked:
        return "", None
    return "\n".join(t for _, t in picked), picked[0][0]


def write_report(
    report_text: str,
    focus: Focus,
    ranking: CandidateRanking,
    reads: list[Read],
    texts: dict[str, str],
    *,
    searched: dict[str, list[tuple[str, int]]] | None = None,
    config: WriterConfig | None = None,
    kind: Classification = Classification.bug,
    addition: Addition | None = None,
) -> str:
    """The markdown report for a ranking and the lines read, in the shared template; a feature request's (`kind`)
    says what it asks for and proposes the addition (`addition`: the definition it asks for and its place)."""
    config = config or WriterConfig()
    searched = searched or {}
    feature = kind == Classification.feature_request
    cites = plan_citations(ranking, texts, config, report=report_text, focus=focus, addition=addition if feature else None)
    confidence = ranking.confidence
    title = report_title(report_text).strip()[:160]
    if not cites:
        draft = ReportDraft(
            summary=f"No code in the repository could be tied to the report “{paired_ticks(title)}”.",
            root_cause=DraftRootCause(explanation="Not determined: nothing in the report matched the repository."),
            confidence=0.05,
            open_questions=open_questions(report_text, focus, kind, none_found=True),
        )
        return render_report(draft)

    affected: list[DraftAffectedFile] = []
    quotes: dict[int, tuple[str, int | None]] = {}
    for n, cite in enumerate(cites):
        snippet, first = _quote(cite, reads, texts, config, ranking.query_terms)
        quotes[n] = (snippet, first)
        affected.append(
            DraftAffectedFile(path=cite.path, line_start=cite.start, line_end=cite.end, symbol=cite.symbol,
                              role=cite.role, evidence=snippet)  # fmt: skip
        )
    prime, top = cites[0], ranking.candidates[0]
    where = f"{code_span(prime.symbol)} in `{prime.path}`" if prime.symbol else f"`{prime.path}`"
    if feature:
        where = request_place(addition, prime) or where
    probability = calibrated(confidence, prime_language(prime.path), ranking.confidence_features)
    weak = probability < config.low_confidence
    summary = (
        request_summary(title, where, weak) if feature
        else f"The behaviour reported in “{paired_ticks(title)}” most likely comes from {where}."
        if not weak
        else f"Weak evidence only: “{paired_ticks(title)}” may involve {where}, but the report gives little to go on."
    )
    found = prime.finding
    explanation_parts = _explanation(prime, top, focus, texts, report_text, weak=weak, found=found,
                                     opening=request_opening(addition, prime) if feature else "",
                                     lead=prime.adds is None)
    evidence = _evidence(cites, quotes, searched)
    if feature:
        evidence = with_precedent(evidence, addition, texts)
    description = proposed_change(prime, found, focus, texts.get(prime.path, ""), title=title,
                                  addition=addition if feature else None, feature=feature)
    changes = [DraftChange(path=prime.path, symbol=prime.symbol, description=description)]
    complexity, risk = _ratings(prime)
    draft = ReportDraft(
        summary=summary,
        root_cause=DraftRootCause(explanation=" ".join(explanation_parts), evidence=evidence),
        affected_files=affected,
        proposed_changes=changes,
        complexity=complexity,
        risk=risk,
        confidence=probability,
        open_questions=open_questions(report_text, focus, kind) if weak else [],
    )
    return render_report(draft)


def _ratings(prime: Citation) -> tuple[DraftRating, DraftRating]:
    """Complexity and risk of the proposed change: one definition to add beside its neighbours (a feature request's
    placed addition) is small and low-risk; a change inside a definition is rated by the definition's length."""
    if prime.adds:
        return (DraftRating(level=str(Complexity.small), reason="one definition to add beside its neighbours"),
                DraftRating(level=str(Risk.low), reason="a definition added beside the others leaves their behaviour as it is"))
    small = prime.end - prime.start + 1 <= 60
    return (DraftRating(level=str(Complexity.small if small else Complexity.medium),
                        reason="the change is expected inside one definition" if small else "the suspect definition is long"),
            DraftRating(level=str(Risk.medium), reason="not assessed beyond the suspect definition; callers may rely on the current behaviour"))


def _explanation(prime: Citation, top: Candidate, focus: Focus, texts: dict[str, str], report: str, *, weak: bool,
                 found: Finding | None, opening: str = "", lead: bool = True) -> list[str]:
    """The root cause's sentences: the mechanism a reasoning rule found at the cited line (or, when none fired, the
    lead and a plain word that none did), the evidence tying it to the report, and a caveat when weak. A feature
    request's `opening` comes first; without the `lead` (the opening places an addition) no sentence describes the
    cited lines as a match."""
    reasons = list(top.reasons)
    for hit in top.symbols[:1]:
        reasons.extend(r for r in hit.reasons if r not in reasons and r != "named in the report")
    if found is not None:
        explanation_parts = [_reasoned(found, prime, request=bool(opening))]
    elif not lead:
        explanation_parts = []
    else:
        lead, lexical = _lead(prime, top, focus, texts, report)
        explanation_parts = [lead, "No rule of the reasoning layer (error shapes, named options or values) matched "
                                   "inside the suspect definitions"
                             + (", so the cited line is only the best lexical match." if lexical else ".")]
    if reasons:
        explanation_parts.append("Evidence tying it to the report: " + "; ".join(reasons[:4]) + ".")
    else:
        explanation_parts.append("It is tied to the report only by shared vocabulary (no stack trace, message or named "
                                 "definition points here).")  # fmt: skip
    if weak:
        explanation_parts.append("This is a lead to check, not an established cause.")
    return [opening, *explanation_parts] if opening else explanation_parts


def _nearest_code(shown: list[str], first: int, at: int) -> tuple[int, str] | None:
    """The quoted line `at` (the quote's lines numbered from `first`), or where it is blank or only closes brackets
    (a link to a line that moved, a frame on a block's `}`), the nearest quoted line holding more, after it first;
    None when no quoted line does."""
    order = sorted(range(first, first + len(shown)), key=lambda ln: (abs(ln - at), ln < at))
    for ln in order:
        if shows_code(shown[ln - first]):
            return ln, shown[ln - first].strip()
    return None


def _evidence(cites: list[Citation], quotes: dict[int, tuple[str, int | None]],
              searched: dict[str, list[tuple[str, int]]]) -> list[str]:
    """The root cause's evidence bullets: the quoted lines of the first citations, then what the searches found."""
    evidence = []
    for n, cite in enumerate(cites[:4]):
        s, f = quotes[n]
        if s and f is not None:
            shown = s.split("\n")
            at = next((ln for ln in cite.focus_lines if f <= ln < f + len(shown)), f)
            found = _nearest_code(shown, f, at)
            if found is None:
                continue
            at, line = found
            entry = f"`{cite.path}:{at}`" + (f" in {code_span(cite.symbol)}" if cite.symbol else "") + f": {code_span(line[:100])}"
            if entry not in evidence:  # two citations of one definition can focus on the same line
                evidence.append(entry)
    for pattern, hits in list(searched.items())[:2]:
        if hits:
            files = sorted({p for p, _ in hits})
            evidence.append(f"Searching for “{paired_ticks(pattern[:60])}” matched {len(hits)} line(s) in {', '.join(f'`{p}`' for p in files[:3])}.")
        else:
            evidence.append(f"Searching for “{paired_ticks(pattern[:60])}” found no match in the repository.")
    return evidence


def _reasoned(found: Finding, prime: Citation, *, request: bool = False) -> str:
    """The first sentence of the root cause when a rule fired: the mechanism at the selected line (for a feature
    request, `request`, where the requested behaviour would be decided, not a fault)."""
    if request and not found.error:
        mechanism = found.mechanism.replace("the reported behaviour is decided here",
                                            "the requested behaviour would be decided here")
        return f"The requested behaviour touches `{prime.symbol or prime.path}` (`{prime.path}:{found.line}`): {mechanism}."
    what = f"The report's `{found.error}`" if found.error else "The reported behaviour"
    return (f"{what} points at `{prime.symbol or prime.path}` (`{prime.path}:{found.line}`): "
            f"{found.mechanism}.")


def _moved_frame(focus: Focus, prime: Citation, top: Candidate) -> Frame | None:
    """The stack frame the ranking moved onto the prime suspect's definition, its printed line lying outside it
    (`signals.frame_line`), as the definition's reasons record it; None when none was."""
    reasons = next((s.reasons for s in top.symbols if top.path == prime.path and s.span.qualname == prime.symbol), [])
    return next((f for f in focus.frames if f.line and moved_frame_reason(f) in reasons), None)


def _lead(prime: Citation, top: Candidate, focus: Focus, texts: dict[str, str], report: str) -> tuple[str, bool]:
    """The first sentence of the root cause (what the strongest evidence says about the prime suspect), and whether
    its line was chosen for the words it shares with the report alone (no frame, message, link or quote)."""
    where = f"{code_span(prime.symbol)} (`{prime.path}:{prime.start}-{prime.end}`)" if prime.symbol else f"`{prime.path}`"
    lines = texts.get(prime.path, "").split("\n")
    anchor = prime.focus_lines[0] if prime.focus_lines else None
    code = lines[anchor - 1].strip() if anchor and 0 < anchor <= len(lines) else ""
    error = f"{focus.errors[0]}: {focus.messages[0]}" if focus.errors and focus.messages else (
        focus.messages[0] if focus.messages else (focus.errors[0] if focus.errors else ""))
    if top.parts.get("frame") and code and (moved := _moved_frame(focus, prime, top)):
        text = (f"The reported stack trace passes through {where}, though the line it printed, {moved.line}, lies "
                f"outside {code_span(prime.symbol)} at this commit (the trace came from another version of the file)")
        return text + (f"; the failure “{paired_ticks(error[:160])}” is raised there." if error else "."), False
    if top.parts.get("frame") and code:
        text = f"The reported stack trace passes through {where}; at line {anchor} it runs {code_span(code[:120])}"
        return text + (f", where the failure “{paired_ticks(error[:160])}” is raised." if error else "."), False
    held = top.quoted_line if top.path == prime.path and 0 < (top.quoted_line or 0) <= len(lines) else None
    if held is not None and prime.start <= held <= prime.end:
        # the quoted text may be an error message or a fragment of the report's own code
        return f"{where} holds text the report quotes: line {held} reads {code_span(lines[held - 1].strip()[:160])}.", False
    pointed = pointer(focus, prime.path, anchor, code, report) if code and anchor else None
    how = {"link": "is the line the report links to", "patch": "is a line the report's patch changes",
           "quote": "is the line the report quotes"}.get(
        pointed or "", "shares the most terms with the report")
    read = f" Line {anchor} there {how}: {code_span(code[:160])}." if code else ""
    if held is not None:  # outside the cited definition (a class attribute beside the member cited)
        read += f" Line {held} of the file holds text the report quotes: {code_span(lines[held - 1].strip()[:160])}."
    named = report_names(prime.symbol, focus) if prime.symbol and top.parts.get("mention") else None
    if named and named == prime.symbol:
        text = f"The report names {where}, the best match for the described behaviour among the definitions it mentions."
    elif named:
        text = f"The report names `{named}`; its member {where} best matches the described behaviour."
    elif top.parts.get("path"):
        text = f"The report mentions `{prime.path}`, and {where} is its definition that best matches the description."
    else:
        text = f"{where} is the definition whose code and names best match the report's description."
    return text + read, pointed is None

"""Validation of a report against the repository: every cited path, line range, snippet and symbol is checked.

Shared by the harness attempt loop (`verify_report`: findings phrased as instructions for the next attempt)
and by structuring (`check_claims`: the kept, corrected and rejected claims that become a `Diagnosis`).
A claim is corrected only when its quoted snippet proves where it really is; otherwise it is dropped and
the reason kept.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from funnel.errors import ToolError
from funnel.limits import VerifyLimits
from funnel.report.mentions import ProseCheck
from funnel.report.parse import parse_report
from funnel.report.repo_files import RepoFiles, nearest
from funnel.report.sketches import sketch_misfit
from funnel.report.snippets import find_snippet, snippet_weight
from funnel.report.template import DraftAffectedFile, DraftChange, ReportDraft, format_location
from funnel.tools.sandbox import Sandbox
from schemas.diagnosis import AffectedFile, ProposedChange, RejectedClaim

__all__ = (
    "CheckedClaims",
    "SymbolLookup",
    "VerifyLimits",
    "VerifyResult",
    "check_claims",
    "find_snippet",
    "verify_draft",
    "verify_report",
)


class SymbolLookup(Protocol):
    """What verification needs from `repomap.SymbolIndex`."""

    def lookup(self, name: str, *, fuzzy: bool = True, limit: int = 20) -> list[Any]:
        """Definitions (with `name`, `qualname`, `path`, `start_line`, `end_line`) matching a name."""
        ...

    def enclosing(self, path: str, line: int) -> Any | None:
        """The innermost definition around a line, if any."""
        ...


@dataclass
class CheckedClaims:
    """The outcome of checking a draft's claims against the repository."""

    affected_files: list[AffectedFile] = field(default_factory=list)
    """Kept locations, in the draft's rank order, some corrected."""
    proposed_changes: list[ProposedChange] = field(default_factory=list)
    """Kept proposed changes."""
    rejected: list[RejectedClaim] = field(default_factory=list)
    """Dropped claims with why."""
    corrections: list[str] = field(default_factory=list)
    """What was fixed in kept claims, one sentence each."""
    notes: list[str] = field(default_factory=list)
    """Non-blocking remarks (missing snippets, unknown symbols dropped)."""
    claims_total: int = 0
    """Claims examined (affected files, proposed changes, their diff sketches, locations the prose cites)."""
    claims_corrected: int = 0
    """Kept claims whose path, lines or symbol were fixed."""
    summary: str | None = None
    """The summary after its citations were checked (`funnel.report.mentions`); None: unchecked."""
    explanation: str | None = None
    """The root cause's explanation after its citations were checked; None: unchecked."""
    evidence: list[str] | None = None
    """The root cause's evidence bullets whose citations hold; None: unchecked."""

    @property
    def claims_rejected(self) -> int:
        """Claims dropped."""
        return len(self.rejected)


@dataclass
class VerifyResult:
    """The verdict on one report: `ok` when nothing blocks it; findings are instructions for the next attempt."""

    ok: bool
    """True when the report may be accepted as is (corrections allowed)."""
    findings: list[str] = field(default_factory=list)
    """Blocking problems, each phrased as what to do next."""
    notes: list[str] = field(default_factory=list)
    """Non-blocking remarks and corrections made."""
    checked: CheckedClaims | None = None
    """The claim-by-claim outcome, for structuring."""


def _overlaps(a: tuple[int, int], b: tuple[int, int], slack: int) -> bool:
    return a[0] - slack <= b[1] and b[0] <= a[1] + slack


def _names(symbol: str) -> tuple[str, str]:
    s = re.sub(r"\(.*\)$", "", symbol.strip().strip("`")).replace("::", ".").replace("#", ".")
    return s, s.rsplit(".", 1)[-1]


def _def_matches(d: Any, full: str, last: str) -> bool:
    """Whether definition `d` is the cited `full` / `last` (`_names`), its own names read the same way (C++
    `operator()` is `operator`)."""
    qual = _names(str(getattr(d, "qualname", "") or ""))[0]
    name = _names(str(getattr(d, "name", "") or ""))[0]
    return full in (qual, name) or qual.endswith("." + full) or full.endswith("." + qual) or (
        "." not in full and name == last
    )


def _check_symbol(
    repo: RepoFiles, index: SymbolLookup | None, rel: str, span: tuple[int, int], symbol: str | None, notes: list[str]
) -> tuple[str | None, str | None]:
    """(symbol to keep, correction sentence or None)."""
    if not symbol:
        return symbol, None
    full, last = _names(symbol)
    slack = repo.limits.slack_lines
    try:
        indexed = index is not None and bool(getattr(index, "definitions", lambda _p: [None])(rel))
    except Exception:  # noqa: BLE001 - a broken index must not lose the claim
        indexed = False
    if index is None or not indexed:  # no index, or a file it does not cover (another language, no definitions)
        text = repo.lines(rel)
        if text is not None and not any(last in line for line in text):
            notes.append(f"`{symbol}` does not appear in {rel}; the symbol was dropped")
            return None, f"dropped symbol `{symbol}`: it does not appear in {rel}"
        return symbol, None
    try:
        defs = [d for d in index.lookup(full, fuzzy=False, limit=50) if getattr(d, "path", None) == rel]
        if not defs and full != last:
            defs = [d for d in index.lookup(last, fuzzy=False, limit=50) if getattr(d, "path", None) == rel]
        defs = [d for d in defs if _def_matches(d, full, last)]
        if any(_overlaps((d.start_line, d.end_line), span, slack) for d in defs):
            return symbol, None
        around = None  # the definition holding the range's first line inside one
        for line in range(span[0], min(span[1], span[0] + 50) + 1):
            found = index.enclosing(rel, line)
            if found is None:
                continue
            if _def_matches(found, full, last):  # the cited definition itself, in a range opening above it
                return str(getattr(found, "qualname", "") or symbol), None
            around = around or found
    except Exception:  # noqa: BLE001 - a broken index must not lose the claim
        return symbol, None
    where = f"{rel}:{span[0]}" if span[0] == span[1] else f"{rel}:{span[0]}-{span[1]}"
    if around is not None:
        fixed = str(getattr(around, "qualname", None) or getattr(around, "name", ""))
        return fixed, f"`{symbol}` is not at {where}; the enclosing definition there is `{fixed}`"
    return None, f"`{symbol}` is not at {where} (module-level code); the symbol was dropped"


def _one_line(problem: str | None) -> str:
    """A sandbox message (which may list nearest paths on following lines) as one sentence without a final stop."""
    lines = [ln.strip() for ln in (problem or "").splitlines() if ln.strip()]
    if not lines:
        return "the path could not be read"
    head = lines[0].rstrip(".:")
    return f"{head}: {', '.join(lines[1:])}" if len(lines) > 1 else head


def _reject(out: CheckedClaims, kind: str, claim: DraftAffectedFile | DraftChange, reason: str) -> None:
    out.rejected.append(RejectedClaim(kind=kind, claim=claim.model_dump(mode="json"), reason=reason))  # type: ignore[arg-type]


def _check_location(repo: RepoFiles, index: SymbolLookup | None, item: DraftAffectedFile, out: CheckedClaims) -> None:
    lim = repo.limits
    cited = format_location(item.path, item.line_start, item.line_end)
    spelled = repo.spell(item.path)
    rel, problem = repo.resolve(spelled) if spelled else (None, "no path was given")
    snippet = item.evidence if item.evidence.strip() else ""
    start, end = item.line_start, item.line_end if item.line_end is not None else item.line_start
    if start is not None and end is not None and end < start:
        start, end = end, start
    if start is not None and start < 1:
        start, end = 1, max(1, end or 1)
    correction: str | None = None

    if rel is not None:
        text = repo.lines(rel)
        n = len(text) if text is not None else None
        if n == 0:  # an empty file can still be where the fix goes (a missing export, say)
            if snippet:
                return _reject(out, "affected_file", item, f"{rel} is empty, so the quoted snippet is not in it")
            out.notes.append(f"{cited}: {rel} is empty")
            start, end, text, n = 1, 1, None, None
        spans = find_snippet(text, snippet) if snippet and text is not None else []
        if spans:
            best = nearest(spans, start)
            if start is None or end is None:
                start, end = best
            elif not _overlaps((start, end), best, lim.slack_lines):
                correction = f"{cited} moved to {rel}:{best[0]}-{best[1]}, where the quoted snippet is"
                start, end = best
        elif snippet and text is not None:
            moved = [m for m in repo.locate(snippet, rel, start) if m[0] != rel]
            if len(moved) == 1 and snippet_weight(snippet) >= lim.min_relocate_chars:
                rel, start, end = moved[0]
                correction = f"{cited} moved to {rel}:{start}-{end}: the quoted snippet is there, not in {item.path}"
            else:
                where = f" (it occurs in {', '.join(m[0] for m in moved[:5])})" if moved else ""
                return _reject(out, "affected_file", item, f"the quoted snippet does not occur in {rel}{where}")
        else:
            if not snippet:
                out.notes.append(f"{cited} has no quoted snippet, so its lines could not be confirmed")
            if start is None:
                start, end = 1, n or 1
                correction = f"{cited} cites no lines; the whole file was kept"
            elif n is not None and start > n:
                return _reject(out, "affected_file", item, f"{rel} has only {n} lines, so the cited range starts past the end")
    else:
        relocatable = (problem or "").startswith("Not found") or "is an absolute path" in (problem or "")
        moved = repo.locate(snippet, spelled or "?", start) if snippet and relocatable else []
        if len(moved) == 1 and snippet_weight(snippet) >= lim.min_relocate_chars:
            rel, start, end = moved[0]
            correction = f"{cited} does not exist; moved to {rel}:{start}-{end}, where the quoted snippet is"
        else:
            where = f"; the quoted snippet occurs in {', '.join(m[0] for m in moved[:5])}" if moved else ""
            return _reject(out, "affected_file", item, f"{_one_line(problem)}{where}")

    assert start is not None and end is not None and rel is not None
    total = len(repo.lines(rel) or [])
    if total and end > total:
        if correction is None:
            correction = f"{cited} ends past the end of the file; cut to line {total}"
        end = total
    for kept in out.affected_files:
        if kept.path == rel and _overlaps((kept.line_start, kept.line_end), (start, end), 0):
            out.notes.append(f"{cited} repeats {format_location(kept.path, kept.line_start, kept.line_end)}")
            return None
    symbol, sym_fix = _check_symbol(repo, index, rel, (start, end), item.symbol, out.notes)
    if correction or sym_fix:
        out.corrections.extend(c for c in (correction, sym_fix) if c)
        out.claims_corrected += 1
    out.affected_files.append(
        AffectedFile(path=rel, line_start=start, line_end=max(start, end), symbol=symbol, role=item.role,
                     evidence=item.evidence.strip("\n"))
    )  # fmt: skip
    return None


def _check_change(repo: RepoFiles, change: DraftChange, out: CheckedClaims) -> None:
    if not change.description.strip():
        return _reject(out, "proposed_change", change, "no description was given")
    spelled = repo.spell(change.path)
    if not spelled:
        return _reject(out, "proposed_change", change, "no path was given")
    rel, problem = repo.resolve(spelled)
    if rel is None:
        creates = bool(change.diff and re.search(r"^--- /dev/null", change.diff, re.M))
        parent_ok = False
        try:
            normalized = repo.sb.normalize(spelled)
            if creates and "Not found" in (problem or "") and not repo.sb.is_secret(normalized):
                parent = normalized.rsplit("/", 1)[0] if "/" in normalized else "."
                while parent != "." and not (repo.sb.root / parent).exists():
                    parent = parent.rsplit("/", 1)[0] if "/" in parent else "."
                repo.sb.resolve(parent, kind="dir")
                parent_ok = True
        except ToolError:
            parent_ok = False
        if not parent_ok:
            return _reject(out, "proposed_change", change, _one_line(problem))
        rel, diff = normalized, change.diff
    else:
        diff = _fitting_sketch(repo, rel, change.diff, out)
    out.proposed_changes.append(
        ProposedChange(path=rel, symbol=change.symbol, description=change.description.strip(), diff=diff)
    )
    return None


def _fitting_sketch(repo: RepoFiles, rel: str, diff: str | None, out: CheckedClaims) -> str | None:
    """The change's diff sketch when its old lines occur in the file; else None, the sketch kept in `rejected`."""
    lines = repo.lines(rel) if diff else None
    if diff is None or lines is None:
        return diff
    out.claims_total += 1
    if (misfit := sketch_misfit(lines, diff)) is None:
        return diff
    out.rejected.append(RejectedClaim(kind="diff_sketch", claim={"path": rel, "diff": diff}, reason=(
        f"its line `{misfit[:80]}` does not occur in `{rel}`; the change is kept without its sketch")))
    return None


def check_claims(
    draft: ReportDraft,
    root: str | os.PathLike[str],
    index: SymbolLookup | None = None,
    *,
    limits: VerifyLimits | None = None,
    sandbox: Sandbox | None = None,
) -> CheckedClaims:
    """Check every affected file and proposed change of a draft; keep, correct (when a snippet proves it) or reject."""
    repo = RepoFiles(Path(root), limits or VerifyLimits(), sandbox)
    out = CheckedClaims(claims_total=len(draft.affected_files) + len(draft.proposed_changes))
    for item in draft.affected_files:
        try:
            _check_location(repo, index, item, out)
        except Exception as e:  # noqa: BLE001 - one unreadable claim must not lose the others
            _reject(out, "affected_file", item, f"could not be checked ({type(e).__name__}: {e})")
    for change in draft.proposed_changes:
        try:
            _check_change(repo, change, out)
        except Exception as e:  # noqa: BLE001
            _reject(out, "proposed_change", change, f"could not be checked ({type(e).__name__}: {e})")
    try:
        _check_prose(draft, repo, out)
    except Exception as e:  # noqa: BLE001 - the prose is passed on unchecked, and the note says so
        out.notes.append(f"the citations of the prose could not be checked ({type(e).__name__}: {e})")
    return out


def _check_prose(draft: ReportDraft, repo: RepoFiles, out: CheckedClaims) -> None:
    """The citations of the summary, the root cause and the kept changes' descriptions (`funnel.report.mentions`)."""
    prose = ProseCheck(repo, [f.path for f in out.affected_files])
    summary = prose.annotate(draft.summary, "summary")
    explanation = prose.annotate(draft.root_cause.explanation, "explanation")
    evidence = prose.keep(list(draft.root_cause.evidence))
    changes = [c.model_copy(update={"description": prose.annotate(c.description, f"proposed change to `{c.path}`",
                                                                  lines_only=True)})
               for c in out.proposed_changes]
    out.summary, out.explanation, out.evidence, out.proposed_changes = summary, explanation, evidence, changes
    out.rejected.extend(prose.rejected)
    out.claims_total += prose.checked


def verify_draft(
    draft: ReportDraft,
    root: str | os.PathLike[str],
    index: SymbolLookup | None = None,
    *,
    limits: VerifyLimits | None = None,
    sandbox: Sandbox | None = None,
) -> VerifyResult:
    """Judge a parsed report: blocking findings (as instructions for the next attempt) and non-blocking notes."""
    checked = check_claims(draft, root, index, limits=limits, sandbox=sandbox)
    findings: list[str] = []
    for note in draft.notes:
        if note.startswith("missing section"):
            heading = note.split("'")[1].capitalize() if "'" in note else note
            findings.append(f"The report has no `## {heading}` section; write the report in the template.")
    soft: list[str] = []
    for claim in checked.rejected:
        c = claim.claim
        if claim.kind in ("citation", "diff_sketch"):  # the claim stands without it; the diagnosis records it
            cited = format_location(str(c.get("path")), c.get("line_start"), c.get("line_end"))
            what = f"the prose cites `{cited}`" if claim.kind == "citation" else f"a diff sketch for `{cited}`"
            soft.append(f"{what}, which the repository does not bear out: {claim.reason}")
            continue
        if claim.kind == "proposed_change" and not str(c.get("path") or "").strip():
            soft.append(f"a proposed change names no file and was dropped: {str(c.get('description', ''))[:80]!r}")
            continue  # advice without a file is vague, not wrong
        where = format_location(c.get("path", "") or "?", c.get("line_start"), c.get("line_end"))
        what = "affected file" if claim.kind == "affected_file" else "proposed change for"
        findings.append(f"Drop or fix the {what} `{where}`: {claim.reason.rstrip('.')}. {_advice(claim.reason)}".rstrip())
    if not checked.affected_files:
        findings.append(
            "Name at least one suspect under `## Affected files` as `path:start-end` with the quoted lines, "
            "citing only files you have read."
        )
    notes = [*checked.corrections, *checked.notes, *soft]
    notes += [n for n in draft.notes if not n.startswith("missing section")]
    return VerifyResult(ok=not findings, findings=findings, notes=notes, checked=checked)


def _advice(reason: str) -> str:
    if "does not exist" in reason or "Not found" in reason:
        return "Use list_dir or search to find the real path."
    if "snippet does not occur" in reason:
        return "Quote the lines exactly as read_range shows them (without line numbers)."
    if "past the end" in reason:
        return "Re-read the file with read_range and cite lines that exist."
    return ""


def verify_report(
    markdown: str,
    root: str | os.PathLike[str],
    index: SymbolLookup | None = None,
    *,
    limits: VerifyLimits | None = None,
    sandbox: Sandbox | None = None,
) -> VerifyResult:
    """Check a markdown report against the repository: cited paths exist, lines are in range, snippets occur
    where cited, at least one suspect is named. Never raises on a bad report."""
    return verify_draft(parse_report(markdown), root, index, limits=limits, sandbox=sandbox)

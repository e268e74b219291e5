"""Validation of a report against the repository: every cited path, line range, snippet and symbol is checked.

Shared by the harness attempt loop (`verify_report`: findings phrased as instructions for the next attempt)
and by structuring (`check_claims`: the kept, corrected and rejected claims that become a `Diagnosis`).
A claim is corrected only when its quoted snippet proves where it really is; otherwise it is dropped and
the reason kept.
"""

from __future__ import annotations

import difflib
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from funnel.errors import BugsleuthError, ToolError
from funnel.report.template import DraftAffectedFile, DraftChange, ReportDraft, format_location, parse_report
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


@dataclass(frozen=True)
class VerifyLimits:
    """Tolerances and bounds of verification. Plain data."""

    slack_lines: int = 3
    """How far (in lines) a snippet or symbol may sit outside the cited range and still count as there."""
    max_candidates: int = 20
    """Most other files examined when looking for where a misplaced snippet really is."""
    min_relocate_chars: int = 20
    """Shortest snippet (non-blank characters) trusted to move a claim to another file."""
    max_file_bytes: int = 4_000_000
    """Larger files are not read for snippet checks (the claim is kept on path and range alone)."""
    search_timeout_s: float = 5.0
    """Time limit of the ripgrep scan for a misplaced snippet."""


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
    """Claims examined (affected files + proposed changes)."""
    claims_corrected: int = 0
    """Kept claims whose path, lines or symbol were fixed."""

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


# ----------------------------------------------------------------------------------------------- snippets

_ELLIPSIS = re.compile(r"^\s*(?:\.\.\.|…|\[\.\.\.\]|(?:#|//|/\*|--)\s*(?:\.\.\.|…).*)\s*$")
_NUMBERED = re.compile(r"^\s*\d+\s*[|:]\s?")
_SEARCH_PREFIX = re.compile(r"^[^\s:]+[:-]\d+[:-]\s?")
_TRUNCATED = re.compile(r"\.\.\.\[truncated[^\]]*\]$")


def _norm(line: str) -> str:
    return " ".join(line.split())


def _snippet_chunks(snippet: str) -> list[list[str]]:
    """Normalized, non-blank snippet lines split at `...` elisions; read_range line numbers removed."""
    lines = snippet.replace("\r\n", "\n").split("\n")
    filled = [ln for ln in lines if ln.strip()]
    for prefix in (_NUMBERED, _SEARCH_PREFIX):  # copied from read_range or search output
        if filled and all(prefix.match(ln) for ln in filled):
            lines = [prefix.sub("", ln, count=1) for ln in lines]
            break
    chunks: list[list[str]] = [[]]
    for line in lines:
        if _ELLIPSIS.match(line):
            if chunks[-1]:
                chunks.append([])
            continue
        text = _norm(_TRUNCATED.sub("", line))
        if text:
            chunks[-1].append(text)
    return [c for c in chunks if c]


def _line_matches(quoted: str, actual: str) -> bool:
    if quoted == actual:
        return True
    if quoted.endswith("...") and len(quoted) > 8 and actual.startswith(quoted[:-3].rstrip()):
        return True
    return len(quoted) >= 6 and quoted in actual


def _chunk_at(file_lines: list[tuple[int, str]], chunk: list[str], i: int) -> bool:
    if i + len(chunk) > len(file_lines):
        return False
    return all(_line_matches(q, file_lines[i + k][1]) for k, q in enumerate(chunk))


def find_snippet(text_lines: list[str], snippet: str, *, max_gap: int = 400) -> list[tuple[int, int]]:
    """Every (first, last) 1-based line span where the snippet occurs, comparing whitespace-insensitively.

    Blank lines are ignored, `...` lines stand for elided code (the parts must appear in order, at most
    `max_gap` lines apart) and `read_range` line-number prefixes are stripped from the quote.
    """
    chunks = _snippet_chunks(snippet)
    if not chunks:
        return []
    file_lines = [(n, _norm(t)) for n, t in enumerate(text_lines, 1) if t.strip()]
    spans: list[tuple[int, int]] = []
    first = chunks[0]
    for i in range(len(file_lines)):
        if not _chunk_at(file_lines, first, i):
            continue
        end_i: int | None = i + len(first) - 1
        for chunk in chunks[1:]:
            assert end_i is not None
            last_line, found = file_lines[end_i][0], None
            for j in range(end_i + 1, len(file_lines)):
                if file_lines[j][0] - last_line > max_gap:
                    break
                if _chunk_at(file_lines, chunk, j):
                    found = j
                    break
            end_i = None if found is None else found + len(chunk) - 1
            if end_i is None:
                break
        if end_i is not None:
            spans.append((file_lines[i][0], file_lines[end_i][0]))
    return spans


def _snippet_weight(snippet: str) -> int:
    return sum(len(line.replace(" ", "")) for chunk in _snippet_chunks(snippet) for line in chunk)


# ------------------------------------------------------------------------------------------------ checker


class _Repo:
    """File access for one verification: the sandbox's path rules plus a small text cache."""

    def __init__(self, root: Path, limits: VerifyLimits, sandbox: Sandbox | None):
        self.sb = sandbox or _sandbox_for(root)
        self.limits = limits
        self._texts: dict[str, list[str] | None] = {}

    def spell(self, path: str) -> str:
        """A cited path respelled as repository-relative when it is an absolute path inside the root."""
        p = path.strip().strip("`'\"").removeprefix("file://").replace("\\", "/")
        root = self.sb.root.as_posix()
        if p.startswith(root + "/"):
            p = p[len(root) + 1 :]
        return p.removeprefix("./")

    def resolve(self, path: str) -> tuple[str | None, str | None]:
        """(normalized relative path, None) for a readable text file, else (None, why not)."""
        try:
            rel = self.sb.normalize(path)
            if not self.sb.is_secret(rel) and not os.path.lexists(self.sb.root / rel):
                # Checked here rather than by the sandbox, whose suggestions compare against every path.
                return None, f"Not found: {rel!r} does not exist in the repository.{self.suggest(rel)}"
            real = self.sb.resolve(path, kind="file")
        except ToolError as e:
            return None, str(e)
        if self.sb.is_binary(real):
            return None, f"{rel!r} is a binary file; cite source code"
        return rel, None

    def suggest(self, rel: str) -> str:
        """` Nearest existing paths: ...` for a missing path: same file name elsewhere, else similar names nearby."""
        near = self.same_name(rel)[:3]
        if not near:
            parent = rel.rsplit("/", 1)[0] if "/" in rel else "."
            while parent != "." and not (self.sb.root / parent).is_dir():
                parent = parent.rsplit("/", 1)[0] if "/" in parent else "."
            try:
                names = sorted(
                    e.name for e in os.scandir(self.sb.root / parent) if e.is_file() and not self.sb.is_secret(e.name)
                )[:2000]
            except OSError:
                names = []
            prefix = "" if parent == "." else parent + "/"
            near = [prefix + n for n in difflib.get_close_matches(rel.rsplit("/", 1)[-1], names, n=3, cutoff=0.6)]
        return f" Nearest existing paths: {', '.join(near)}." if near else ""

    def lines(self, rel: str) -> list[str] | None:
        """The file's lines, or None when it is too large to check."""
        if rel not in self._texts:
            real = self.sb.root / rel
            try:
                if real.stat().st_size > self.limits.max_file_bytes:
                    self._texts[rel] = None
                else:
                    self._texts[rel] = real.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._texts[rel] = None
        return self._texts[rel]

    def same_name(self, rel: str) -> list[str]:
        """Existing files with the same base name, those whose path ends with the cited path first."""
        name = rel.rsplit("/", 1)[-1]
        try:
            known = self.sb.known_paths()
        except (OSError, BugsleuthError):
            return []
        tail = "/" + rel.strip("/")
        same = [p for p in known if p.rsplit("/", 1)[-1] == name and (self.sb.root / p).is_file()]
        return sorted(same, key=lambda p: (not ("/" + p).endswith(tail), -_common_tail(p, rel), p))

    def grep(self, snippet: str) -> list[str]:
        """Files holding the snippet's longest line (ripgrep, bounded); empty when the search is unavailable."""
        chunks = _snippet_chunks(snippet)
        raw = [ln.strip() for ln in snippet.split("\n") if ln.strip() and not _ELLIPSIS.match(ln)]
        longest = max(raw, key=len, default="")
        if not chunks or len(longest) < 6:
            return []
        from funnel.tools import search

        try:
            found = search(self.sb, longest, fixed_strings=True, max_results=self.limits.max_candidates,
                           max_per_file=1, timeout_s=self.limits.search_timeout_s)  # fmt: skip
        except BugsleuthError:
            return []
        return list(dict.fromkeys(m.path for m in found.matches))

    def locate(self, snippet: str, hint: str, near: int | None = None) -> list[tuple[str, int, int]]:
        """Where else in the repository the snippet occurs: (path, first, last), nearest `near` within each file.

        Candidates are files with the cited base name and files ripgrep finds holding the snippet's longest
        line. When several hold it, those sharing the longest path tail with the citation win (`models/x.py`
        picks `pkg/models/x.py` over `other/x.py`): the citation then names the file, just too briefly.
        """
        limit = self.limits.max_candidates
        named = self.same_name(hint)
        candidates = list(dict.fromkeys([*named[:limit], *self.grep(snippet)]))[: 2 * limit]
        found = []
        for candidate in candidates:
            path, _problem = self.resolve(candidate)  # the same path rules as a cited path (no symlink escapes)
            if path is None:
                continue
            text = self.lines(path)
            if spans := find_snippet(text or [], snippet):
                found.append((path, *_nearest(spans, near)))
        if len(found) > 1:  # keep those sharing the longest path tail with the citation, if any share one
            best = max(_common_tail(f[0], hint) for f in found)
            if best:
                found = [f for f in found if _common_tail(f[0], hint) == best]
        return found


def _common_tail(a: str, b: str) -> int:
    n = 0
    for x, y in zip(reversed(a.split("/")), reversed(b.split("/"))):
        if x != y:
            break
        n += 1
    return n


_SANDBOXES: dict[str, Sandbox] = {}
_SANDBOXES_LOCK = threading.Lock()
_MAX_SANDBOXES = 8


def _sandbox_for(root: Path) -> Sandbox:
    """One sandbox per repository root, so its file listing (used for suggestions) is walked once per tree."""
    key = os.path.realpath(root)
    with _SANDBOXES_LOCK:
        sb = _SANDBOXES.pop(key, None)
    sb = sb or Sandbox(root)
    with _SANDBOXES_LOCK:
        _SANDBOXES[key] = sb
        while len(_SANDBOXES) > _MAX_SANDBOXES:
            _SANDBOXES.pop(next(iter(_SANDBOXES)))
    return sb


def _nearest(spans: list[tuple[int, int]], start: int | None) -> tuple[int, int]:
    if start is None:
        return spans[0]
    return min(spans, key=lambda s: abs(s[0] - start))


def _overlaps(a: tuple[int, int], b: tuple[int, int], slack: int) -> bool:
    return a[0] - slack <= b[1] and b[0] <= a[1] + slack


def _names(symbol: str) -> tuple[str, str]:
    s = re.sub(r"\(.*\)$", "", symbol.strip().strip("`")).replace("::", ".").replace("#", ".")
    return s, s.rsplit(".", 1)[-1]


def _def_matches(d: Any, full: str, last: str) -> bool:
    qual = str(getattr(d, "qualname", "") or "")
    name = str(getattr(d, "name", "") or "")
    return full in (qual, name) or qual.endswith("." + full) or full.endswith("." + qual) or (
        "." not in full and name == last
    )


def _check_symbol(
    repo: _Repo, index: SymbolLookup | None, rel: str, span: tuple[int, int], symbol: str | None, notes: list[str]
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
        around = None
        for line in range(span[0], min(span[1], span[0] + 50) + 1):  # first line inside a definition
            if (around := index.enclosing(rel, line)) is not None:
                break
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


def _check_location(repo: _Repo, index: SymbolLookup | None, item: DraftAffectedFile, out: CheckedClaims) -> None:
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
            best = _nearest(spans, start)
            if start is None or end is None:
                start, end = best
            elif not _overlaps((start, end), best, lim.slack_lines):
                correction = f"{cited} moved to {rel}:{best[0]}-{best[1]}, where the quoted snippet is"
                start, end = best
        elif snippet and text is not None:
            moved = [m for m in repo.locate(snippet, rel, start) if m[0] != rel]
            if len(moved) == 1 and _snippet_weight(snippet) >= lim.min_relocate_chars:
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
        if len(moved) == 1 and _snippet_weight(snippet) >= lim.min_relocate_chars:
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


def _check_change(repo: _Repo, change: DraftChange, out: CheckedClaims) -> None:
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
        rel = normalized
    out.proposed_changes.append(
        ProposedChange(path=rel, symbol=change.symbol, description=change.description.strip(), diff=change.diff)
    )
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
    repo = _Repo(Path(root), limits or VerifyLimits(), sandbox)
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
    return out


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

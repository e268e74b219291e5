"""The lexical pre-pass: the offline ranking run before a model explorer, its candidates shown to the model.

Ranking a tree with `funnel.localize.rank.rank_report` costs about a second of CPU with a warm term cache
and no model call, so a model starts from the files and definitions that match the report best (labelled as
possibly wrong) instead of from nothing. The candidates also refocus the repo map shown in the system prompt.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from funnel.localize.citations import RankedLocations, ranked_locations
from funnel.localize.history import HistorySource
from funnel.localize.rank import CONTEXT_PARTS, rank_report
from repomap import RepoMap
from repomap.focus import Focus
from schemas.trace import PrepassCandidate

__all__ = ("Prepass", "render_candidates", "run_prepass")

_log = logging.getLogger(__name__)

_HEADING = "Candidate locations from a lexical pre-pass (may be wrong)"


@dataclass
class Prepass:
    """What the pre-pass found for one report."""

    candidates: list[PrepassCandidate] = field(default_factory=list)
    """Candidate files, best first (only files with evidence beyond PageRank)."""
    seconds: float = 0.0
    """Wall-clock seconds the ranking (and refocusing) took."""
    repo_map: RepoMap | None = None
    """The repo map refocused on the candidates' paths, or None when it could not be refocused."""
    error: str | None = None
    """Why the pre-pass produced nothing, when it failed."""
    ranking: RankedLocations | None = None
    """The full ranking as `RankedLocations` (top 10 files, top 15 functions), None when it failed."""

    @property
    def detail(self) -> str:
        """One line for people: what was shown, or why nothing was."""
        if self.error:
            return f"pre-pass failed: {self.error}"
        if not self.candidates:
            return "nothing in the report matched this repository lexically; no candidates shown"
        return f"{len(self.candidates)} candidate(s) shown to the model, first {self.candidates[0].path}"


def run_prepass(text: str, root: Path, repo_map: RepoMap | None = None, *, focus: Focus | None = None, top: int = 5,
                history: HistorySource | None = None) -> Prepass:
    """Rank the tree for a report offline (with the `HistorySource` `history` when given) and keep the `top`
    candidate files; never raises."""
    started = time.perf_counter()
    try:
        ranking, corpus = rank_report(text, root, repo_map, focus=focus, history=history)
        located = ranked_locations(ranking, corpus, source="prepass")
    except Exception as e:  # the pre-pass helps, it is not essential: the model explores without it
        _log.warning("pre-pass ranking failed for %s", root, exc_info=True)
        return Prepass(seconds=time.perf_counter() - started, error=f"{type(e).__name__}: {e}")
    candidates = []
    for cand in ranking.candidates[:top]:
        if cand.score <= 0 or not any(v > 0 for k, v in cand.parts.items() if k not in CONTEXT_PARTS):
            continue
        symbols = [f"{s.span.qualname}:{s.span.start_line}-{s.span.end_line}" for s in cand.symbols[:3]]
        reasons = list(dict.fromkeys(cand.reasons))[:3]
        candidates.append(
            PrepassCandidate(path=cand.path, score=round(cand.score, 3), symbols=symbols, reasons=reasons)
        )
    refocused = _refocus(repo_map, focus, [c.path for c in candidates])
    return Prepass(candidates=candidates, seconds=time.perf_counter() - started, repo_map=refocused, ranking=located)


def _refocus(repo_map: RepoMap | None, focus: Focus | None, paths: list[str]) -> RepoMap | None:
    """The repo map ranked again with the candidates' paths added to the focus (cheap: no walking or parsing)."""
    if not paths or repo_map is None or not hasattr(repo_map, "refocus"):
        return None
    try:
        base = focus if isinstance(focus, Focus) else Focus()
        new_paths = tuple(dict.fromkeys([*paths, *base.paths]))
        return repo_map.refocus(dataclasses.replace(base, paths=new_paths))
    except Exception:
        _log.warning("could not refocus the repo map on the pre-pass candidates", exc_info=True)
        return None


def render_candidates(candidates: list[PrepassCandidate]) -> str:
    """The system-prompt section listing the candidates, labelled as a lexical guess that may be wrong."""
    lines = [
        f"{_HEADING}:",
        "A fast lexical ranking (no model) matched the report against the code. Use it as a starting point and",
        "check it with the tools; the real cause may be elsewhere.",
        "",
    ]
    for k, c in enumerate(candidates, 1):
        lines.append(f"{k}. `{c.path}` (score {c.score:.2f})")
        if c.symbols:
            lines.append("   definitions: " + ", ".join(f"`{s}`" for s in c.symbols))
        if c.reasons:
            lines.append("   why: " + "; ".join(c.reasons))
    return "\n".join(lines)

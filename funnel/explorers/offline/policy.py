"""The offline investigator's turn policy: a deterministic stand-in for the model inside the same funnel.

Each turn it looks at the phase (from the tools offered) and at what its earlier tool calls returned:

* explore: literal searches for the report's error messages, `find_symbol` for definitions it names
  (qualified names first), then `begin_deep_dive` naming the top-ranked suspects;
* deep-dive: `read_range` over the best definitions of the top candidates, then `finish_deep_dive`;
* output: the markdown report, quoting the lines it read.

The ranking (BM25 over files and definitions fused with stack frames, named definitions, imports,
literal messages and the repo map's PageRank) is computed once, on the first turn.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo

from funnel.localize.corpus import Corpus
from funnel.localize.evidence import Read, parse_read, parse_search_hits, search_terms, symbol_queries
from funnel.localize.history import HistoryConfig, HistorySource
from funnel.localize.citations import RankedLocations, ranked_locations
from funnel.localize.candidates import report_title
from funnel.localize.rank import CONTEXT_PARTS, CandidateRanking, RankConfig, rank_report
from funnel.localize.requested import Addition, find_addition
from funnel.explorers.offline.questions import open_questions
from funnel.explorers.offline.writer import WriterConfig, plan_citations, write_report
from funnel.limits import Limits
from funnel.phases import ControlTool, phase_of_tools
from repomap import RepoMap
from repomap.focus import Focus
from repomap.walk import BAD_NAME_HOLDS, SkipReason
from schemas.enums import Classification, Phase, ToolName

__all__ = ("OfflineConfig", "OfflinePolicy")

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OfflineConfig:
    """Knobs of the offline investigator."""

    rank: RankConfig = field(default_factory=RankConfig)
    """Fusion weights of the ranking."""
    writer: WriterConfig = field(default_factory=WriterConfig)
    """What the report cites."""
    searches: int = 2
    """Literal message searches in the explore phase."""
    lookups: int = 2
    """`find_symbol` lookups in the explore phase."""
    reads: int = 4
    """`read_range` calls in the deep-dive (also capped by the run's limits)."""
    suspects: int = 3
    """Suspects named when entering the deep-dive."""
    cache_dir: Path | None = None
    """Where term counts and commit logs are cached (default: `$BUGSLEUTH_CACHE_DIR/offline`)."""
    history: HistoryConfig = field(default_factory=HistoryConfig)
    """Which past commits count as evidence (the signal's weight is `rank.w_history`)."""


class OfflinePolicy:
    """The FunctionModel function: one deterministic decision per model request."""

    def __init__(self, *, text: str, root: Path, repo_map: RepoMap | None, focus: Focus | None, limits: Limits,
                 config: OfflineConfig | None = None, history: HistorySource | None = None,
                 kind: Classification = Classification.bug) -> None:
        self.text = text
        """The report text (title and body)."""
        self.root = root
        """Repository root."""
        self.repo_map = repo_map
        """The run's repo map, or None (then files are walked and definitions found by pattern)."""
        self.focus = focus or Focus.from_text(text)
        """What the report points at."""
        self.limits = limits
        """The run's `Limits` (explore and deep-dive budgets)."""
        self.config = config or OfflineConfig()
        """Knobs."""
        self.history = history
        """The repository's history up to the investigated commit, or None."""
        self.kind = kind
        """What kind of report it is (`funnel.classify`): a feature request's report is worded as one."""
        self.addition: Addition | None = None
        """The definition a feature request's title asks for and its place in the prime suspect, if any."""
        self.ranking: CandidateRanking | None = None
        """Candidates, computed on the first turn."""
        self.corpus: Corpus | None = None
        """The lexical corpus, computed on the first turn."""
        self.rank_seconds = 0.0
        """Wall-clock seconds the ranking took."""
        self._lock = threading.Lock()
        self._explore: list[tuple[str, dict[str, Any]]] | None = None
        self._reads: list[dict[str, Any]] | None = None
        self._issued: set[str] = set()

    # -------------------------------------------------------------------------------------------- planning
    def _ensure_ranked(self) -> None:
        with self._lock:
            if self.ranking is not None:
                return
            started = time.perf_counter()
            try:
                self.ranking, self.corpus = rank_report(self.text, self.root, self.repo_map, focus=self.focus,
                                                        config=self.config.rank, cache_dir=self.config.cache_dir,
                                                        history=self.history, history_config=self.config.history)  # fmt: skip
            except OSError:  # an unreadable tree: investigate with nothing ranked (the run then asks the reporter)
                _log.warning("offline ranking failed for %s", self.root, exc_info=True)
                self.ranking, self.corpus = CandidateRanking([], 0.05, {}), Corpus(self.root, [], {})
            self.rank_seconds = time.perf_counter() - started
            budget = max(0, getattr(self.limits, "explore_calls", 8) - 1)
            plan: list[tuple[str, dict[str, Any]]] = []
            for term in search_terms(self.focus, limit=self.config.searches):
                plan.append((ToolName.search, {"pattern": term, "fixed_strings": True}))
            for name in symbol_queries(self.focus, self.corpus.names, limit=self.config.lookups, text=self.text):
                plan.append((ToolName.find_symbol, {"name": name}))
            if not plan and self.ranking.candidates and self.ranking.candidates[0].symbols:
                plan.append((ToolName.find_symbol, {"name": self.ranking.candidates[0].symbols[0].span.name}))
            self._explore = plan[:budget]
            reads_budget = min(self.config.reads, getattr(self.limits, "deep_dive_reads", self.config.reads))
            if self.kind == Classification.feature_request and self.ranking.candidates:
                self.addition = find_addition(report_title(self.text), self.corpus, self.ranking.candidates[0].path)
            cites = plan_citations(self.ranking, self.corpus.texts, self.config.writer, report=self.text,
                                   focus=self.focus, addition=self.addition)
            # Read the prime suspect's two best definitions, then the next files' best, then the rest.
            firsts = [c for k, c in enumerate(cites) if k > 0 and c.path != cites[0].path and c.path not in {x.path for x in cites[:k]}]
            order = cites[:2] + firsts + cites[2:]
            reads = []
            for cite in order:
                args = {"path": cite.path, "start": cite.start, "end": cite.end}
                if args not in reads:
                    reads.append(args)
            self._reads = reads[:reads_budget]

    def ranked_locations(self) -> RankedLocations | None:
        """The ranking deeper than the report names (top 10 files, top 15 functions); None before the first turn."""
        if self.ranking is None or self.corpus is None:
            return None
        return ranked_locations(self.ranking, self.corpus)

    def _evidence_found(self) -> bool:
        assert self.ranking is not None
        return any(v > 0 for c in self.ranking.candidates[:5] for k, v in c.parts.items() if k not in CONTEXT_PARTS)

    # -------------------------------------------------------------------------------------------- turns
    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Decide the next move from the phase and the history."""
        self._ensure_ranked()
        phase = phase_of_tools(t.name for t in info.function_tools)
        if phase == Phase.explore:
            return self._explore_turn()
        if phase == Phase.deep_dive:
            return self._deep_dive_turn()
        return ModelResponse(parts=[TextPart(self._report(messages))], finish_reason="stop")

    def _call(self, tool: str, args: dict[str, Any]) -> ModelResponse:
        self._issued.add(_key(tool, args))
        return ModelResponse(parts=[ToolCallPart(str(tool), args)])

    def _explore_turn(self) -> ModelResponse:
        assert self._explore is not None and self.ranking is not None
        for tool, args in self._explore:
            if _key(tool, args) not in self._issued:
                return self._call(tool, args)
        if not self._evidence_found():
            return self._call(ControlTool.request_info, {"questions": self._no_match_questions()})
        suspects = []
        for cand in self.ranking.candidates[: self.config.suspects]:
            sym = cand.symbols[0].span.qualname if cand.symbols else None
            suspects.append(f"{cand.path}:{sym}" if sym else cand.path)
        key = _key(ControlTool.begin_deep_dive, {"suspects": suspects})
        if key in self._issued:  # refused before: fall through to the reads the harness still allows
            return self._deep_dive_turn()
        return self._call(ControlTool.begin_deep_dive, {"suspects": suspects})

    def _no_match_questions(self) -> list[str]:
        """What to ask when nothing ranked holds the report's words: of the reporter, or, when the map indexed no
        source file at all, whether the report reached the right repository."""
        stats = self.repo_map.stats if self.repo_map is not None else None
        if stats is not None and stats.files_indexed == 0:
            left_out = ", ".join(f"{n} {reason}" for reason, n in sorted(stats.skipped.items()) if n)
            return [f"The repository holds no source file to investigate at this commit"
                    f"{f' (left out: {left_out})' if left_out else ''}: is the report filed against the right "
                    "repository and branch?"]
        questions = ["Nothing in the report matches code in this repository: which module, command or page is "
                     "involved?", *open_questions(self.text, self.focus, self.kind)]
        if stats is not None and (bad := stats.skipped.get(SkipReason.bad_name, 0)):
            questions.append(f"{bad} file(s) were left out because their names hold {BAD_NAME_HOLDS}, which no report "
                             "can cite: is the bug in one of them? Renaming it lets it be investigated.")
        return questions

    def _deep_dive_turn(self) -> ModelResponse:
        assert self._reads is not None
        for args in self._reads:
            if _key(ToolName.read_range, args) not in self._issued:
                return self._call(ToolName.read_range, args)
        return self._call(ControlTool.finish_deep_dive, {})

    # -------------------------------------------------------------------------------------------- output
    def _report(self, messages: list[ModelMessage]) -> str:
        assert self.ranking is not None and self.corpus is not None
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        for m in messages:
            if isinstance(m, ModelResponse):
                for p in m.parts:
                    if isinstance(p, ToolCallPart):
                        calls[p.tool_call_id] = (p.tool_name, p.args_as_dict())
        reads: list[Read] = []
        searched: dict[str, list[tuple[str, int]]] = {}
        for m in messages:
            if not isinstance(m, ModelRequest):
                continue
            for p in m.parts:
                if not isinstance(p, ToolReturnPart):
                    continue
                content = p.model_response_str() if not isinstance(p.content, str) else p.content
                if p.tool_name == ToolName.read_range:
                    r = parse_read(content)
                    if r is not None:
                        reads.append(r)
                elif p.tool_name == ToolName.search:
                    pattern = calls.get(p.tool_call_id, ("", {}))[1].get("pattern", "")
                    if pattern:
                        searched[pattern] = parse_search_hits(content)
        return write_report(self.text, self.focus, self.ranking, reads, self.corpus.texts, searched=searched,
                            config=self.config.writer, kind=self.kind, addition=self.addition)  # fmt: skip


def _key(tool: str, args: dict[str, Any]) -> str:
    return f"{tool}:{sorted((k, repr(v)) for k, v in args.items())}"

"""The offline investigator: a deterministic explorer that needs no model and no key.

It plays the model's part inside the funnel as a PydanticAI `FunctionModel`: the same four tools, phases,
stop policy, trace and verification as a real model, and the same markdown report. With a model configured
it serves as the fallback, and `rank_report` is a cheap pre-pass whose candidates can seed the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic_ai.models.function import FunctionModel

from funnel.explorers.protocol import ExplorerContext
from funnel.explorers.offline.policy import OfflineConfig, OfflinePolicy
from funnel.localize.rank import Candidate, CandidateRanking, RankConfig, build_corpus, rank_report
from funnel.explorers.offline.writer import WriterConfig
from funnel.localize.citations import RankedLocations

__all__ = (
    "Candidate",
    "CandidateRanking",
    "OfflineConfig",
    "OfflineExplorer",
    "RankConfig",
    "WriterConfig",
    "build_corpus",
    "rank_report",
)


@dataclass
class OfflineExplorer:
    """Builds the offline investigator's FunctionModel for one run (labelled `offline`)."""

    config: OfflineConfig = field(default_factory=OfflineConfig)
    """Ranking, citation and budget knobs."""
    name: str = "offline"
    """Explorer name recorded in traces and diagnoses."""
    last_policy: OfflinePolicy | None = field(default=None, repr=False)
    """The policy of the most recent run (its ranking, for inspection and tests)."""

    def build_model(self, ctx: ExplorerContext) -> FunctionModel:
        """A FunctionModel running the offline policy over this run's report, tree and repo map."""
        policy = OfflinePolicy(text=ctx.report.text, root=ctx.root, repo_map=ctx.repo_map, focus=ctx.focus,
                               limits=ctx.limits, config=self.config, history=ctx.history,
                               kind=ctx.classification)  # fmt: skip
        self.last_policy = policy
        return FunctionModel(policy, model_name="offline")

    def ranked_locations(self) -> RankedLocations | None:
        """The last run's ranking, deeper than its report names (top 10 files, top 15 functions)."""
        return self.last_policy.ranked_locations() if self.last_policy is not None else None

"""Within a file, the definition holding more of the report's distinct terms comes first."""

from __future__ import annotations

from funnel.localize.rank import RankConfig, rank_report
from tests.funnel.localize.test_offline_rank import _make

STORE = {
    "store/cache.py": (
        "class Store:\n"
        "    def reset(self):\n"
        "        self.timeout = self.timeout or DEFAULT_TIMEOUT\n        timeout = self.timeout\n"
        "        self.cache = {}\n        cache = self.cache\n        return cache, timeout\n\n"
        "    def purge(self, now):\n"
        "        for key, entry in list(self.entries.items()):\n"
        "            if entry.stale(now):\n"
        "                self.expire(key)  # never\n"
    ),
    "store/util.py": "def helper():\n    return 1\n",
    "store/other.py": "def size(cache):\n    return len(cache)\n",
}
REPORT = "Cache entries never expire after the timeout\n\nThe cache keeps stale entries: the timeout is ignored.\n"


def _definitions(tmp_path, coverage: float) -> tuple[str, list[str]]:
    ranking, _ = rank_report(REPORT, _make(tmp_path, STORE), config=RankConfig(definition_coverage=coverage),
                             cache_dir=tmp_path / "cache")
    first = ranking.candidates[0]
    return first.path, [hit.span.qualname for hit in first.symbols]


def test_the_definition_covering_more_report_terms_is_cited_before_one_repeating_a_few(tmp_path):
    # `reset` repeats `cache` and `timeout`; `purge` holds `entries`, `stale`, `expire`, `never` once each
    path, order = _definitions(tmp_path / "on", RankConfig().definition_coverage)
    assert path == "store/cache.py"
    assert order[:2] == ["Store.purge", "Store.reset"]


def test_without_coverage_the_definitions_keep_their_bm25_order(tmp_path):
    path, order = _definitions(tmp_path / "off", 0.0)
    assert path == "store/cache.py"
    assert order[:2] == ["Store.reset", "Store.purge"]


def test_coverage_orders_definitions_but_leaves_the_files_scores_alone(tmp_path):
    scores = []
    for coverage in (0.0, 0.3):
        ranking, _ = rank_report(REPORT, _make(tmp_path / str(coverage), STORE),
                                 config=RankConfig(definition_coverage=coverage), cache_dir=tmp_path / "cache")
        scores.append([(c.path, round(c.score, 9)) for c in ranking.candidates])
    assert scores[0] == scores[1]

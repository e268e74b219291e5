"""The ranking behind a diagnosis, deeper than it names: what `InvestigationResult.ranking` carries out."""

from __future__ import annotations

from dataclasses import dataclass

from funnel.explorers.agent import ModelExplorer
from funnel.explorers.offline import OfflineExplorer
from funnel.localize.citations import outer_entity
from funnel.run.loop import investigate
from schemas.report import BugReport
from tests.funnel.harness_support import FIXTURE_REPO, REPORT, Script
from tests.funnel.localize.test_offline_rank import PY_REPO, PY_REPORT, _make
from tests.funnel.run.test_prepass_fallback import HAPPY_FUNCTION_STEPS


@dataclass(frozen=True)
class _Def:
    qualname: str
    kind: str
    start_line: int
    end_line: int


def test_nested_definitions_are_named_by_their_outermost_function_and_classes_still_nest():
    spans = [_Def("A", "class", 1, 20), _Def("A.__init__", "method", 2, 6), _Def("A.__init__.inner", "function", 3, 4),
             _Def("A.B", "class", 7, 12), _Def("A.B.meth", "method", 8, 9), _Def("top", "function", 21, 30),
             _Def("top.helper", "function", 22, 29), _Def("top.helper.L", "class", 23, 28),
             _Def("top.helper.L.z", "method", 24, 25)]
    names = [outer_entity(spans, k) for k in range(len(spans))]
    assert names == ["A", "A.__init__", "A.__init__", "A.B", "A.B.meth", "top", "top", "top", "top"]


async def test_the_offline_investigation_carries_its_deeper_ranking_out(tmp_path):
    root = _make(tmp_path / "repo", PY_REPO)
    title, _, body = PY_REPORT.partition("\n")
    result = await investigate(BugReport(title=title, body=body), root, explorer=OfflineExplorer())
    ranking = result.ranking
    assert ranking is not None and ranking.source == "offline"
    assert ranking.files[0] == result.diagnosis.ranked_files()[0] == "pkg/client.py"
    assert set(ranking.files[:5]) >= set(result.diagnosis.ranked_files()[:5])
    assert "pkg/client.py:Session.request" in ranking.functions
    assert len(ranking.functions) == len(set(ranking.functions)) <= 15 and len(ranking.files) <= 10


async def test_a_model_run_carries_the_prepass_ranking_and_a_command_run_none():
    script = Script(HAPPY_FUNCTION_STEPS)
    result = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(script.model()))
    assert result.ranking is not None and result.ranking.source == "prepass"
    assert "shop/pricing.py" in result.ranking.files[:2]
    assert any(f.startswith("shop/pricing.py:") for f in result.ranking.functions)
    scripted = await investigate(REPORT, FIXTURE_REPO, explorer="scripted")
    assert scripted.ranking is None

"""The tools the model calls read their caps from the run's `ToolLimits` (`Limits.tools`)."""

from __future__ import annotations

import pytest

from funnel import Limits, ToolLimits, investigate
from tests.funnel.harness_support import FIXTURE_REPO, GOOD_REPORT, REPORT, Script, ScriptExplorer, call, returns, text


async def _search_result(limits: Limits, context: int) -> str:
    script = Script([call("search", pattern="raise ValueError", context=context), text(GOOD_REPORT)])
    result = await investigate(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(script), limits=limits)
    return str(next(p.content for p in returns(result.messages) if p.tool_name == "search"))


def _context_lines(rendered: str) -> int:
    return sum(1 for line in rendered.splitlines() if line.startswith("shop/pricing.py-"))


@pytest.mark.parametrize(("cap", "asked", "shown"), [(5, 2, 4), (1, 2, 2), (5, 9, 10)])
async def test_the_search_context_a_model_gets_is_capped_by_tool_limits(cap, asked, shown):
    limits = Limits(tools=ToolLimits(agent_search_context=cap))
    # the `raise` is line 7 of pricing.py: min(asked, cap) context lines on each side
    assert _context_lines(await _search_result(limits, asked)) == shown


async def test_a_list_depth_beyond_the_agent_cap_lists_no_deeper():
    script = Script([call("list_dir", path=".", depth=3), text(GOOD_REPORT)])
    capped = Limits(tools=ToolLimits(agent_list_depth=1))
    result = await investigate(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(script), limits=capped)
    listing = str(next(p.content for p in returns(result.messages) if p.tool_name == "list_dir"))
    assert "(depth 1)" in listing and "pricing.py" not in listing

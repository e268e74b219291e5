"""Compaction invariants over random histories, and compaction inside a real run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from funnel.run.compaction import ELIDED_PREFIX, CompactionPolicy, compact, estimate_tokens
from funnel import investigate
from funnel.limits import Limits
from schemas.enums import StopReason
from tests.funnel.harness_support import FIXTURE_REPO, GOOD_REPORT, REPORT, Script, ScriptExplorer, call, text


@st.composite
def histories(draw) -> list[ModelMessage]:
    msgs: list[ModelMessage] = [ModelRequest(parts=[SystemPromptPart("system " * 50), UserPromptPart("report " * 80)])]
    for turn in range(draw(st.integers(0, 30))):
        n_calls = draw(st.integers(0, 3))
        if n_calls == 0:
            msgs.append(ModelResponse(parts=[TextPart(draw(st.text(max_size=50)))]))
            msgs.append(ModelRequest(parts=[UserPromptPart("go on")]))
            continue
        ids = [f"c{turn}_{i}" for i in range(n_calls)]
        msgs.append(ModelResponse(parts=[ToolCallPart("search", {"pattern": f"p{turn}"}, tool_call_id=i) for i in ids]))
        sizes = draw(st.lists(st.integers(0, 3000), min_size=n_calls, max_size=n_calls))
        msgs.append(ModelRequest(parts=[ToolReturnPart("search", "x" * s + "\nmore", tool_call_id=i) for i, s in zip(ids, sizes)]))
    return msgs


policies = st.builds(
    CompactionPolicy,
    max_messages=st.integers(0, 40),
    max_tokens=st.integers(0, 20_000),
    keep_recent=st.integers(0, 12),
)


def _pairs(msgs: list[ModelMessage]) -> list[tuple[str, int, int]]:
    """(tool_call_id, index of call, index of return) for every call in a history."""
    calls = {p.tool_call_id: i for i, m in enumerate(msgs) if isinstance(m, ModelResponse) for p in m.parts
             if isinstance(p, ToolCallPart)}  # fmt: skip
    rets = {p.tool_call_id: i for i, m in enumerate(msgs) if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, ToolReturnPart)}  # fmt: skip
    return sorted((k, calls[k], rets.get(k, -1)) for k in calls)


@settings(max_examples=150, deadline=None)
@given(histories(), policies)
def test_compaction_invariants(history, policy):
    out = compact(history, policy)
    assert out[0] is history[0]  # system prompt and first user message verbatim
    assert len(out) == len(history)  # nothing dropped or reordered
    assert [type(m) for m in out] == [type(m) for m in history]
    k = min(policy.keep_recent, len(history) - 1)
    if k:
        assert all(a is b for a, b in zip(out[-k:], history[-k:]))  # the recent messages verbatim
    assert _pairs(out) == _pairs(history)  # every call keeps its result, in place
    assert estimate_tokens(out) <= estimate_tokens(history)
    assert compact(out, policy) == out  # idempotent
    for a, b in zip(out, history):
        if a is not b:
            for pa, pb in zip(a.parts, b.parts):
                assert pa is pb or (isinstance(pa, ToolReturnPart) and pa.content.startswith(ELIDED_PREFIX))


@settings(max_examples=50, deadline=None)
@given(histories())
def test_under_the_thresholds_nothing_changes(history):
    out = compact(history, CompactionPolicy(max_messages=10_000, max_tokens=10**9))
    assert all(a is b for a, b in zip(out, history))


def test_the_tool_result_just_before_the_recent_window_keeps_its_call():
    msgs = [ModelRequest(parts=[UserPromptPart("r")])]
    for i in range(6):
        msgs.append(ModelResponse(parts=[ToolCallPart("read_range", {"path": "a"}, tool_call_id=f"c{i}")]))
        msgs.append(ModelRequest(parts=[ToolReturnPart("read_range", "y" * 1000, tool_call_id=f"c{i}")]))
    out = compact(msgs, CompactionPolicy(max_messages=2, keep_recent=3))
    # the window of 3 would start at a response... widened so no return is cut from its call
    assert out[-4] is msgs[-4] and out[-3] is msgs[-3]
    assert out[1].parts[0] is msgs[1].parts[0]
    assert out[2].parts[0].content.startswith(ELIDED_PREFIX)


def test_a_configured_summarizer_replaces_the_elision():
    msgs = [ModelRequest(parts=[UserPromptPart("r")]),
            ModelResponse(parts=[ToolCallPart("search", {}, tool_call_id="a")]),
            ModelRequest(parts=[ToolReturnPart("search", "z" * 5000, tool_call_id="a")]),
            ModelResponse(parts=[TextPart("ok")])]  # fmt: skip
    out = compact(msgs, CompactionPolicy(max_messages=1, keep_recent=1), summarize=lambda tool, t: f"{tool}: {len(t)} z")
    assert out[2].parts[0].content == f"{ELIDED_PREFIX} search: 5000 z"


async def test_compaction_in_a_run_shrinks_what_the_model_sees_but_keeps_the_full_transcript():
    steps = [call("read_range", path="shop/pricing.py", start=1, end=14),
             call("read_range", path="shop/cart.py", start=1, end=19),
             call("search", pattern="def "), call("list_dir", path="shop"),
             call("finish_deep_dive"), text(GOOD_REPORT)]  # fmt: skip
    script = Script(steps)
    limits = Limits(compaction_max_messages=4, compaction_keep_recent=2)
    result = await investigate(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(script), limits=limits)
    assert result.diagnosis.termination.reason == StopReason.done
    last_seen = script.seen[-1]
    elided = [p for m in last_seen if isinstance(m, ModelRequest) for p in m.parts
              if isinstance(p, ToolReturnPart) and str(p.content).startswith(ELIDED_PREFIX)]  # fmt: skip
    assert elided, "old tool results should be summarized in what the model sees"
    full = [p for m in result.messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    assert not any(str(p.content).startswith(ELIDED_PREFIX) for p in full)
    assert "apply_discount" in str(full[0].content)


def test_a_cheap_model_can_write_the_summaries():
    from pydantic_ai.models.function import FunctionModel

    from funnel.run.compaction import model_summarizer

    seen = []

    def cheap(messages, info):
        seen.append(messages[-1].parts[-1].content)
        return ModelResponse(parts=[TextPart("shop/pricing.py:8 divides by 10")])

    msgs = [ModelRequest(parts=[UserPromptPart("r")]),
            ModelResponse(parts=[ToolCallPart("read_range", {}, tool_call_id="a")]),
            ModelRequest(parts=[ToolReturnPart("read_range", "8| return x // 10\n" * 100, tool_call_id="a")]),
            ModelResponse(parts=[TextPart("ok")])]  # fmt: skip
    out = compact(msgs, CompactionPolicy(max_messages=1, keep_recent=1), summarize=model_summarizer(FunctionModel(cheap)))
    assert out[2].parts[0].content == f"{ELIDED_PREFIX} shop/pricing.py:8 divides by 10"
    assert seen[0].startswith("Tool: read_range")


def test_a_summary_holding_half_a_surrogate_pair_can_be_sent_on():
    from pydantic_ai.models.function import FunctionModel

    from funnel.run.compaction import model_summarizer

    summarize = model_summarizer(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("x.py:8 \ud83d")])))
    assert summarize("read_range", "8| x").encode("utf-8") == "x.py:8 \ufffd".encode("utf-8")

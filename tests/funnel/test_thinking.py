"""Reasoning written into a reply's text is thinking, not the answer; a tag quoted as code is the answer's."""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart

from funnel.thinking import _Code, split_thinking, thinking_in_text

REPORT = "## Summary\nA 10% discount removes the whole price.\n"


def test_a_lone_close_makes_everything_before_it_thought():
    # the template opened the thought (`<think>\n` in the prompt): DeepSeek-R1, Qwen3 thinking models
    text = "The cart? No: pricing.\n## Affected files\n- `shop/cart.py:3`\n</think>\n\n" + REPORT
    assert thinking_in_text(text) == (["The cart? No: pricing.\n## Affected files\n- `shop/cart.py:3`"],
                                      REPORT.strip())  # fmt: skip


def test_tags_other_models_write_are_thought():
    for open_, close in [("<thinking>", "</thinking>"), ("[THINK]", "[/THINK]"), ("◁think▷", "◁/think▷"),
                         ("<reasoning>", "</reasoning>"), ("<think>", "</think>")]:  # fmt: skip
        assert thinking_in_text(f"{open_}pricing, line 8{close}\n{REPORT}") == (["pricing, line 8"], REPORT.strip())


def test_gpt_oss_analysis_channel_is_thought_and_the_final_channel_the_answer():
    text = f"<|channel|>analysis<|message|>Look at pricing.<|end|><|start|>assistant<|channel|>final<|message|>{REPORT}"
    assert thinking_in_text(text + "<|return|>") == (["Look at pricing."], REPORT)


def test_a_tag_quoted_as_code_is_the_answers():
    for text in (f"{REPORT}The parser stops at `</think>` and drops the rest.",
                 f"{REPORT}```python\nend = text.find('</think>')\n```\n",
                 f"{REPORT}It splits on '</think>' only."):  # fmt: skip
        assert thinking_in_text(text) == ([], text)


def test_a_tag_nothing_closes_leaves_the_report_the_answer():
    text = f"<thinking>\n{REPORT}"
    assert thinking_in_text(text) == ([], text)


_PIECES = ["<think>", "</think>", "[THINK]", "[/THINK]", "<|channel|>final<|message|>", "`", "\n```\n", "'", "ab",
           " ", "\n"]  # fmt: skip


def _kept(text: str) -> Counter[str]:
    return Counter(re.sub(r"<\|[a-z_]+\|>|</?think>|\[/?THINK\]|final|\s", "", text))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_text_is_only_ever_moved_never_lost_or_invented(text):
    thoughts, answer = thinking_in_text(text)
    assert _kept("".join([*thoughts, answer])) == _kept(text)
    assert all(thoughts) and (answer == text or "think" in text.lower() or "final" in text)


def test_split_thinking_makes_thinking_parts_and_keeps_tool_calls():
    call = ToolCallPart("search", {"pattern": "apply_discount"}, tool_call_id="c1")
    parts = split_thinking(ModelResponse(parts=[TextPart("I should search first.\n</think>\n\n"), call])).parts
    assert parts == [ThinkingPart("I should search first."), call]


def test_a_response_without_thought_is_the_same_object():
    response = ModelResponse(parts=[TextPart(REPORT)])
    assert split_thinking(response) is response


def _in_code_read_from_the_start(text: str, at: int) -> bool:
    before = text[:at]
    fences = sum(1 for line in before.split("\n")[:-1] if line.lstrip().startswith(("```", "~~~")))
    line = before.rpartition("\n")[2]
    return fences % 2 == 1 or line.count("`") % 2 == 1 or line.endswith(("'", '"'))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["`", "```", "~~~", "\n", " ", "'", "a", "</think>"]), max_size=20).map("".join))
def test_reading_once_finds_code_where_reading_from_the_start_does(text):
    in_code = _Code(text)
    assert [in_code(i) for i in range(len(text) + 1)] == [_in_code_read_from_the_start(text, i)
                                                          for i in range(len(text) + 1)]  # fmt: skip


def test_gpt_oss_analysis_beside_a_commentary_call_is_thought_and_the_call_stays():
    call = '<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>{}<|call|>'
    thoughts, answer = thinking_in_text(f"<|channel|>analysis<|message|>Search first.<|end|>{call}")
    assert thoughts == ["Search first."] and answer == f"<|end|>{call}"

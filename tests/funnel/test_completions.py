"""Reading plain servers' chat completions: the fields filled, the ones left alone, the models that read leniently."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from funnel.completions import LenientChatModel, completion_data, lenient, no_choice


def test_the_fields_a_plain_server_leaves_out_get_the_one_value_they_can_have():
    data = completion_data({"choices": [{"message": {"content": None, "tool_calls": [
        {"function": {"name": "search", "arguments": {"pattern": "x"}}},
        {"id": "", "type": None, "function": {"name": "finish_deep_dive", "arguments": None}}]}}]})  # fmt: skip
    assert data["id"].startswith("chatcmpl-") and data["object"] == "chat.completion" and data["model"] == ""
    message = data["choices"][0]["message"]
    assert message["role"] == "assistant" and data["choices"][0]["index"] == 0
    calls = message["tool_calls"]
    assert [c["type"] for c in calls] == ["function", "function"] and all(c["id"].startswith("call_") for c in calls)
    assert calls[0]["id"] != calls[1]["id"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{"pattern": "x"}, {}]


def test_fields_the_server_sent_are_kept():
    sent = {"id": "c1", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": {
        "role": "assistant", "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "s",
                                                                                          "arguments": "{}"}}]}}]}  # fmt: skip
    assert completion_data(json.loads(json.dumps(sent))) == sent


def test_a_creation_time_is_read_as_unix_seconds_or_as_none():
    sent = [1_733_600_000, 1_733_600_000_123_456, 1_733_600_000_123_456_789, 10**24, -1, "1733600000", True, 1.5e9]
    assert [completion_data({"created": c, "choices": []})["created"] for c in sent] == [
        1_733_600_000, 1_733_600_000, 1_733_600_000, 0, 0, 0, 0, 1_500_000_000]
    assert "created" not in completion_data({"choices": []})


def test_a_usage_that_counts_no_tokens_is_left_out_and_a_sound_one_kept():
    for usage in ("x", [], {"prompt_tokens": "9"}, {"total_tokens": -1}, {"completion_tokens": True},
                  {"prompt_tokens": 2**64 - 1}):
        assert completion_data({"usage": usage, "choices": []})["usage"] is None
    sound = {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}
    assert completion_data({"usage": dict(sound), "choices": []})["usage"] == sound


def test_a_completion_whose_choice_is_not_an_object_has_no_choice():
    for choices in (["x"], 5, [None], [[{}]]):
        assert no_choice({"choices": choices}) == "the endpoint answered without a reply"
    assert no_choice({"choices": [{"message": {}}]}) is None


def test_only_a_chat_completions_model_is_read_leniently():
    chat = OpenAIChatModel("m", provider=OpenAIProvider(base_url="http://127.0.0.1:9/v1", api_key="k"))
    reader = lenient(chat)
    assert type(reader) is LenientChatModel and reader.model_name == "m" and reader.client is chat.client
    other = FunctionModel(lambda messages, info: None)
    assert lenient(other) is other


_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                           st.sampled_from(["id", "type", "function", "arguments", "message", "tool_calls", "role"]),
                           inner, max_size=4), max_leaves=15)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["id", "object", "model", "choices"]), _VALUES, max_size=4))
def test_any_json_a_server_sends_is_filled_in_or_left_for_validation_never_a_crash(data):
    assert completion_data(data) is data


def test_a_completion_without_a_choice_says_what_the_server_said():
    assert no_choice({"error": {"message": "Upstream provider\n returned an error", "code": 502}}) == (
        "the endpoint answered without a reply: Upstream provider returned an error (code 502)")
    assert no_choice({"id": "c", "choices": []}) == "the endpoint answered without a reply"
    assert no_choice({"choices": [{"index": 0, "message": {}}]}) is None


def test_a_call_in_the_legacy_function_call_field_is_the_messages_one_tool_call():
    data = completion_data({"choices": [{"finish_reason": "function_call", "message": {
        "role": "assistant", "content": None, "function_call": {"name": "search", "arguments": '{"pattern": "x"}'}}}]})
    (call,) = data["choices"][0]["message"]["tool_calls"]
    assert call["function"] == {"name": "search", "arguments": '{"pattern": "x"}'} and call["type"] == "function"
    assert "function_call" not in data["choices"][0]["message"] and call["id"]

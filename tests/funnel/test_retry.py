"""How a model call's failure reads to people (`funnel.retry.failure_text`)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic_ai import exceptions as pai_exc
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.usage import RequestUsage

from funnel.retry import ReplyReader, failure_text


def _filtered(details: dict[str, str]) -> pai_exc.ContentFilterError:
    response = ModelResponse(parts=[], finish_reason="content_filter", provider_details=details)
    body = ModelMessagesTypeAdapter.dump_json([response]).decode()
    return pai_exc.ContentFilterError("Content filter triggered.", body=body)


def test_a_refusal_reads_in_the_models_words_on_one_line():
    text = failure_text(_filtered({"finish_reason": "refusal", "refusal": "I can't\nhelp with that."}))
    assert text == "the model refused: \u201cI can't help with that.\u201d"


def test_a_content_filter_without_words_names_the_providers_reason():
    text = failure_text(_filtered({"finish_reason": "content_filter"}))
    assert text == "the provider's content filter stopped the reply (finish reason 'content_filter')"


def test_the_refused_response_body_is_left_out():
    assert "parts" not in failure_text(_filtered({"refusal": "No."}))
    assert failure_text(pai_exc.ContentFilterError("Content filter triggered.", body="not json")).startswith(
        "the provider's content filter")


def test_a_response_another_error_quotes_is_cut_to_one_short_line():
    body = '{"choices": [{"message": {"content": "' + "x" * 400 + '"}}]}'
    text = failure_text(pai_exc.UnexpectedModelBehavior("Invalid response from the endpoint", body=body))
    assert text.startswith("Invalid response from the endpoint (response: {")
    assert "\n" not in text and len(text) < 300 and text.endswith("…)")


def test_other_failures_read_as_they_describe_themselves():
    assert failure_text(ValueError("bad gateway")) == "bad gateway"


class _Provider(Model):
    """A provider model whose request returns or raises `reply` as it is (a FunctionModel sizes and names it)."""

    def __init__(self, reply: ModelResponse | Exception) -> None:
        super().__init__()
        self.reply = reply

    async def request(self, messages, model_settings, model_request_parameters) -> ModelResponse:
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply

    @property
    def model_name(self) -> str:
        return "canned"

    @property
    def system(self) -> str:
        return "test"


def _read(reply: ModelResponse | Exception) -> ModelResponse:
    """What `ReplyReader` makes of a provider model whose request returns or raises `reply`."""
    return asyncio.run(ReplyReader(_Provider(reply)).request([], None, ModelRequestParameters()))


def test_a_reply_the_sdk_cannot_read_is_the_servers_failure_not_an_internal_error():
    with pytest.raises(pai_exc.ModelServerError, match=r"reply could not be read \(AttributeError: 'NoneType'"):
        _read(AttributeError("'NoneType' object has no attribute 'stop_reason'"))
    with pytest.raises(pai_exc.ModelServerError, match=r"a text part whose content is int"):
        _read(ModelResponse(parts=[TextPart(5)]))  # type: ignore[arg-type]
    with pytest.raises(pai_exc.ModelServerError, match=r"a tool call whose name"):
        _read(ModelResponse(parts=[ToolCallPart("search", 7, tool_call_id="c")]))  # type: ignore[arg-type]


def test_what_a_sound_reply_says_about_itself_is_read_as_unknown_when_it_is_not_of_its_kind():
    usage = RequestUsage(input_tokens="x", output_tokens=-3)  # type: ignore[arg-type]
    reply = ModelResponse(parts=[TextPart("ok")], usage=usage, model_name=5)  # type: ignore[arg-type]
    read = _read(reply)
    assert read.parts == [TextPart("ok")] and read.model_name is None
    assert (read.usage.input_tokens, read.usage.output_tokens) == (0, 0)
    sound = ModelResponse(parts=[TextPart("ok")], usage=RequestUsage(input_tokens=9), model_name="m")
    assert _read(sound).usage.input_tokens == 9

"""How a model call's failure reads to people (`funnel.retry.failure_text`)."""

from __future__ import annotations

from pydantic_ai import exceptions as pai_exc
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse

from funnel.retry import failure_text


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

"""Chat completions as plain OpenAI-compatible servers send them, read as the ones they mean (`LenientChatModel`).

A server that is not OpenAI's often leaves out what the SDK's types require, and PydanticAI refuses the whole response
("Invalid response from openai chat completions endpoint: 4 validation errors"), which ended the run at its first
request: a tool call without an `id` or a `type` (llama.cpp, older Ollama), its arguments as a JSON object instead of a
string, a completion without `id` or `object`, a message without `role`; a call in the legacy `function_call` field,
which the SDK keeps but PydanticAI never reads, is the message's one tool call. Each missing field is filled with the
one value it can have (a fresh id, `"function"`, the arguments as JSON text, `"assistant"`), and a `created` in
microseconds or nanoseconds is read as seconds (past the year 9999: as none) and a `usage` that counts no tokens as
none, before PydanticAI validates the response; anything else is refused as before. A completion with no choice at
all, sent with a 200 status (a proxy's `{"error": {"message": "Upstream provider returned an error", "code": 502}}`, or
`"choices": []`), is the server failure it reports, retried as a 5xx is: it ended the run with PydanticAI's validation
error, or an `IndexError` taken for bugsleuth's own. So is one whose choice is not an object (`"choices": ["x"]`,
`"choices": 5`), which ended it with an `AttributeError`.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from openai.types import chat
from pydantic_ai import exceptions as pai_exc
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.openai import OpenAIChatModel

from funnel.counts import is_token_count

__all__ = ("LenientChatModel", "completion_data", "lenient", "no_choice")


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _tool_call(call: dict[str, Any]) -> None:
    if not _text(call.get("id")):
        call["id"] = f"call_{uuid.uuid4().hex}"
    if call.get("type") is None:
        call["type"] = "function"
    function = call.get("function")
    if isinstance(function, dict) and not isinstance(function.get("arguments"), str):
        arguments = function.get("arguments")
        function["arguments"] = json.dumps({} if arguments is None else arguments)


_LAST_SECOND = 253_402_300_799
"""The last Unix second a timestamp can name (9999-12-31T23:59:59Z): PydanticAI refuses a later `created`."""


def _created(value: Any) -> int:
    """A completion's `created` as Unix seconds: milliseconds, microseconds or nanoseconds (as some servers send it)
    divided down, anything that names no time 0 (what PydanticAI reads as no timestamp), where a second past the
    year 9999 ended the run."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
        return 0
    for _ in range(3):
        if value <= _LAST_SECOND:
            break
        value /= 1000
    return int(value) if value <= _LAST_SECOND else 0


def _counts(usage: Any) -> bool:
    """Whether a completion's `usage` is an object whose token counts are counts."""
    return isinstance(usage, dict) and all(
        is_token_count(usage.get(k, 0)) for k in ("prompt_tokens", "completion_tokens", "total_tokens"))


def completion_data(data: dict[str, Any]) -> dict[str, Any]:
    """A chat completion's JSON data with every field a plain server left out filled with the one value it can have
    (changed in place, and returned)."""
    if not _text(data.get("id")):
        data["id"] = f"chatcmpl-{uuid.uuid4().hex}"
    if data.get("object") is None:
        data["object"] = "chat.completion"
    if not isinstance(data.get("model"), str):
        data["model"] = ""
    if data.get("created") is not None:  # PydanticAI reads a missing one as none itself
        data["created"] = _created(data["created"])
    if data.get("usage") is not None and not _counts(data["usage"]):
        data["usage"] = None  # what the reply says it cost is unknown; the reply itself is sound
    choices = data.get("choices")
    for i, choice in enumerate(choices if isinstance(choices, list) else []):
        if not isinstance(choice, dict):
            continue
        if choice.get("index") is None:
            choice["index"] = i
        message = choice.get("message")
        if not isinstance(message, dict):
            continue
        if message.get("role") is None:
            message["role"] = "assistant"
        if isinstance(message.get("function_call"), dict) and not message.get("tool_calls"):
            # the legacy single call (OpenAI's `functions` API), which servers built on it still send
            message["tool_calls"] = [{"function": message.pop("function_call")}]
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                _tool_call(call)
    return data


def no_choice(data: dict[str, Any]) -> str | None:
    """What a completion with no choice says about itself (a proxy's `{"error": {…}}` or `"choices": []` under a 200
    status), or None when it has a choice; a choice that is not an object (`"choices": ["x"]`) is none."""
    choices = data.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return None
    error = data.get("error")
    said = error.get("message") if isinstance(error, dict) else error
    code = error.get("code") if isinstance(error, dict) else None
    detail = " ".join(str(said).split())[:200] if said else ""
    return "the endpoint answered without a reply" + (f": {detail}" if detail else "") + (
        f" (code {code})" if code is not None else "")


class LenientChatModel(OpenAIChatModel):
    """`OpenAIChatModel` that reads a completion a plain server left fields out of (`completion_data`), and takes
    one without any choice for the server failure it reports (retried as a 5xx is)."""

    def _process_response(self, response: chat.ChatCompletion | str, **kwargs: Any) -> ModelResponse:
        """PydanticAI's reading of a completion that holds a choice (`no_choice`): PydanticAI reads the first choice
        before it validates the completion, so `"choices": 5` or `["x"]` ended the run with an `AttributeError`
        taken for bugsleuth's own."""
        if isinstance(response, chat.ChatCompletion):
            data = response.model_dump(warnings=False)
            if (failure := no_choice(data)) is not None:
                raise pai_exc.ModelServerError(self.model_name, failure, body=data.get("error"))
        return super()._process_response(response, **kwargs)

    def _validate_completion(self, response: chat.ChatCompletion) -> Any:
        """PydanticAI's documented hook for custom validation: the completion, its missing fields filled first."""
        repaired = completion_data(response.model_dump(warnings=False))
        return super()._validate_completion(chat.ChatCompletion.model_construct(**repaired))


def lenient(model: Model) -> Model:
    """`model` reading plain servers' completions leniently when it speaks Chat Completions (any provider PydanticAI
    serves through `OpenAIChatModel`); any other model as it is."""
    if type(model) is not OpenAIChatModel:
        return model
    reader = LenientChatModel.__new__(LenientChatModel)
    reader.__dict__.update(model.__dict__)  # the same provider, profile and settings; the subclass adds no state
    return reader

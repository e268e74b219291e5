"""Tool calls as plain servers send them, read as the tool calls they mean (`ToolCallRepair`).

A mediocre model behind a plain OpenAI-compatible server calls the tools in shapes no provider SDK reads: the name
prefixed (`functions.search`) or cased (`Search`, `readRange`); arguments sent as `null`, as an empty string or as a
JSON string inside the JSON string; an argument under the name another agent's tools give it (`file_path`, `start_line`,
`query`); an argument the tool does not take (`"explanation": "…"`) beside all those it needs; or no tool call at all
but the call written into the text, the way the model was trained to write it (`funnel.written_calls`). Refused each
time, such a model repeats itself until a budget stops the run. Each repair is made only when it names one offered tool
unambiguously; everything else reaches the tools as sent and is refused there with its reason.

Before any of that, a reply's text is made encodable (`encodable_response`): a server that cuts an emoji between
tokens sends half of its surrogate pair (`"\\ud83d"`), which JSON decodes to a lone surrogate that no later request,
trace or store can encode.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart, ThinkingPart, ToolCallPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from funnel.thinking import split_thinking
from funnel.written_calls import ARG_KEYS, calls_in_text, python_dict, snake_case, tool_name
from schemas.text import scrub, storable

__all__ = ("ToolCallRepair", "encodable_response", "repair_response", "tool_name")

_log = logging.getLogger(__name__)


def _offered(params: ModelRequestParameters) -> dict[str, ToolDefinition]:
    return {t.name: t for t in [*params.function_tools, *params.output_tools]}


def _decoded(args: str | dict[str, Any] | None) -> tuple[Any, bool]:
    """The value the arguments spell, and whether reading it took a repair (`null`, empty, JSON in a string, a
    Python literal)."""
    if args is None:
        return {}, True
    if not isinstance(args, str):
        return args, False
    text = args.strip()
    if text in ("", "null"):
        return {}, True
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than a parser goes
        value = python_dict(text)
        return (value, True) if value is not None else (None, False)
    if value is None:
        return {}, True
    if isinstance(value, str):
        try:
            return json.loads(value), True
        except (ValueError, RecursionError):
            return None, False
    return value, False


def _unwrapped(value: dict[str, Any], tool: ToolDefinition) -> dict[str, Any] | None:
    """The arguments of a call sent whole as its own arguments (`{"name": "search", "arguments": {…}}`), or None."""
    inner = [value[k] for k in ARG_KEYS if k in value]
    if set(value) - {"name", *ARG_KEYS} or len(inner) != 1 or not isinstance(inner[0], dict | str):
        return None
    if tool_name(str(value.get("name", tool.name)), {tool.name: tool}) != tool.name:
        return None
    decoded, _ = _decoded(inner[0]) if isinstance(inner[0], str) else (inner[0], False)
    return decoded if isinstance(decoded, dict) else None


_SYNONYMS = {"query": "pattern", "regex": "pattern", "search": "pattern", "file": "path", "filename": "path",
             "filepath": "path", "dir": "path", "directory": "path", "folder": "path", "symbol": "name"}
"""Names other agents' tools give the arguments ours call `pattern`, `path` and `name`."""


def _renamed(value: dict[str, Any], known: dict[str, Any]) -> dict[str, Any]:
    """`value` with each argument the tool does not take renamed to the one parameter it means, when that parameter
    is not sent: one of the words of its name (`file_path`, `start_line`, `lineEnd`, `symbol_name`) or a synonym
    (`query` for `pattern`, `directory` for `path`)."""
    out = dict(value)
    for key in [k for k in value if k not in known]:
        words = snake_case(key).replace("-", "_").split("_")
        means = {p for p in known if p not in out and (p in words or _SYNONYMS.get("".join(words)) == p)}
        if len(means) == 1:
            out[means.pop()] = out.pop(key)
    return out


def _arguments(args: str | dict[str, Any] | None, tool: ToolDefinition) -> str | dict[str, Any] | None:
    """The arguments a tool call means: `null`, an empty string, a JSON string holding an object or a Python literal
    read as that object; a whole call sent as its arguments read as that call's; an argument under another agent's name
    for a parameter the call leaves out renamed to it (`file_path` → `path`, `start_line` → `start`, `query` →
    `pattern`); an argument the tool does not take dropped when every argument it needs is there. The arguments as sent
    when they need no reading (and when they cannot be read: the tool refuses them with its reason)."""
    value, repaired = _decoded(args)
    if not isinstance(value, dict):
        return args
    schema = tool.parameters_json_schema
    known = schema.get("properties") or {}
    if not set(value) & set(known) and (inner := _unwrapped(value, tool)) is not None:
        value, repaired = inner, True
    if schema.get("additionalProperties") is False and (renamed := _renamed(value, known)) != value:
        value, repaired = renamed, True
    if schema.get("additionalProperties") is False and any(k not in known for k in value):
        kept = {k: v for k, v in value.items() if k in known}
        if all(r in kept for r in schema.get("required") or ()):
            value, repaired = kept, True
    return value if repaired else args


def _unique_ids(response: ModelResponse) -> ModelResponse:
    """`response` with a fresh id for each tool call whose id an earlier call of it has (servers that number every
    call `call_0`, or send `0` for all): PydanticAI refuses the whole response otherwise."""
    seen: set[str] = set()
    parts: list[ModelResponsePart] = []
    for part in response.parts:
        if isinstance(part, ToolCallPart):
            if part.tool_call_id in seen:
                part = dataclasses.replace(part, tool_call_id=f"call_{uuid.uuid4().hex}")
            seen.add(part.tool_call_id)
        parts.append(part)
    return dataclasses.replace(response, parts=parts) if parts != response.parts else response


def repair_response(response: ModelResponse, params: ModelRequestParameters) -> ModelResponse:
    """`response` with its tool calls read as the offered tools they mean, each under an id of its own (the same
    response when nothing needed reading)."""
    response = _unique_ids(response)
    offered = _offered(params)
    if not offered:
        return response
    parts: list[ModelResponsePart] = []
    changed = False
    has_calls = any(isinstance(p, ToolCallPart) for p in response.parts)
    for part in response.parts:
        if isinstance(part, ToolCallPart) and (name := tool_name(part.tool_name, offered)):
            args = _arguments(part.args, offered[name])
            if name != part.tool_name or args is not part.args:
                _log.info("read the tool call %r %r as %r %r", part.tool_name, part.args, name, args)
                part = dataclasses.replace(part, tool_name=name, args=args)
                changed = True
        elif isinstance(part, TextPart) and not has_calls and (params.function_tools or not params.allow_text_output):
            calls, rest = calls_in_text(part.content, offered)
            if calls:
                _log.info("read %d tool call(s) written in the reply's text", len(calls))
                if rest.strip():
                    parts.append(TextPart(rest.strip()))
                parts += [ToolCallPart(name, _arguments(args, offered[name]), tool_call_id=f"call_{uuid.uuid4().hex}")
                          for name, args in calls]  # fmt: skip
                changed = True
                continue
        parts.append(part)
    return dataclasses.replace(response, parts=parts) if changed else response


def encodable_response(response: ModelResponse) -> ModelResponse:
    """`response` with every lone surrogate (and NUL) of its text, thinking and tool calls replaced by U+FFFD
    (`schemas.text.storable`); the same response when there is none."""
    parts: list[ModelResponsePart] = []
    for part in response.parts:
        if isinstance(part, TextPart | ThinkingPart):
            part = dataclasses.replace(part, content=storable(part.content))
        elif isinstance(part, ToolCallPart):
            part = dataclasses.replace(part, tool_name=storable(part.tool_name), args=scrub(part.args),
                                       tool_call_id=part.tool_call_id and storable(part.tool_call_id))
        parts.append(part)
    return dataclasses.replace(response, parts=parts) if parts != response.parts else response


class ToolCallRepair(WrapperModel):
    """A model whose responses' tool calls are read as the offered tools they mean (`repair_response`), once their
    text is encodable (`encodable_response`) and the thinking written into it is taken out (`split_thinking`)."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        return repair_response(split_thinking(encodable_response(response)), model_request_parameters)

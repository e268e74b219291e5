"""Tool calls as plain servers send them, read as the tool calls they mean (`ToolCallRepair`).

A mediocre model behind a plain OpenAI-compatible server calls the tools in shapes no provider SDK reads: the
name prefixed (`functions.search`) or cased (`Search`, `readRange`); arguments sent as `null`, as an empty string
or as a JSON string inside the JSON string; an argument under the name another agent's tools give it (`file_path`,
`start_line`, `query`); an argument the tool does not take (`"explanation": "…"`) beside all those it needs; or no
tool call at all but its JSON in the text, the way the model was trained to write it (`<tool_call>{…}</tool_call>`,
`[TOOL_CALLS][…]`, `<|python_tag|>{…}`, a bare object or a ```json fence), or as the Python call it was trained
to write (Llama 3.2's and 4's `[search(pattern="x")]`, Gemma's ```tool_code fence). Refused
each time, such a model repeats itself until a budget stops the run. Each repair is made only when it names one
offered tool unambiguously; everything else reaches the tools as sent and is refused there with its reason.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import logging
import re
import uuid
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from funnel.thinking import split_thinking

__all__ = ("ToolCallRepair", "repair_response", "tool_name")

_log = logging.getLogger(__name__)

_WRAPPED = re.compile(
    r"<tool_call>\s*(?P<a>.*?)\s*</tool_call>"  # Hermes, Qwen
    r"|\[TOOL_CALLS\]\s*(?P<b>\[.*\]|\{.*\})"  # Mistral
    r"|<\|python_tag\|>\s*(?P<c>\{.*\})"  # Llama 3.1
    r"|```(?:json)?\s*\n(?P<d>[\[{].*?)\n\s*```",  # a fenced object
    re.S,
)
_ARG_KEYS = ("arguments", "parameters", "args", "input")
_PYTHON_FENCE = re.compile(r"```(?:tool_code|tool_call|python|py)?[ \t]*\n(?P<body>.*?)\n\s*```", re.S)
_PYTHON_TAGS = re.compile(r"<\|python_(?:start|end)\|>|<\|eom_id\|>|<\|eot_id\|>")
_JSON_WORDS = {"true": True, "false": False, "null": None}


def _offered(params: ModelRequestParameters) -> dict[str, ToolDefinition]:
    return {t.name: t for t in [*params.function_tools, *params.output_tools]}


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def tool_name(name: str, offered: dict[str, ToolDefinition]) -> str | None:
    """The offered tool `name` means (itself, without a `functions.` or `tools:` prefix, in any case or camelCase),
    or None when it means none or several."""
    if name in offered:
        return name
    bare = re.split(r"[.:/]", name.strip())[-1].replace("-", "_")
    found = {t for t in offered if _snake(bare) == t.lower() or bare.lower() == t.lower()}
    return found.pop() if len(found) == 1 else None


def _literal(node: ast.expr) -> Any:
    """The value a Python argument spells: a literal, or JSON's `true`/`false`/`null` as a model writes them."""
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    return ast.literal_eval(node)


def _python_dict(text: str) -> dict[str, Any] | None:
    """The object a Python literal spells where JSON was due (`{'path': 'a.py', 'start': 4,}`: single quotes, a
    trailing comma, `True`/`None` or JSON's words), or None."""
    try:
        node = ast.parse(text, mode="eval").body
        if not isinstance(node, ast.Dict) or not all(isinstance(k, ast.Constant) for k in node.keys):
            return None
        return {k.value: _literal(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[union-attr]
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None


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
        value = _python_dict(text)
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
    inner = [value[k] for k in _ARG_KEYS if k in value]
    if set(value) - {"name", *_ARG_KEYS} or len(inner) != 1 or not isinstance(inner[0], dict | str):
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
        words = _snake(key).replace("-", "_").split("_")
        means = {p for p in known if p not in out and (p in words or _SYNONYMS.get("".join(words)) == p)}
        if len(means) == 1:
            out[means.pop()] = out.pop(key)
    return out


def _arguments(args: str | dict[str, Any] | None, tool: ToolDefinition) -> str | dict[str, Any] | None:
    """The arguments a tool call means: `null`, an empty string, a JSON string holding an object or a Python literal
    read as that object; a whole call sent as its arguments read as that call's; an argument under another agent's name for a parameter the call leaves out renamed to it
    (`file_path` → `path`, `start_line` → `start`, `query` → `pattern`); an argument the tool does not take dropped
    when every argument it needs is there. The arguments as sent when they need no reading (and when they cannot be
    read: the tool refuses them with its reason)."""
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


def _calls_in_text(text: str, offered: dict[str, ToolDefinition]) -> tuple[list[tuple[str, Any]], str]:
    """The tool calls written into a reply's text, and the text left around them."""
    found: list[tuple[str, Any]] = []
    rest = text
    spans = [(m.span(), next(g for g in m.groups() if g is not None)) for m in _WRAPPED.finditer(text)]
    stripped = text.strip()
    if not spans and stripped[:1] in "[{":
        spans = [((0, len(text)), stripped)]
    for span, body in reversed(spans):
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or a degenerate reply nested deeper than a parser goes
            if (value := _python_dict(body)) is None:
                continue
        calls = value if isinstance(value, list) else [value]
        named = []
        for call in calls:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                break
            name = tool_name(call["name"], offered)
            args = next((call[k] for k in _ARG_KEYS if k in call), {})
            if name is None or not isinstance(args, (dict, str)):
                break
            named.append((name, args))
        else:
            found[:0] = named
            rest = rest[: span[0]] + rest[span[1] :]
    return found, rest


def _python_call(node: ast.expr, offered: dict[str, ToolDefinition]) -> tuple[str, dict[str, Any]] | None:
    """The offered tool call a Python call expression spells (`read_range("a.py", start=4)`, `print(default_api.
    search(pattern="x"))`): positional arguments in the order of the tool's parameters; None when it spells none."""
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "print" and len(node.args) == 1:
        node = node.args[0]
    if not isinstance(node, ast.Call) or (name := tool_name(ast.unparse(node.func), offered)) is None:
        return None
    params = list((offered[name].parameters_json_schema.get("properties") or {}))
    if len(node.args) > len(params) or any(k.arg is None for k in node.keywords):
        return None
    try:
        args = {p: _literal(a) for p, a in zip(params, node.args, strict=False)}
        args |= {k.arg: _literal(k.value) for k in node.keywords if k.arg}
    except (ValueError, TypeError, SyntaxError, RecursionError):  # not a literal, unhashable, nested too deep
        return None
    return name, args


def _python_calls(text: str, offered: dict[str, ToolDefinition]) -> tuple[list[tuple[str, Any]], str]:
    """The tool calls a reply writes as Python (a list of calls, or calls one per line, bare or in a fence), and the
    text left around them; none unless every call in the code names an offered tool."""
    spans = [(m.span(), m.group("body")) for m in _PYTHON_FENCE.finditer(text)] or [((0, len(text)), text)]
    for (start, end), body in spans:
        try:
            tree = ast.parse(_PYTHON_TAGS.sub("", body).strip())
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if not tree.body or not all(isinstance(s, ast.Expr) for s in tree.body):
            continue
        nodes = [e for s in tree.body if isinstance(s, ast.Expr)
                 for e in (s.value.elts if isinstance(s.value, ast.List | ast.Tuple) else [s.value])]  # fmt: skip
        calls = [_python_call(n, offered) for n in nodes]
        if calls and all(calls):
            return [c for c in calls if c], text[:start] + text[end:]
    return [], text


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
            calls, rest = _calls_in_text(part.content, offered)
            if not calls:
                calls, rest = _python_calls(part.content, offered)
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


class ToolCallRepair(WrapperModel):
    """A model whose responses' tool calls are read as the offered tools they mean (`repair_response`), once the
    thinking written into their text is taken out of it (`split_thinking`)."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        return repair_response(split_thinking(response), model_request_parameters)

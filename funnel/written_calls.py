"""Tool calls a model writes into its reply's text instead of sending them as tool calls, read as the calls they spell
(`calls_in_text`), and the reading of a tool's name (`tool_name`) they share with `funnel.tool_calls`.

A model behind a plain server that does not parse its tool-call format writes the call the way it was trained to: as
JSON (`<tool_call>{…}</tool_call>` from Hermes and Qwen, `[TOOL_CALLS][…]` from Mistral, `<|python_tag|>{…}` from Llama
3.1, a bare object or a ```json fence), as Python (`[search(pattern="x")]` from Llama 3.2 and 4, a ```tool_code fence
from Gemma), or as XML (`<function=search><parameter=pattern>…` from Qwen3-Coder, `<invoke name="search"><parameter
name="pattern">…` in Claude's legacy format), or on gpt-oss's commentary channel. A call is read only when it names an
offered tool; Python and XML only when every call in the code does, and Python's arguments only as literals (nothing
runs).
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from typing import Any

from pydantic_ai.tools import ToolDefinition

__all__ = ("ARG_KEYS", "calls_in_text", "python_dict", "snake_case", "tool_name")

_WRAPPED = re.compile(  # no quantifier next to a lazy body: a reply of `<tool_call>` and 8,000 newlines backtracked
    r"<tool_call>(?P<a>.*?)</tool_call>"  # Hermes, Qwen
    r"|\[TOOL_CALLS\]\s*(?P<b>\[.*\]|\{.*\})"  # Mistral
    r"|<\|python_tag\|>\s*(?P<c>\{.*\})"  # Llama 3.1
    r"|```(?:json)?[ \t]*\n(?P<d>[\[{].*?)^[ \t]*```",  # a fenced object
    re.S | re.M,
)
ARG_KEYS = ("arguments", "parameters", "args", "input")
_PYTHON_FENCE = re.compile(r"```(?:tool_code|tool_call|python|py)?[ \t]*\n(?P<body>.*?)^[ \t]*```", re.S | re.M)
_PYTHON_TAGS = re.compile(r"<\|python_(?:start|end)\|>|<\|eom_id\|>|<\|eot_id\|>")
_JSON_WORDS = {"true": True, "false": False, "null": None}
MAX_TEXT = 32_000
"""Characters of a reply beyond which it is prose, not calls written into text (a call is short): the readers'
patterns cost time in the number of openings times the length, which a degenerate reply of repeated tags makes
quadratic."""
_HARMONY_CALL = re.compile(
    r"to=(?:functions\.)?([A-Za-z_][\w.-]{0,100})[^<\n]{0,100}(?:<\|channel\|>[^<\n]{0,100})?"
    r"(?:<\|constrain\|>[^<\n]{0,40})?<\|message\|>(.*?)(?:<\|call\|>|<\|end\|>|<\|return\|>|\Z)", re.S)
_HARMONY_TOKEN = re.compile(r"<\|(?:start|end|channel|call|return)\|>(?:assistant|commentary|analysis)?")
_XML_BLOCK = re.compile(r"<tool_call>\s*(<function=.*?)</tool_call>|<function_calls>(.*?)</function_calls>", re.S)
_XML_CALL = re.compile(r"<function=([^>\s]+)>(.*?)</function>|<invoke name=\"([^\"]+)\">(.*?)</invoke>", re.S)
_XML_PARAMETER = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?</parameter>|<parameter name=\"([^\"]+)\">(.*?)</parameter>",
                            re.S)  # fmt: skip


def snake_case(name: str) -> str:
    """`name` in snake_case (`readRange` → `read_range`)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def tool_name(name: str, offered: dict[str, ToolDefinition]) -> str | None:
    """The offered tool `name` means (itself, without a `functions.` or `tools:` prefix, in any case or camelCase),
    or None when it means none or several."""
    if name in offered:
        return name
    bare = re.split(r"[.:/]", name.strip())[-1].replace("-", "_")
    found = {t for t in offered if snake_case(bare) == t.lower() or bare.lower() == t.lower()}
    return found.pop() if len(found) == 1 else None


def _literal(node: ast.expr) -> Any:
    """The value a Python argument spells: a literal, or JSON's `true`/`false`/`null` as a model writes them."""
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    return ast.literal_eval(node)


def _parsed(text: str, mode: str = "exec") -> Any:
    """`ast.parse` without the `SyntaxWarning`s a model's prose raises (`1if`, `"\\d"`): they would reach the
    service's stderr, not the model."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return ast.parse(text, mode=mode)


def python_dict(text: str) -> dict[str, Any] | None:
    """The object a Python literal spells where JSON was due (`{'path': 'a.py', 'start': 4,}`: single quotes, a
    trailing comma, `True`/`None` or JSON's words), or None."""
    try:
        node = _parsed(text, mode="eval").body
        if not isinstance(node, ast.Dict) or not all(isinstance(k, ast.Constant) for k in node.keys):
            return None
        return {k.value: _literal(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[union-attr]
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None


def _object(body: str) -> Any:
    """The value a call's JSON spells, or the object its Python literal spells where JSON was due (`python_dict`);
    None when it spells neither (a degenerate reply nested deeper than a parser goes included)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return python_dict(body)


def _json_calls(text: str, offered: dict[str, ToolDefinition]) -> tuple[list[tuple[str, Any]], str]:
    """The tool calls written into a reply's text, and the text left around them."""
    found: list[tuple[str, Any]] = []
    rest = text
    spans = [(m.span(), next(g for g in m.groups() if g is not None).strip()) for m in _WRAPPED.finditer(text)]
    stripped = text.strip()
    if not spans and stripped[:1] in "[{":
        spans = [((0, len(text)), stripped)]
    for span, body in reversed(spans):
        if (value := _object(body)) is None:
            continue
        calls = value if isinstance(value, list) else [value]
        named = []
        for call in calls:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                break
            name = tool_name(call["name"], offered)
            args = next((call[k] for k in ARG_KEYS if k in call), {})
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
            tree = _parsed(_PYTHON_TAGS.sub("", body).strip())
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


def _xml_value(text: str, schema: dict[str, Any]) -> Any:
    """A parameter's text as the value its schema types it (`4` for an integer, `true` for a boolean)."""
    if schema.get("type") in (None, "string"):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _xml_calls(text: str, offered: dict[str, ToolDefinition]) -> tuple[list[tuple[str, Any]], str]:
    """The tool calls a reply writes as XML: Qwen3-Coder's `<tool_call><function=search><parameter=pattern>x
    </parameter></function></tool_call>`, Claude's legacy `<function_calls><invoke name="search"><parameter
    name="pattern">x</parameter></invoke></function_calls>`; the text left around them."""
    found: list[tuple[str, Any]] = []
    rest = text
    for block in reversed(list(_XML_BLOCK.finditer(text))):
        calls = []
        for call in _XML_CALL.finditer(block.group(1) or block.group(2)):
            name = tool_name(call.group(1) or call.group(3), offered)
            if name is None:
                break
            props = offered[name].parameters_json_schema.get("properties") or {}
            params = ((p.group(1) or p.group(3), p.group(2) if p.group(1) else p.group(4))
                      for p in _XML_PARAMETER.finditer(call.group(2) or call.group(4) or ""))  # fmt: skip
            calls.append((name, {k: _xml_value(v, props.get(k) or {}) for k, v in params}))
        else:
            if calls:
                found[:0] = calls
                rest = rest[: block.start()] + rest[block.end() :]
    return found, rest


def _harmony_calls(text: str, offered: dict[str, ToolDefinition]) -> tuple[list[tuple[str, Any]], str]:
    """The tool calls gpt-oss writes on its commentary channel when a server does not parse its harmony format
    (`<|channel|>commentary to=functions.search <|constrain|>json<|message|>{…}<|call|>`); the text left around them,
    without the format's tokens."""
    calls = []
    for m in _HARMONY_CALL.finditer(text):
        body = m.group(2).strip()
        args = _object(body) if body else {}
        if (name := tool_name(m.group(1), offered)) is None or not isinstance(args, dict):
            return [], text
        calls.append((name, args))
    return calls, _HARMONY_TOKEN.sub("", _HARMONY_CALL.sub("", text)) if calls else text


def calls_in_text(text: str, offered: dict[str, ToolDefinition]) -> tuple[list[tuple[str, Any]], str]:
    """The tool calls written into a reply's text as JSON, XML, harmony or Python, as `(tool, arguments)`, and the
    text left around them; none, and the text itself, when it spells no call of an offered tool (or is longer than
    `MAX_TEXT`)."""
    if len(text) > MAX_TEXT:
        return [], text
    for reader in (_json_calls, _xml_calls, _harmony_calls, _python_calls):
        calls, rest = reader(text, offered)
        if calls:
            return calls, rest
    return [], text

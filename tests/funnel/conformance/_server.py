"""A scripted model server on 127.0.0.1 that speaks the real wire protocols, for the conformance suite.

One stdlib HTTP server answers both OpenAI Chat Completions (`POST /v1/chat/completions`, JSON or SSE when the
request says `stream: true`) and Anthropic Messages (`POST /v1/messages`, JSON or SSE). What it answers is a
`Script`: per role (the explorer, the structurer) and per phase (judged from the tools offered, as a real model
would see them), a list of `Turn`s consumed in order, the last one repeating. A turn is either a model reply
(text, tool calls, reasoning, finish reason) or a transport behaviour (an HTTP error with its body and headers, a
delay, a connection reset mid-response, a server that never answers). Every HTTP attempt is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from funnel import phase_of_tools

Protocol = Literal["openai", "anthropic"]
Role = Literal["explorer", "structurer"]


@dataclass(frozen=True)
class Call:
    """One tool call in a reply; `args` as a string is sent verbatim (malformed JSON included)."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """One HTTP answer: a model reply, or a transport misbehaviour."""

    text: str | None = None
    calls: Sequence[Call] = ()
    reasoning: str | None = None
    """`reasoning_content` (OpenAI-compatible servers) or a thinking block (Anthropic), before the rest."""
    finish: str | None = None
    """Chat Completions finish reason (`stop`, `tool_calls`, `length`, `content_filter`); mapped for Anthropic.
    Default from content."""
    refusal: str | None = None
    """A refusal: Chat Completions' `message.refusal` (no content), Anthropic's `stop_reason: refusal`."""
    status: int = 200
    body: dict[str, Any] | None = None
    """A JSON body sent as is with a 200 status, instead of a reply (a proxy's error, a completion with no choice)."""
    raw: bytes | None = None
    """Bytes sent as they are with a 200 status, as the stream or the JSON the request asked for (a malformed reply)."""
    error: dict[str, Any] | None = None
    """Error body for a non-200 status (default: a server error in the protocol's shape)."""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    """Seconds to wait before answering."""
    reset: bool = False
    """Send the headers and part of the body, then drop the connection."""
    hang: bool = False
    """Never answer (until the server stops)."""
    call_id: str | None = None
    """The id every tool call of the reply carries (a server that numbers each call `call_0`); default: unique."""
    legacy: bool = False
    """Chat Completions JSON with the one tool call in the legacy `function_call` field, as servers built on OpenAI's
    old `functions` API send it."""
    bare: bool = False
    """Chat Completions JSON as a plain server may send it: no completion `id` or `object`, no message `role`, tool
    calls without `id` or `type`, their arguments a JSON object rather than a string."""


TurnSource = Turn | Callable[["Seen"], Turn]


@dataclass
class Seen:
    """One request as the server received it."""

    protocol: Protocol
    role: Role
    phase: str
    tools: list[str]
    body: dict[str, Any]
    text: str
    """Every text of the conversation (system, user, tool results), joined."""
    last: str
    """The text of the last message (the newest tool results or user prompt)."""
    at: float = field(default_factory=time.monotonic)


@dataclass
class Script:
    """What the model does: turns per phase for the explorer, a list for the structurer."""

    explore: list[TurnSource] = field(default_factory=list)
    deep_dive: list[TurnSource] = field(default_factory=list)
    output: list[TurnSource] = field(default_factory=list)
    structurer: list[TurnSource] = field(default_factory=list)
    first: list[TurnSource] = field(default_factory=list)
    """Turns served before any phase list, whatever the phase (transport behaviours of the first requests)."""

    def __post_init__(self) -> None:
        self._used: dict[str, int] = {}
        self._lock = threading.Lock()

    def next(self, seen: Seen) -> Turn:
        with self._lock:
            key = "first" if self._used.get("first", 0) < len(self.first) else (
                "structurer" if seen.role == "structurer" else seen.phase)
            turns = getattr(self, key)
            i = self._used.get(key, 0)
            self._used[key] = i + 1
        if not turns:
            raise LookupError(f"the script has no turn for {key}")
        source = turns[min(i, len(turns) - 1)]
        return source(seen) if callable(source) else source


class ModelServer:
    """The scripted server; a context manager that binds 127.0.0.1 on an ephemeral port."""

    def __init__(self, script: Script, *, model: str = "fake-model") -> None:
        self.script = script
        self.model = model
        self.requests: list[Seen] = []
        self.stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                server._handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def of(self, role: Role) -> list[Seen]:
        """The requests of one role, in arrival order."""
        return [r for r in self.requests if r.role == role]

    # -- one request ---------------------------------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length") or 0)) or b"{}")
        protocol: Protocol = "anthropic" if h.path.rstrip("/").endswith("/messages") else "openai"
        seen = _seen(protocol, body)
        self.requests.append(seen)
        turn = self.script.next(seen)
        if turn.hang:
            self.stopping.wait(60)
            h.close_connection = True
            return
        if turn.delay_s and self.stopping.wait(turn.delay_s):
            return
        if turn.status != 200:
            payload = turn.error or _default_error(protocol, turn.status)
            return _send(h, turn.status, "application/json", json.dumps(payload).encode(), turn.headers)
        if turn.body is not None:
            return _send(h, 200, "application/json", json.dumps(turn.body).encode(), turn.headers)
        stream = bool(body.get("stream"))
        if turn.raw is not None:
            return _send(h, 200, "text/event-stream" if stream else "application/json", turn.raw, turn.headers)
        if protocol == "openai":
            data = _openai_sse(turn, self.model) if stream else json.dumps(openai_json(turn, self.model)).encode()
        else:
            data = (anthropic_sse(turn, self.model) if stream
                    else json.dumps(_anthropic_json(turn, self.model)).encode())  # fmt: skip
        kind = "text/event-stream" if stream else "application/json"
        if turn.reset:
            return _send_then_reset(h, kind, data)
        _send(h, 200, kind, data, turn.headers)


def _seen(protocol: Protocol, body: dict[str, Any]) -> Seen:
    if protocol == "openai":
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        texts = [_text_of(m.get("content")) for m in body.get("messages", [])]
    else:
        tools = [t["name"] for t in body.get("tools") or [] if "name" in t]
        texts = [_text_of(body.get("system"))] + [_text_of(m.get("content")) for m in body.get("messages", [])]
    role: Role = "structurer" if "final_result" in tools else "explorer"
    return Seen(protocol=protocol, role=role, phase=phase_of_tools(tools).value, tools=tools, body=body,
                text="\n".join(texts), last=texts[-1] if texts else "")  # fmt: skip


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c) for c in content)
    if isinstance(content, dict):
        return "\n".join(_text_of(content.get(k)) for k in ("text", "content") if content.get(k) is not None)
    return str(content)


def _args_text(call: Call) -> str:
    return call.args if isinstance(call.args, str) else json.dumps(call.args)


def _finish(turn: Turn) -> str:
    if turn.refusal is not None and turn.finish is None:
        return "refusal"
    return turn.finish or ("tool_calls" if turn.calls else "stop")


def _openai_finish(turn: Turn) -> str:
    """Chat Completions has no refusal finish reason: a refused reply ends with `stop`."""
    return "stop" if _finish(turn) == "refusal" else _finish(turn)


_USAGE = {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960}


def openai_json(turn: Turn, model: str) -> dict[str, Any]:
    """A reply as the Chat Completions JSON an OpenAI-compatible server answers a request without streaming with."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if turn.refusal is not None:
        message["refusal"] = turn.refusal
    if turn.reasoning is not None:
        message["reasoning_content"] = turn.reasoning
    if turn.calls:
        message["tool_calls"] = [
            {"id": turn.call_id or f"call_{i}_{time.monotonic_ns()}", "type": "function",
             "function": {"name": c.name, "arguments": _args_text(c)}}
            for i, c in enumerate(turn.calls)
        ]  # fmt: skip
    data = {"id": f"chatcmpl-{time.monotonic_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message, "finish_reason": _openai_finish(turn)}],
            "usage": _USAGE}  # fmt: skip
    if turn.legacy and message.get("tool_calls"):
        message["function_call"] = message.pop("tool_calls")[0]["function"]
        data["choices"][0]["finish_reason"] = "function_call"
    if turn.bare:
        del data["id"], data["object"], message["role"]
        for call, c in zip(message.get("tool_calls", []), turn.calls):
            del call["id"], call["type"]
            call["function"]["arguments"] = c.args if isinstance(c.args, dict) else call["function"]["arguments"]
    return data


def _sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


def _openai_sse(turn: Turn, model: str) -> bytes:
    base = {"id": f"chatcmpl-{time.monotonic_ns()}", "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": usage}

    events: list[tuple[str | None, dict[str, Any] | str]] = [(None, chunk({"role": "assistant", "content": ""}))]
    if turn.reasoning is not None:
        events.append((None, chunk({"reasoning_content": turn.reasoning})))
    if turn.text:
        events.append((None, chunk({"content": turn.text})))
    if turn.refusal is not None:
        events.append((None, chunk({"refusal": turn.refusal})))
    for i, c in enumerate(turn.calls):
        call = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": c.name, "arguments": ""}}
        events.append((None, chunk({"tool_calls": [call]})))
        events.append((None, chunk({"tool_calls": [{"index": i, "function": {"arguments": _args_text(c)}}]})))
    events.append((None, chunk({}, _openai_finish(turn))))
    events.append((None, {**base, "choices": [], "usage": _USAGE}))
    events.append((None, "[DONE]"))
    return _sse(events)


_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "refusal": "refusal",
         "content_filter": "refusal"}


def _anthropic_blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        blocks.append({"type": "thinking", "thinking": turn.reasoning, "signature": "c2lnbmF0dXJl"})
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for i, c in enumerate(turn.calls):
        args: Any = c.args
        if isinstance(args, str):  # malformed JSON cannot be an object in a JSON reply: what is sent is the raw text
            try:
                args = json.loads(args)
            except ValueError:
                args = {"__raw__": args}
        blocks.append({"type": "tool_use", "id": f"toolu_{i}_{time.monotonic_ns()}", "name": c.name, "input": args})
    return blocks


def _anthropic_json(turn: Turn, model: str) -> dict[str, Any]:
    return {"id": f"msg_{time.monotonic_ns()}", "type": "message", "role": "assistant", "model": model,
            "content": _anthropic_blocks(turn), "stop_reason": _STOP.get(_finish(turn), "end_turn"),
            "stop_sequence": None, "stop_details": _stop_details(turn),
            "usage": {"input_tokens": 900, "output_tokens": 60}}  # fmt: skip


def _stop_details(turn: Turn) -> dict[str, Any] | None:
    """A refusal's explanation, where Anthropic sends it."""
    return {"type": "refusal", "category": None, "explanation": turn.refusal} if turn.refusal is not None else None


def anthropic_sse(turn: Turn, model: str) -> bytes:
    """A reply as the Messages event stream an Anthropic-compatible server answers a request with."""
    message = {"id": f"msg_{time.monotonic_ns()}", "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 900, "output_tokens": 1}}  # fmt: skip
    events: list[tuple[str | None, dict[str, Any] | str]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        for d in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    if turn.reasoning is not None:
        block({"type": "thinking", "thinking": "", "signature": ""},
              [{"type": "thinking_delta", "thinking": turn.reasoning},
               {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}])  # fmt: skip
    if turn.text:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": turn.text}])
    for i, c in enumerate(turn.calls):
        block({"type": "tool_use", "id": f"toolu_{i}_{time.monotonic_ns()}", "name": c.name, "input": {}},
              [{"type": "input_json_delta", "partial_json": _args_text(c)}])  # fmt: skip
    stop = {"stop_reason": _STOP.get(_finish(turn), "end_turn"), "stop_sequence": None,
            "stop_details": _stop_details(turn)}
    events.append(("message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 60}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def _default_error(protocol: Protocol, status: int) -> dict[str, Any]:
    if protocol == "anthropic":
        kind = {429: "rate_limit_error", 529: "overloaded_error", 400: "invalid_request_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": f"scripted {status}"}}
    kind = "rate_limit_exceeded" if status == 429 else "server_error"
    return {"error": {"message": f"scripted {status}", "type": kind, "code": None}}


def _send(h: BaseHTTPRequestHandler, status: int, kind: str, data: bytes, headers: dict[str, str]) -> None:
    h.send_response(status)
    h.send_header("Content-Type", kind)
    h.send_header("Content-Length", str(len(data)))
    for k, v in headers.items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(data)
    h.wfile.flush()


def _send_then_reset(h: BaseHTTPRequestHandler, kind: str, data: bytes) -> None:
    h.send_response(200)
    h.send_header("Content-Type", kind)
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data[: max(1, len(data) // 3)])
    h.wfile.flush()
    h.close_connection = True
    try:
        h.connection.shutdown(2)
    except OSError:
        pass

"""The HTTP provider path against a fake OpenAI-compatible server on 127.0.0.1 (no real model is reached)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from openai import AsyncOpenAI
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from funnel.explorers import resolve_explorer
from funnel.explorers.agent import ModelExplorer
from funnel import investigate
from funnel.limits import Limits
from funnel.retry import ReplyReader
from schemas.enums import StopReason
from tests.funnel.harness_support import FIXTURE_REPO, GOOD_REPORT, REPORT


def _tool_call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    msg = {"role": "assistant", "content": None,
           "tool_calls": [{"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}  # fmt: skip
    return {"message": msg, "finish_reason": "tool_calls"}


def _text(content: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}


class FakeOpenAI:
    """A chat.completions server returning scripted choices (or a fixed HTTP status), recording every request."""

    def __init__(self, choices: list[dict[str, Any]] | None = None, status: int = 200, model: str = "fake",
                 error_code: str | None = None) -> None:  # fmt: skip
        self.choices = list(choices or [])
        self.error_code = error_code
        self.status = status
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.served = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                if fake.status != 200:
                    payload = {"error": {"message": "server on fire", "type": "server_error", "code": fake.error_code}}
                    code = fake.status
                else:
                    i = min(fake.served, len(fake.choices) - 1)
                    fake.served += 1
                    payload = {"id": f"chatcmpl-{len(fake.requests)}", "object": "chat.completion", "created": 0,
                               "model": fake.model, "choices": [{"index": 0, **fake.choices[i]}],
                               "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}}  # fmt: skip
                    code = 200
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


HAPPY = [
    _tool_call("search", {"pattern": "apply_discount", "fixed_strings": True}, 1),
    _tool_call("begin_deep_dive", {"suspects": ["shop/pricing.py"]}, 2),
    _tool_call("read_range", {"path": "shop/pricing.py", "start": 4, "end": 8}, 3),
    _tool_call("finish_deep_dive", {}, 4),
    _text(GOOD_REPORT),
]


def _model(fake: FakeOpenAI) -> OpenAIChatModel:
    client = AsyncOpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
    return OpenAIChatModel(fake.model, provider=OpenAIProvider(openai_client=client))


async def test_an_openai_compatible_server_drives_the_funnel_over_http():
    with FakeOpenAI(HAPPY) as fake:
        result = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(_model(fake)))
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.done
    assert dx.affected_files[0].path == "shop/pricing.py"
    offered = [sorted(t["function"]["name"] for t in r.get("tools", [])) for r in fake.requests]
    assert offered[0] == ["begin_deep_dive", "find_symbol", "list_dir", "read_range", "request_info", "search"]
    assert offered[2] == ["finish_deep_dive", "read_range", "request_info"]
    assert offered[4] == []
    assert dx.stats.input_tokens == 5000 and dx.stats.output_tokens == 250
    system = fake.requests[0]["messages"][0]
    assert system["role"] == "system" and "read-only bug investigator" in system["content"]


async def test_a_model_string_with_base_url_and_key_from_the_environment(monkeypatch):
    with FakeOpenAI(HAPPY, model="gpt-4o") as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        explorer = resolve_explorer("openai-chat:gpt-4o")
        result = await investigate(REPORT, FIXTURE_REPO, explorer=explorer)
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.done and dx.stats.explorer == "openai-chat:gpt-4o"
    assert dx.stats.cost_usd is not None and dx.stats.cost_usd > 0  # priced from the genai-prices table


async def test_a_server_that_keeps_failing_ends_with_error_after_retries():
    with FakeOpenAI(status=500) as fake:
        limits = Limits(model_retries=2, retry_backoff_s=0.01, fallback_to_offline=False)
        result = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(_model(fake)), limits=limits)
    term = result.diagnosis.termination
    assert term.reason == StopReason.error and "kept failing after 2 retries" in term.detail
    assert len(fake.requests) == 3


async def test_a_transient_failure_is_retried_and_the_run_goes_on():
    with FakeOpenAI(HAPPY) as fake:
        calls = {"n": 0}
        original = fake.server.RequestHandlerClass.do_POST

        def flaky(handler):
            calls["n"] += 1
            if calls["n"] == 1:
                fake.status = 503
            original(handler)
            fake.status = 200

        fake.server.RequestHandlerClass.do_POST = flaky
        result = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(_model(fake)),
                                   limits=Limits(retry_backoff_s=0.01))  # fmt: skip
    assert result.diagnosis.termination.reason == StopReason.done
    assert len(fake.requests) == len(HAPPY) + 1


async def test_a_refused_request_is_not_retried():
    with FakeOpenAI(status=401) as fake:
        result = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(_model(fake)),
                                   limits=Limits(fallback_to_offline=False))  # fmt: skip
    assert result.diagnosis.termination.reason == StopReason.error
    assert "refused the request" in result.diagnosis.termination.detail
    assert len(fake.requests) == 1


async def test_a_reply_cut_off_over_http_is_sent_back_not_taken_as_done():
    choices = [_tool_call("finish_deep_dive", {}, 1), _text(GOOD_REPORT[:60], "length"), _text(GOOD_REPORT)]
    with FakeOpenAI(choices) as fake:
        result = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(_model(fake)))
    assert result.diagnosis.termination.reason == StopReason.done
    assert result.report_markdown == GOOD_REPORT
    assert "cut off" in json.dumps(fake.requests[2]["messages"][-1])


def test_openai_with_a_custom_base_url_speaks_chat_completions(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    model = resolve_explorer("openai:my-local-model").build_model(None)
    assert isinstance(model, ReplyReader) and model.model_name == "my-local-model"
    assert isinstance(model.wrapped, OpenAIChatModel)


async def test_a_context_overflow_is_an_error_not_done():
    with FakeOpenAI(status=400, error_code="context_length_exceeded") as fake:
        result = await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(_model(fake)))
    term = result.diagnosis.termination
    assert term.reason == StopReason.error and "context overflow" in term.detail
    assert len(fake.requests) == 1


def test_other_providers_resolve_by_model_string(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:1/v1")
    for spec in ("anthropic:claude-sonnet-4-5", "ollama:llama3.2"):
        explorer = resolve_explorer(spec)
        assert explorer.name == spec
        assert explorer.build_model(None).model_name  # builds without a network call


def test_an_unknown_provider_is_a_clear_error():
    from funnel.errors import UserError

    with pytest.raises(UserError, match="cannot use model"):
        resolve_explorer("nosuchprovider:model")

"""The one retry policy of every model call (explorers, the structurer, the compaction summarizer), and building a
PydanticAI model from a model string."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os

from pydantic_ai import exceptions as pai_exc
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ThinkingPart, ToolCallPart
from pydantic_ai.models import Model, ModelRequestParameters, infer_model
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from funnel.cancel import CancelToken
from funnel.completions import lenient
from funnel.counts import is_token_count
from funnel.errors import Cancelled, ModelUnavailable, RunFailed, UserError
from funnel.limits import Limits

__all__ = ("ReplyReader", "RetryingModel", "build_model_from_spec", "failure_text")

_log = logging.getLogger(__name__)

_RETRYABLE = (
    pai_exc.ModelRateLimitError,
    pai_exc.ModelUnavailableError,
    pai_exc.ModelServerError,
    pai_exc.ModelConnectionError,
    pai_exc.ModelRequestTimeout,
)


def build_model_from_spec(spec: str | Model) -> Model:
    """A PydanticAI model from a model string (`openai:gpt-4o`, `anthropic:...`, `ollama:...`) or a model.

    OpenAI-compatible servers: `openai-chat:<model>` (or `openai:<model>`, switched to chat completions when
    `OPENAI_BASE_URL` points elsewhere than api.openai.com) with `OPENAI_BASE_URL` and `OPENAI_API_KEY` set. A Chat
    Completions model reads the completions of plain servers leniently (`funnel.completions`), and a reply its SDK
    cannot read is the server's failure (`ReplyReader`).
    """
    if isinstance(spec, Model):
        return spec
    base_url = os.environ.get("OPENAI_BASE_URL", "")
    if spec.startswith("openai:") and base_url and "api.openai.com" not in base_url:
        # OpenAI-compatible servers speak chat completions, not the Responses API `openai:` means in PydanticAI 2.x
        spec = "openai-chat:" + spec.removeprefix("openai:")
    try:
        return ReplyReader(lenient(infer_model(spec)))
    except pai_exc.UserError as e:
        raise UserError(f"cannot use model {spec!r}: {e}") from e
    except ImportError as e:
        raise UserError(f"model {spec!r} needs an optional dependency: {e} (e.g. pip install 'bugsleuth[anthropic]')") from e


def failure_text(e: BaseException) -> str:
    """A model call's failure in one line for people: a refusal in the model's own words, a content filter by the
    provider's reason, anything else as it describes itself, a response it quotes cut to one short line.

    PydanticAI's errors about a response carry it, indented JSON, after their message (the whole refused response
    of a content filter); that body is for debugging, not for a termination detail or a log line."""
    if isinstance(e, pai_exc.ContentFilterError):
        return _refusal(e)
    if isinstance(e, pai_exc.UnexpectedModelBehavior) and e.body:
        body = " ".join(e.body.split())
        return f"{e.message} (response: {body[:200]}{'…' if len(body) > 200 else ''})"
    return str(e)


def _refusal(e: pai_exc.ContentFilterError) -> str:
    """A refusal in the model's words, read from the refused response's provider details, else the filter's reason."""
    try:
        details = json.loads(e.body or "[]")[-1].get("provider_details") or {}
    except (ValueError, IndexError, AttributeError, TypeError):
        details = {}
    if refusal := " ".join(str(details.get("refusal") or "").split()):
        return f"the model refused: “{refusal[:300]}”"
    reason = details.get("finish_reason") or "content_filter"
    return f"the provider's content filter stopped the reply (finish reason {reason!r})"


_READING_FAULTS = (AttributeError, TypeError, KeyError, IndexError, ValueError, AssertionError)
"""What a provider SDK or PydanticAI's reading of its reply raises on a reply of the wrong shape (`"usage": "x"`, an
event of a stream that lacks its `message`, a `content_block_delta` for a block never started)."""


class ReplyReader(WrapperModel):
    """A provider's model whose failure to read a reply is the server's (`ModelServerError`, retried as a 5xx is):
    a malformed body or stream tripped the SDK or PydanticAI with an `AttributeError` or an `AssertionError`, and the
    run ended as bugsleuth's own internal error."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        try:
            response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        except _READING_FAULTS as e:
            said = " ".join(str(e).split())[:200]
            raise pai_exc.ModelServerError(self.model_name, f"the endpoint's reply could not be read "
                                                            f"({type(e).__name__}{': ' + said if said else ''})") from e
        if (wrong := _malformed(response)) is not None:
            raise pai_exc.ModelServerError(self.model_name, f"the endpoint's reply could not be read ({wrong})")
        return _metered(response)


_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
"""The token counts of a reply's usage that the run's meter and budgets read."""


def _malformed(response: ModelResponse) -> str | None:
    """What in a reply is not of its kind (a text part whose content is a number, a tool call whose name is not
    text, as a stream's malformed events leave them: PydanticAI builds the parts without validating them), or
    None."""
    for part in response.parts:
        if isinstance(part, TextPart | ThinkingPart) and not isinstance(part.content, str):
            return f"a {part.part_kind} part whose content is {type(part.content).__name__}"
        if isinstance(part, ToolCallPart) and not (all(isinstance(v, str) for v in (part.tool_name, part.tool_call_id))
                                                   and isinstance(part.args, str | dict | None)):  # fmt: skip
            return f"a tool call whose name, id or arguments are not text ({part.tool_name!r})"
    return None


def _metered(response: ModelResponse) -> ModelResponse:
    """`response` with a model name that is not text left out and each token count that is not a count read as 0 (the
    reply itself is sound; what it says about itself is not); the same response when both are."""
    usage = response.usage
    wrong = {name: 0 for name in _COUNTS if not is_token_count(getattr(usage, name))}
    if not wrong and isinstance(response.model_name, str | None):
        return response
    name = response.model_name if isinstance(response.model_name, str | None) else None
    return dataclasses.replace(response, usage=dataclasses.replace(usage, **wrong), model_name=name)


class RetryingModel(WrapperModel):
    """The one retry policy of every model call: retries failing requests with exponential backoff, honouring the
    server's `Retry-After`; stops the run when they keep failing.

    The provider SDK's own retries are turned off (`ModelSettings.max_retries = 0`), so one model request is at most
    `1 + retries` HTTP attempts, each bounded by `request_timeout_s`. Retried: rate limits (429), 5xx and overload,
    connection errors (refused, reset mid-response) and timeouts. The wait before retry n is
    `max(backoff_s * 2**(n-1), Retry-After)`, capped at `max_backoff_s`; cancellation interrupts it. A request the
    provider refuses outright (auth, unknown model, context overflow) stops the run at once with `error`. Endpoint
    failures raise `ModelUnavailable` (the harness may fall back to the offline investigator); a context overflow is
    the run's own doing and does not.
    """

    def __init__(self, wrapped: Model, *, retries: int, backoff_s: float, cancel: CancelToken,
                 request_timeout_s: float | None = None, max_backoff_s: float = 60.0) -> None:  # fmt: skip
        super().__init__(wrapped)
        self.retries = retries
        self.backoff_s = backoff_s
        self.cancel = cancel
        self.request_timeout_s = request_timeout_s or None
        self.max_backoff_s = max_backoff_s

    @classmethod
    def for_limits(cls, wrapped: Model, limits: Limits, cancel: CancelToken | None = None) -> RetryingModel:
        """The policy with the retries, backoff and request timeout of `limits`."""
        return cls(wrapped, retries=limits.model_retries, backoff_s=limits.retry_backoff_s, cancel=cancel or CancelToken(),
                   request_timeout_s=limits.request_timeout_s)  # fmt: skip

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        settings: ModelSettings = {**(model_settings or {}), "max_retries": 0}  # this class is the only retry policy
        if self.request_timeout_s:
            settings.setdefault("timeout", self.request_timeout_s)
        delay = self.backoff_s
        for attempt in range(self.retries + 1):
            try:
                return await asyncio.wait_for(self.wrapped.request(messages, settings, model_request_parameters),
                                              self.request_timeout_s)  # fmt: skip
            except pai_exc.ModelContextWindowExceededError as e:
                raise RunFailed(f"context overflow: the history no longer fits the model ({e})") from e
            except pai_exc.ModelRequestRejectedError as e:
                raise ModelUnavailable(f"the model endpoint refused the request: {e}") from e
            except (*_RETRYABLE, TimeoutError) as e:
                failure = str(e) or f"no answer within {self.request_timeout_s:g} s"
                if attempt >= self.retries:
                    raise ModelUnavailable(f"the model endpoint kept failing after {self.retries} retries: {failure}") from e
                wait = min(max(delay, getattr(e, "retry_after", None) or 0.0), self.max_backoff_s)
                _log.warning("model request failed (%s); retry %d in %.1f s", failure, attempt + 1, wait)
                try:
                    await asyncio.wait_for(self.cancel.wait(), timeout=wait)
                except TimeoutError:
                    pass
                if self.cancel.cancelled:
                    raise Cancelled(self.cancel.reason or "cancelled") from e
                delay *= 2
            except pai_exc.ModelAPIError as e:  # quota exhausted and other provider failures retrying won't fix
                raise ModelUnavailable(f"the model endpoint failed: {type(e).__name__}: {e}") from e
        raise AssertionError("unreachable")

"""Agent-loop explorers on any PydanticAI provider, and the retrying wrapper every explorer model runs in."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass

from pydantic_ai import exceptions as pai_exc
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, infer_model
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from funnel.cancel import CancelToken
from funnel.errors import UserError
from funnel.explorers import ExplorerContext
from funnel.run.budget import Cancelled, ModelUnavailable, Unrecoverable

__all__ = ("ModelExplorer", "RetryingModel", "build_model_from_spec")

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
    `OPENAI_BASE_URL` points elsewhere than api.openai.com) with `OPENAI_BASE_URL` and `OPENAI_API_KEY` set.
    """
    if isinstance(spec, Model):
        return spec
    base_url = os.environ.get("OPENAI_BASE_URL", "")
    if spec.startswith("openai:") and base_url and "api.openai.com" not in base_url:
        # OpenAI-compatible servers speak chat completions, not the Responses API `openai:` means in PydanticAI 2.x
        spec = "openai-chat:" + spec.removeprefix("openai:")
    try:
        return infer_model(spec)
    except pai_exc.UserError as e:
        raise UserError(f"cannot use model {spec!r}: {e}") from e
    except ImportError as e:
        raise UserError(f"model {spec!r} needs an optional dependency: {e} (e.g. pip install 'bugsleuth[anthropic]')") from e


@dataclass
class ModelExplorer:
    """An explorer driven by a real model on any PydanticAI provider."""

    spec: str | Model
    """Model string or model instance."""

    def __post_init__(self) -> None:
        self._model = build_model_from_spec(self.spec)  # a bad model string or a missing key fails here, clearly

    @property
    def name(self) -> str:
        """The model string, or the model's name."""
        return self.spec if isinstance(self.spec, str) else f"{self.spec.system}:{self.spec.model_name}"

    def build_model(self, ctx: ExplorerContext) -> Model:
        """The model for one run."""
        return self._model


class RetryingModel(WrapperModel):
    """Retries failing requests (rate limit, 5xx, connection) with backoff; stops the run when they keep failing.

    A request the provider refuses outright (auth, unknown model, context overflow) stops the run at once with
    `error`; cancellation interrupts the backoff. Endpoint failures raise `ModelUnavailable` (the harness may fall
    back to the offline investigator); a context overflow is the run's own doing and does not.
    """

    def __init__(self, wrapped: Model, *, retries: int, backoff_s: float, cancel: CancelToken) -> None:
        super().__init__(wrapped)
        self.retries = retries
        self.backoff_s = backoff_s
        self.cancel = cancel

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        delay = self.backoff_s
        for attempt in range(self.retries + 1):
            try:
                return await self.wrapped.request(messages, model_settings, model_request_parameters)
            except pai_exc.ModelContextWindowExceededError as e:
                raise Unrecoverable(f"context overflow: the history no longer fits the model ({e})") from e
            except pai_exc.ModelRequestRejectedError as e:
                raise ModelUnavailable(f"the model endpoint refused the request: {e}") from e
            except _RETRYABLE as e:
                if attempt >= self.retries:
                    raise ModelUnavailable(f"the model endpoint kept failing after {self.retries} retries: {e}") from e
                _log.warning("model request failed (%s); retry %d in %.1f s", e, attempt + 1, delay)
                try:
                    await asyncio.wait_for(self.cancel.wait(), timeout=delay)
                except TimeoutError:
                    pass
                if self.cancel.cancelled:
                    raise Cancelled(self.cancel.reason or "cancelled") from e
                delay *= 2
            except pai_exc.ModelAPIError as e:  # quota exhausted and other provider failures retrying won't fix
                raise ModelUnavailable(f"the model endpoint failed: {type(e).__name__}: {e}") from e
        raise AssertionError("unreachable")

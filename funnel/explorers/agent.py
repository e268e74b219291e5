"""Agent-loop explorers on any PydanticAI provider (every model call runs in `funnel.retry.RetryingModel`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic_ai.models import Model

from funnel.explorers.protocol import ExplorerContext, ExplorerTraits
from funnel.retry import RetryingModel, build_model_from_spec

__all__ = ("ModelExplorer", "RetryingModel", "build_model_from_spec")  # the last two re-exported from funnel.retry


@dataclass
class ModelExplorer:
    """An explorer driven by a real model on any PydanticAI provider."""

    spec: str | Model
    """Model string or model instance."""
    traits: ClassVar[ExplorerTraits] = ExplorerTraits(prepass=True, offline_fallback=True)
    """A model gets the lexical pre-pass, and the offline investigator when its endpoint fails."""

    def __post_init__(self) -> None:
        self._model = build_model_from_spec(self.spec)  # a bad model string or a missing key fails here, clearly

    @property
    def name(self) -> str:
        """The model string, or the model's name."""
        return self.spec if isinstance(self.spec, str) else f"{self.spec.system}:{self.spec.model_name}"

    def build_model(self, ctx: ExplorerContext) -> Model:
        """The model for one run."""
        return self._model

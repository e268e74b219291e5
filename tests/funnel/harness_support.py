"""Shared helpers for the harness tests: the fixture repository, reports, scripted FunctionModels.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from schemas.report import BugReport

FIXTURE_REPO = Path(__file__).parent / "traces" / "repo"
"""The tiny repository every harness test investigates (a `// 10` instead of `// 100` bug)."""

REPORT = BugReport(
    title="apply_discount returns the wrong price",
    body="apply_discount(1000, 10) returns 0 instead of 900. Cart.checkout charges nothing with a 10% discount.",
)

GOOD_REPORT = """\
## Summary
A 10% discount removes the whole price.

## Root cause
The discount is divided by 10 instead of 100.

- Evidence: `shop/pricing.py:8` divides by 10.

## Affected files
1. `shop/pricing.py:8-8` — `apply_discount` (cause)
   ```python
   return price_cents - price_cents * percent // 10
   ```

## Proposed changes
- `shop/pricing.py` — `apply_discount`: divide by 100.

## Complexity
trivial — one character.

## Risk
low — local change.

## Confidence
0.9

## Open questions
- None.
"""

BAD_REPORT = GOOD_REPORT.replace("shop/pricing.py:8-8", "shop/nowhere.py:8-8").replace(
    "return price_cents - price_cents * percent // 10", "return price * rate"
)
"""A report the verifier refuses: the cited file does not exist and the quote occurs nowhere."""


def copy_repo(dest: Path) -> Path:
    """A private copy of the fixture repository."""
    target = dest / "repo"
    shutil.copytree(FIXTURE_REPO, target)
    return target


Step = Callable[[list[ModelMessage], AgentInfo], ModelResponse] | ModelResponse


@dataclass
class Script:
    """A scripted FunctionModel: returns the given responses in order, recording the tools offered each time."""

    steps: Sequence[Step]
    """Responses (or functions making them), in order; the last one repeats when the script runs out."""
    offered: list[list[str]] = field(default_factory=list)
    """Tool names offered at each request (what the phase gate let through)."""
    instructions: list[str] = field(default_factory=list)
    """Instructions seen at each request."""
    seen: list[list[ModelMessage]] = field(default_factory=list)
    """The history the model saw at each request."""

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        i = len(self.offered)
        self.offered.append(sorted(t.name for t in info.function_tools))
        self.instructions.append(info.instructions or "")
        self.seen.append(list(messages))
        step = self.steps[min(i, len(self.steps) - 1)]
        return step(messages, info) if callable(step) else step

    def model(self) -> FunctionModel:
        """The FunctionModel running this script."""
        return FunctionModel(self, model_name="script")


@dataclass
class ScriptExplorer:
    """An explorer whose model is a `Script`."""

    script: Script
    name: str = "script"

    def build_model(self, ctx: Any) -> FunctionModel:
        return self.script.model()


def call(tool: str, **args: Any) -> ModelResponse:
    """A response calling one tool."""
    return ModelResponse(parts=[ToolCallPart(tool, args)])


def text(content: str, finish_reason: Any = "stop") -> ModelResponse:
    """A response with text."""
    return ModelResponse(parts=[TextPart(content)], finish_reason=finish_reason)


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """Every tool return in a history."""
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]


HAPPY_STEPS: list[Step] = [
    call("search", pattern="apply_discount", fixed_strings=True),
    call("read_range", path="shop/pricing.py", start=1, end=14),
    call("begin_deep_dive", suspects=["shop/pricing.py:apply_discount"]),
    call("read_range", path="shop/pricing.py", start=4, end=8),
    call("finish_deep_dive"),
    text(GOOD_REPORT),
]
"""A short, well-behaved investigation of the fixture repository."""


def kinds(events: Sequence[Any]) -> list[str]:
    """Event kinds in order."""
    return [e.kind for e in events]


def strip_ws(s: str) -> str:
    """Whitespace-insensitive form of a text."""
    return re.sub(r"\s+", " ", s).strip()

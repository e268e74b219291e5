"""bugsleuth's investigation engine: a bug report and a read-only tree in, a validated `Diagnosis` out.

The public entry points are importable from here: `investigate`, `investigate_sync`, `InvestigationResult`,
`Limits` (and `ToolLimits`, `VerifyLimits`), `CancelToken`, `PHASE_ORDER`, `phase_of_tools`, and every error and
stop type. The house
(`docs/DESIGN.md`): `errors`/`limits`/`phases`/`classify` <- `tools` <- `localize` <- `report` <- `explorers` <- `run`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from funnel.cancel import CancelToken
from funnel.errors import (
    BugsleuthError,
    Cancelled,
    CostBudgetExceeded,
    ModelUnavailable,
    ModelUnusable,
    NeedsInfo,
    RunFailed,
    StepBudgetExceeded,
    StopRun,
    ToolError,
    UnrecoverableError,
    UserError,
)
from funnel.limits import Limits, ToolLimits, VerifyLimits
from funnel.phases import PHASE_ORDER, phase_of_tools

if TYPE_CHECKING:
    from funnel.run.loop import InvestigationResult, investigate, investigate_sync

__all__ = (
    "BugsleuthError",
    "CancelToken",
    "Cancelled",
    "CostBudgetExceeded",
    "InvestigationResult",
    "Limits",
    "ModelUnavailable",
    "ModelUnusable",
    "NeedsInfo",
    "PHASE_ORDER",
    "RunFailed",
    "StepBudgetExceeded",
    "StopRun",
    "ToolError",
    "ToolLimits",
    "UnrecoverableError",
    "UserError",
    "VerifyLimits",
    "investigate",
    "investigate_sync",
    "phase_of_tools",
)

_HARNESS = frozenset({"InvestigationResult", "investigate", "investigate_sync"})


def __getattr__(name: str) -> Any:
    """`investigate`, `investigate_sync` and `InvestigationResult`, loaded on first use."""
    if name in _HARNESS:
        # lazy: importing funnel.errors or funnel.limits (the CLI, repomap-only users) must not load the harness,
        # PydanticAI and every explorer
        from funnel.run import loop

        return getattr(loop, name)
    raise AttributeError(f"module 'funnel' has no attribute {name!r}")

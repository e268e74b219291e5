"""The funnel harness: `investigate()` a bug report in a read-only tree through a three-phase tool funnel.

Public names importable from the package, loaded on first use (so `import funnel.cancel` stays cheap):
`Limits`, `CancelToken`, `PHASE_ORDER`, `phase_of_tools`. (`investigate`, `investigate_sync` and `InvestigationResult` join them once the harness
module no longer has the function's own name: today `funnel.run.loop` is the module.)
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ("PHASE_ORDER", "CancelToken", "Limits", "phase_of_tools")

_HOME = {"Limits": "funnel.limits", "CancelToken": "funnel.cancel", "PHASE_ORDER": "funnel.phases",
         "phase_of_tools": "funnel.phases"}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'funnel' has no attribute {name!r}")

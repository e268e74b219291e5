"""The funnel harness: `investigate()` a bug report in a read-only tree through a three-phase tool funnel.

The public names, importable from the package: `investigate`, `investigate_sync`, `InvestigationResult`,
`Limits`, `CancelToken`.
"""

from funnel.cancel import CancelToken
from funnel.investigate import InvestigationResult, investigate, investigate_sync  # binds the function over the module
from funnel.limits import Limits

__all__ = ("CancelToken", "InvestigationResult", "Limits", "investigate", "investigate_sync")

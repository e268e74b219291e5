"""Input types shared by the routers: text that every database can store."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path
from pydantic import AfterValidator, StringConstraints

from schemas.text import unstorable_reason


def _storable(value: str) -> str:
    reason = unstorable_reason(value)
    if reason is not None:
        raise ValueError(reason)
    return value


Text = Annotated[str, AfterValidator(_storable)]
"""Free text storable in SQLite and PostgreSQL."""
Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True), AfterValidator(_storable)]
"""A short identifier such as a repository name."""
MAX_ID = 2**63 - 1
InvestigationId = Annotated[int, Path(ge=1, le=MAX_ID, description="Investigation id")]
"""Path parameter of one investigation."""

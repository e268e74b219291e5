"""Input types shared by the routers: text that every database can store."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path
from pydantic import AfterValidator, Field

from app.models import MAX_ID
from schemas.text import unstorable_reason


def _storable(value: str) -> str:
    reason = unstorable_reason(value)
    if reason is not None:
        raise ValueError(reason)
    return value


Text = Annotated[str, AfterValidator(_storable)]
"""Free text storable in SQLite and PostgreSQL."""


def bounded_text(max_length: int, *, min_length: int = 0, strip: bool = False) -> Any:
    """Storable free text of bounded length, checked after `_storable` (whose reason names a lone surrogate or a NUL
    exactly) and counted in characters; `strip` drops surrounding whitespace first, so that a blank value is an
    empty one ("must not be blank")."""

    def check(value: str) -> str:
        value = value.strip() if strip else value
        if len(value) < min_length:
            raise ValueError("must not be blank" if strip and min_length == 1 else f"at least {min_length} characters")
        if len(value) > max_length:
            raise ValueError(f"at most {max_length} characters ({len(value)} sent)")
        return value

    schema = {"maxLength": max_length, **({"minLength": min_length} if min_length else {})}
    return Annotated[str, AfterValidator(_storable), AfterValidator(check), Field(json_schema_extra=schema)]


Name = bounded_text(200, min_length=1, strip=True)
"""A short identifier such as a repository name (blank: "must not be blank", like a title)."""
MAX_OFFSET = 10_000_000
"""The furthest a listing may skip."""
InvestigationId = Annotated[int, Path(ge=1, le=MAX_ID, description="Investigation id")]
"""Path parameter of one investigation."""

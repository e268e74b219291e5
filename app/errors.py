"""Error replies that can always be sent: the 422 of a request that failed validation echoes the offending
input, and that input may hold characters UTF-8 cannot encode (a lone surrogate spelled `\\ud800` in JSON).

`install_error_handlers(app)` is called once by `create_app`.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from schemas.text import scrub

ECHO_CHARS = 200
"""Longest input string echoed back in a validation error (the rest is cut, the cut stated)."""


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > ECHO_CHARS:
        return f"{value[:ECHO_CHARS]}... [{len(value) - ECHO_CHARS} more characters]"
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 naming each bad field; echoed input is cut to `ECHO_CHARS` and made encodable."""
    errors = [{**err, "input": _short(err.get("input"))} if "input" in err else err for err in exc.errors()]
    return JSONResponse({"detail": scrub(jsonable_encoder(errors))}, status_code=422)


def install_error_handlers(app: FastAPI) -> None:
    """Replace FastAPI's validation error handler with `validation_error`."""
    app.add_exception_handler(RequestValidationError, validation_error)  # type: ignore[arg-type]

"""FastAPI dependencies as `Annotated` aliases: the runtime, a DB session, settings, and the write guard."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request, Security, status
from fastapi.security import HTTPAuthorizationCredentials
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings, get_settings
from app.runtime import Runtime
from app.security import BEARER

ApiAuth = Security(BEARER)
"""Declares the bearer scheme on a route or router (OpenAPI `security`, the Authorize button of `/docs`); the
security middleware does the checking, with the same `BEARER` parser."""


async def get_runtime(request: Request) -> Runtime:
    """The runtime of this process (created by the app's lifespan)."""
    runtime = getattr(request.app.state, "runtime", None)
    if runtime is None:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, "service is starting")
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
"""The process runtime (db, settings, jobs, metrics)."""
async def app_settings(request: Request) -> Settings:
    """The settings in force: an override of `get_settings` in `app.dependency_overrides` (tests), else the
    settings the app was created with (`create_app(settings)`), else `get_settings()`.

    Looked up here rather than through FastAPI's override machinery, which re-analyses an overridden
    dependency on every request."""
    override = request.app.dependency_overrides.get(get_settings)
    if override is not None:
        return override()
    settings = getattr(request.app.state, "settings", None)
    return settings if settings is not None else get_settings()


SettingsDep = Annotated[Settings, Depends(app_settings)]
"""The settings in force (tests pass their own to `create_app`)."""


async def get_read_session(runtime: RuntimeDep) -> AsyncIterator[AsyncSession]:
    """A read-only session (one snapshot, no write lock) for the handler's duration."""
    async with runtime.db.read_session() as session:
        yield session


ReadSessionDep = Annotated[AsyncSession, Depends(get_read_session, scope="function")]
"""A read-only DB session, closed as soon as the handler returns (not after the response is sent)."""


async def require_writer(
    request: Request, settings: SettingsDep, _credentials: Annotated[HTTPAuthorizationCredentials | None, ApiAuth]
) -> None:
    """Write endpoints need `Authorization: Bearer <api_token>` (or a logged-in dashboard session) when a
    token is configured (the dependency also declares the bearer scheme in OpenAPI)."""
    check_writer(request, settings)


def check_writer(request: Request, settings: Settings) -> None:
    """Raise 401 unless the request may write: no token is configured, or the security middleware has already
    accepted its token or dashboard session (`request.state.auth`)."""
    if settings.api_token is None or getattr(request.state, "auth", None) in ("bearer", "session"):
        return
    raise HTTPException(
        status.HTTP_401_UNAUTHORIZED,
        "this endpoint needs 'Authorization: Bearer <token>' (BUGSLEUTH_API_TOKEN)",
        headers={"WWW-Authenticate": "Bearer"},
    )


Writer = Depends(require_writer)
"""Add to a write route's `dependencies=[Writer]`."""

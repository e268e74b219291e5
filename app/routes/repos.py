"""`/api/repos`: the repository registry."""

from __future__ import annotations


from fastapi import APIRouter, HTTPException, status
from pydantic import BaseModel, ConfigDict

from app import service, store
from app.deps import ApiAuth, RuntimeDep, ReadSessionDep, Writer
from app.routes._types import Name, bounded_text
from app.views import RepoView

router = APIRouter(prefix="/api/repos", tags=["repositories"], dependencies=[ApiAuth])


class RepoIn(BaseModel):
    """A repository to register."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    """`owner/name`, as webhooks and reports name it."""
    location: bounded_text(2000, min_length=1, strip=True)
    """Absolute local path on the server, or a git URL (https://, ssh://, git@, file://)."""
    default_ref: bounded_text(200, min_length=1, strip=True) | None = None
    """Branch to investigate when a report names none."""


@router.get("")
async def list_repos(session: ReadSessionDep) -> list[RepoView]:
    """Every registered repository."""
    return await store.list_repositories(session)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    dependencies=[Writer],
    responses={409: {"description": "Name taken"}, 422: {"description": "Bad location"}},
)
async def add_repo(payload: RepoIn, runtime: RuntimeDep) -> RepoView:
    """Register a repository."""
    try:
        return await service.register_repository(
            runtime, payload.name, payload.location, default_ref=payload.default_ref
        )
    except store.DuplicateError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    except service.InvalidRepositoryError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc

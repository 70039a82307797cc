"""FastAPI dependencies shared by the routes: settings, database session, current user, runner."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request, status
from sqlalchemy.orm import Session

from dragdl.db.models import User
from dragdl.server.auth import authenticate
from dragdl.server.settings import Settings

# Dependencies that do no I/O are `async def`: FastAPI runs a plain `def` dependency in its thread pool,
# and that trip costs more than the function itself.


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_db(request: Request) -> Iterator[Session]:
    with request.app.state.sessions() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_db)]


def get_current_user(request: Request, db: SessionDep, settings: SettingsDep) -> User:
    return authenticate(request, db, settings)


CurrentUser = Annotated[User, Depends(get_current_user)]


async def get_admin(user: CurrentUser) -> User:
    if not user.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "administrators only")
    return user


AdminUser = Annotated[User, Depends(get_admin)]


async def get_runner(request: Request) -> Any:
    return request.app.state.runner


RunnerDep = Annotated[Any, Depends(get_runner)]

"""Accounts: your own limits and storage usage; for administrators: list accounts, grant or revoke admin
rights, set task and storage quotas and caps per task."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, status

from dragdl.server.deps import AdminUser, CurrentUser, SessionDep, SettingsDep
from dragdl.server.errors import SIGNED_IN_ERRORS, error_responses
from dragdl.server.schemas.users import Account, Limits, StorageUsage, UserPublic, UsersPublic, UserUpdate
from dragdl.server.services import limits
from dragdl.server.services import users as service

router = APIRouter(prefix="/api/users", tags=["users"])


@router.get("/me", operation_id="getMyAccount", responses=SIGNED_IN_ERRORS)
def my_account(user: CurrentUser, db: SessionDep, settings: SettingsDep) -> Account:
    """Your account with the limits in force for you and the storage your datasets and tasks take."""
    usage = StorageUsage(
        datasets_bytes=limits.dataset_usage(db, user),
        artifacts_bytes=limits.artifact_usage(db, settings, user),
    )
    in_force = Limits.model_validate(limits.limits_of(settings, user), from_attributes=True)
    return Account(user=UserPublic.model_validate(user), limits=in_force, usage=usage)


@router.get("", operation_id="listUsers")
def list_users(
    admin: AdminUser,
    db: SessionDep,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> UsersPublic:
    users, count = service.list_users(db, offset, limit)
    return UsersPublic(data=[UserPublic.model_validate(user) for user in users], count=count)


@router.patch(
    "/{user_id}",
    operation_id="updateUser",
    responses=error_responses(400, 404, described={409: "The last administrator cannot lose admin rights."}),
)
def update_user(
    user_id: Annotated[int, Path(ge=1, le=2**31 - 1)], body: UserUpdate, admin: AdminUser, db: SessionDep
) -> UserPublic:
    """Change `is_admin`, the quotas or the caps per task (a limit set to null = the server default)."""
    user = service.get_user(db, user_id)
    if user is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no user {user_id}")
    try:
        return UserPublic.model_validate(service.update_user(db, user, body))
    except service.LastAdmin:
        raise HTTPException(
            status.HTTP_409_CONFLICT, "the last administrator cannot lose admin rights"
        ) from None

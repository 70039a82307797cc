"""Accounts: sign-up and login bodies, the public view of a user, the administrator's update."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

USERNAME_PATTERN = r"^[A-Za-z0-9_.-]{3,64}$"
USERNAME_FIELD = Field(
    min_length=3,
    max_length=64,
    pattern=USERNAME_PATTERN,
    description="3 to 64 characters: letters, digits, '_', '.' or '-'.",
    examples=["alice"],
)


class UserCreate(BaseModel):
    """Sign-up."""

    username: str = USERNAME_FIELD
    password: str = Field(min_length=8, max_length=1024, description="At least 8 characters.")


class Credentials(BaseModel):
    """Login. No format rules here: a malformed name is just an unknown one (401)."""

    username: str = Field(max_length=200)
    password: str = Field(max_length=1024)


class UserPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    username: str
    is_admin: bool
    max_running_tasks: int | None = Field(description="Quota of running tasks; null = the server default.")
    created_at: datetime


class UsersPublic(BaseModel):
    data: list[UserPublic]
    count: int


class UserUpdate(BaseModel):
    """What an administrator may change. Omitted fields stay; `max_running_tasks: null` = default.

    Strict: `false` is not a quota of 0, nor `"1"` an admin flag."""

    model_config = ConfigDict(extra="forbid", strict=True)

    is_admin: bool | None = None
    max_running_tasks: int | None = Field(default=None, ge=0, le=10_000)

"""Accounts: sign-up and login bodies, the public view of a user, the administrator's update."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

MAX_QUOTA_BYTES = 2**62
"""Far above any disk, and within a 64-bit column."""
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
    dataset_quota_bytes: int | None = Field(
        description="Storage quota of the user's datasets; null = the server default."
    )
    artifact_quota_bytes: int | None = Field(
        description="Storage quota of the user's task artifacts; null = the server default."
    )
    max_cpus_per_task: float | None = Field(
        description="CPUs one task may reserve; null = the server default."
    )
    max_gpus_per_task: float | None = Field(
        description="GPUs one task may reserve; null = the server default."
    )
    max_workers_per_task: int | None = Field(
        default=None, description="Workers one distributed run may have; null = the server default."
    )
    created_at: datetime


class UsersPublic(BaseModel):
    data: list[UserPublic]
    count: int


class UserUpdate(BaseModel):
    """What an administrator may change. Omitted fields stay; a limit set to null = the server default.

    Strict: `false` is not a quota of 0, nor `"1"` an admin flag."""

    model_config = ConfigDict(extra="forbid", strict=True)

    is_admin: bool | None = None
    max_running_tasks: int | None = Field(default=None, ge=0, le=10_000)
    dataset_quota_bytes: int | None = Field(default=None, ge=0, le=MAX_QUOTA_BYTES)
    artifact_quota_bytes: int | None = Field(default=None, ge=0, le=MAX_QUOTA_BYTES)
    max_cpus_per_task: float | None = Field(default=None, gt=0, le=256)
    max_gpus_per_task: float | None = Field(default=None, ge=0, le=16)
    max_workers_per_task: int | None = Field(default=None, ge=1, le=256)


class Limits(BaseModel):
    """The limits in force for the user: their own where an administrator set one, else the server's."""

    max_running_tasks: int = Field(description="Tasks that may run at once.")
    dataset_quota_bytes: int
    artifact_quota_bytes: int
    max_cpus_per_task: float
    max_gpus_per_task: float
    max_workers_per_task: int = Field(description="Workers one distributed run may have.")


class StorageUsage(BaseModel):
    datasets_bytes: int = Field(description="What the user's uploaded datasets take on disk.")
    artifacts_bytes: int = Field(
        description="What the user's tasks and models take on disk: checkpoints, bundles, logs."
    )


class Account(BaseModel):
    """The signed-in user, with their limits and storage usage."""

    user: UserPublic
    limits: Limits
    usage: StorageUsage

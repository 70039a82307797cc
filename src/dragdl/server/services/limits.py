"""What a user may use: storage quotas (datasets, task artifacts) and caps on one task's CPUs, GPUs
and workers (a distributed run's processes).

Each limit is a column of the user (set by administrators); NULL there means the server default
from `Settings`. Usage is measured, not declared:

- datasets: the sum of `Dataset.size_bytes`, measured once when the upload was unpacked (the data
  of a dataset never changes afterwards; its few preview thumbnails are not counted);
- artifacts: the folders of the user's tasks and of the models left by deleted tasks, measured on
  demand. A finished task's folder no longer changes until the task is retried (which clears its
  `finished_at`) or deleted (which removes the folder or its checkpoints), so its size is kept
  under (folder, finished_at) and measured once; only the folders of queued and running tasks
  (a handful per user, a few files each) are walked on every call.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi import HTTPException, status
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from dragdl.db.models import Dataset, Model, Task, User
from dragdl.engine.graph.errors import GraphError
from dragdl.server.services.graphs import GraphRejected
from dragdl.server.services.uploads import UploadError, tree_size
from dragdl.server.settings import Settings

_CACHED_FOLDERS = 20_000


@dataclass(frozen=True)
class Limits:
    """A user's limits in force: their own where set, else the server's defaults."""

    max_running_tasks: int
    dataset_quota_bytes: int
    artifact_quota_bytes: int
    max_cpus_per_task: float
    max_gpus_per_task: float
    max_workers_per_task: int


def limits_of(settings: Settings, user: User) -> Limits:
    def own(value: Any, default: Any) -> Any:
        return default if value is None else value

    return Limits(
        max_running_tasks=own(user.max_running_tasks, settings.max_running_per_user),
        dataset_quota_bytes=own(user.dataset_quota_bytes, settings.dataset_quota_bytes),
        artifact_quota_bytes=own(user.artifact_quota_bytes, settings.artifact_quota_bytes),
        max_cpus_per_task=own(user.max_cpus_per_task, settings.max_cpus_per_task),
        max_gpus_per_task=own(user.max_gpus_per_task, settings.max_gpus_per_task),
        max_workers_per_task=own(user.max_workers_per_task, settings.max_workers_per_task),
    )


# --- usage ------------------------------------------------------------------------------------------


def dataset_usage(db: Session, user: User) -> int:
    total = db.scalar(select(func.sum(Dataset.size_bytes)).where(Dataset.owner_id == user.id))
    return int(total or 0)


class _FolderSizes:
    """Sizes of folders that no longer change, by (folder, version); the oldest are forgotten first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._sizes: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._lock = threading.Lock()

    def size(self, folder: str, version: str, settings: Settings) -> int:
        key = (str(settings.data_dir / folder), version)
        with self._lock:
            if key in self._sizes:
                self._sizes.move_to_end(key)
                return self._sizes[key]
        size = tree_size(settings.data_dir / folder)
        with self._lock:
            self._sizes[key] = size
            while len(self._sizes) > self.capacity:
                self._sizes.popitem(last=False)
        return size


_finished_folders = _FolderSizes(_CACHED_FOLDERS)


def _version(moment: datetime) -> str:
    return moment.isoformat()


def artifact_usage(db: Session, settings: Settings, user: User) -> int:
    # folder (relative to the data dir) -> its version once it no longer changes, else None
    folders: dict[str, str | None] = {}
    for task_id, finished_at in db.execute(select(Task.id, Task.finished_at).where(Task.owner_id == user.id)):
        folders[f"artifacts/{task_id}"] = None if finished_at is None else _version(finished_at)
    for path, created_at in db.execute(
        select(Model.path, Model.created_at).where(Model.owner_id == user.id, Model.task_id.is_(None))
    ):
        folders.setdefault(path, f"model {_version(created_at)}")  # its task was deleted
    total = 0
    for folder, version in folders.items():
        if version is None:
            total += tree_size(settings.data_dir / folder)
        else:
            total += _finished_folders.size(folder, version, settings)
    return total


# --- enforcement ------------------------------------------------------------------------------------


def lock_user(db: Session, user: User) -> None:
    """Take the user's row for the rest of the transaction (a no-op write: a write lock on SQLite,
    a row lock on PostgreSQL), so that two uploads of one user check the quota one after the other."""
    db.execute(update(User).where(User.id == user.id).values(dataset_quota_bytes=User.dataset_quota_bytes))
    db.refresh(user)


def check_dataset_room(db: Session, settings: Settings, user: User, size_bytes: int | None) -> None:
    """UploadError (413) when a dataset of `size_bytes` does not fit in the user's dataset quota;
    `None` (before an upload is received): when the quota is already full."""
    quota = limits_of(settings, user).dataset_quota_bytes
    used = dataset_usage(db, user)
    if size_bytes is None and used >= quota:
        raise UploadError(
            f"your datasets already use {used} bytes of your dataset quota of {quota} bytes: delete "
            "datasets you no longer need, or ask an administrator for a larger quota",
            status.HTTP_413_CONTENT_TOO_LARGE,
        )
    if size_bytes is not None and used + size_bytes > quota:
        raise UploadError(
            f"the dataset takes {size_bytes} bytes unpacked, but your datasets already use {used} of "
            f"your dataset quota of {quota} bytes ({max(quota - used, 0)} bytes left): delete datasets "
            "you no longer need, or ask an administrator for a larger quota",
            status.HTTP_413_CONTENT_TOO_LARGE,
        )


def check_artifact_room(db: Session, settings: Settings, user: User) -> None:
    """409 when the user's task artifacts already fill their artifact quota (a new task adds more)."""
    quota = limits_of(settings, user).artifact_quota_bytes
    used = artifact_usage(db, settings, user)
    if used >= quota:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"your task artifacts use {used} bytes of your artifact quota of {quota} bytes: delete "
            "tasks or models you no longer need, or ask an administrator for a larger quota",
        )


def cap_resources(
    settings: Settings, user: User, resources: dict[str, float | None], train_node_id: str | None
) -> dict[str, float | None]:
    """The resources within the user's caps per task; GraphRejected (422) naming the train node's
    `resources` field when they ask for more. A GPU left to the cluster (`gpus: null`, one when it
    has any) becomes none when the user may not have a whole one."""
    limits = limits_of(settings, user)
    problems = []
    for name, unit, cap in (
        ("cpus", "CPUs", limits.max_cpus_per_task),
        ("gpus", "GPUs", limits.max_gpus_per_task),
    ):
        asked = resources.get(name)
        if asked is not None and asked > cap:
            problems.append(
                GraphError(
                    code="resources_over_cap",
                    message=f"the task asks for {asked:g} {unit} (resources.{name}), "
                    f"more than the {cap:g} one task of yours may use: ask for at most {cap:g}",
                    node_id=train_node_id,
                    field=f"resources.{name}",
                    details={"requested": asked, "cap": cap},
                )
            )
    if problems:
        raise GraphRejected("the resources are above your caps", problems)
    if resources.get("gpus") is None and limits.max_gpus_per_task < 1:
        return {**resources, "gpus": 0.0}
    return resources

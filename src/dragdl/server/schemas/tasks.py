"""Training tasks: submission, the task views, metrics and logs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from dragdl.db.models import TaskStatus
from dragdl.runner.base import DEFAULT_MAX_ATTEMPTS


class TaskResources(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpus: float = Field(
        1.0, gt=0, le=256, description="CPU cores the worker reserves (fractions allowed), within your cap."
    )
    gpus: float | None = Field(
        None,
        ge=0,
        le=16,
        description="GPUs the worker reserves; null: 1 when the train node's device is cuda, or auto on a "
        "cluster that has GPUs, else 0.",
    )


class TaskCreate(BaseModel):
    """A graph to train: inline (`graph`) or the current version of a saved graph (`graph_id`)."""

    model_config = ConfigDict(extra="forbid")

    graph: dict[str, Any] | None = Field(None, description="The graph JSON; validated before it is queued.")
    graph_id: str | None = Field(None, max_length=64, description="A saved graph of yours.")
    name: str | None = Field(None, min_length=1, max_length=200, description="Defaults to the graph's name.")
    priority: int = Field(
        0,
        ge=-100,
        le=100,
        description="Orders your own queued tasks: higher runs first, equal priorities in order. Tasks of "
        "different users start first come, first served whatever their priorities.",
    )
    resources: TaskResources = Field(default_factory=TaskResources)

    @model_validator(mode="after")
    def _one_graph(self) -> TaskCreate:
        if (self.graph is None) == (self.graph_id is None):
            raise ValueError("send exactly one of 'graph' and 'graph_id'")
        return self


class TaskError(BaseModel):
    code: str = Field(description="Machine-readable, e.g. layer_failed, dataset_invalid, worker_lost.")
    message: str
    node_id: str | None = Field(None, description="The graph node the error concerns, when known.")


class QueuedReason(BaseModel):
    code: str = Field(
        description="no_node_fits: no node of the cluster can hold the task (it starts when one that can "
        "joins); no_free_node: the nodes that can hold it are busy or kept for earlier tasks; "
        "workers_do_not_fit / no_room_for_workers: the same for the workers of a distributed run; "
        "running_limit: as many of the owner's tasks run as allowed."
    )
    message: str
    details: dict[str, float] = Field(
        description="The figures of the reason: cpus and gpus the task needs; for no_node_fits also "
        "nodes, node_cpus (the most CPUs on one node) and node_gpus; for the workers' reasons, "
        "cpus and gpus per worker, workers, and for workers_do_not_fit room (how many such workers "
        "the idle cluster holds) and nodes; for running_limit, limit."
    )


class TaskPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    name: str
    graph_id: str | None
    status: TaskStatus
    priority: int
    resources: dict[str, float | None]
    attempts: int = Field(description="Attempts started: the first run, crash retries and resumes.")
    max_attempts: int
    resume: bool = Field(description="The next attempt continues from the newest checkpoint.")
    stop_requested: bool
    error: TaskError | None
    queued_reason: QueuedReason | None = Field(
        None,
        description="Why a QUEUED task has not started yet; null when it is not waiting (or not yet known).",
    )
    progress: float = Field(description="Share of the planned optimizer steps done, 0..1.")
    epoch: int = Field(description="The epoch in progress (1-based), or the last one finished.")
    best_metrics: dict[str, float] = Field(
        description="Best value of each epoch score so far (lowest loss, MAE and RMSE; highest accuracy "
        "and R²), and test metrics."
    )
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def elapsed_s(self) -> float | None:
        """Seconds from the first start to the end (or to now while not finished)."""
        if self.started_at is None:
            return None
        end = self.finished_at or datetime.now(UTC)
        return max(0.0, (_utc(end) - _utc(self.started_at)).total_seconds())

    # Each run (the first, or one the user resumed) gets DEFAULT_MAX_ATTEMPTS attempts, and a
    # server restart spares one: so max_attempts - DEFAULT_MAX_ATTEMPTS attempts came before this run.
    @computed_field  # type: ignore[prop-decorator]
    @property
    def continued(self) -> bool:
        """This run continues an earlier one (resumed by its owner, or after a server restart)."""
        return self.max_attempts > DEFAULT_MAX_ATTEMPTS

    @computed_field  # type: ignore[prop-decorator]
    @property
    def retries(self) -> int:
        """Automatic retries after a crash in this run (a user's resume is not one)."""
        return max(0, self.attempts - (self.max_attempts - DEFAULT_MAX_ATTEMPTS) - 1)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def max_retries(self) -> int:
        """How many automatic retries a run gets."""
        return DEFAULT_MAX_ATTEMPTS - 1


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class TaskDetail(TaskPublic):
    graph: dict[str, Any] = Field(
        description="The graph as submitted (later edits of a saved graph do not apply)."
    )
    config: dict[str, Any] = Field(description="The train node's settings, defaults filled in.")


TaskSort = Literal["newest", "oldest", "status", "name"]
"""The orders of the task list (`GET /api/tasks?sort=`); ties go to the newest task."""


class TasksPublic(BaseModel):
    data: list[TaskPublic]
    count: int = Field(description="All matching tasks, not only this page.")


class MetricPoint(BaseModel):
    id: int = Field(description="The event id (the server-sent event id of the same event).")
    scope: str = Field(description="step, epoch or test.")
    epoch: int
    step: int = Field(description="Optimizer steps done in the whole run.")
    values: dict[str, float]
    time: datetime


class TaskMetrics(BaseModel):
    data: list[MetricPoint]
    count: int


class TaskLog(BaseModel):
    text: str
    offset: int = Field(description="Byte offset of `text` in log.txt.")
    next_offset: int = Field(description="Where to continue reading.")
    size: int = Field(description="The log's size in bytes now.")

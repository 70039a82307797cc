"""Database tables. Every user-owned row has `owner_id`; services filter on it for every query.

Resource ids exposed in URLs are random hex strings (not sequential), users are integers.
Status transitions of tasks are written here before anything else acts on them.
"""

from __future__ import annotations

import enum
import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware moment, stored and read back in UTC on every database.

    SQLite keeps no offset and hands back naive datetimes, which serialize without one: a browser
    reads such an ISO time as local time, and a comparison with an aware time raises. Here every
    value read is aware UTC, and every value written is converted to UTC first.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None or value.tzinfo is None:
            return value  # naive values are taken as UTC already
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def new_id() -> str:
    return secrets.token_hex(8)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class TaskStatus(enum.StrEnum):
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    STOPPED = "STOPPED"

    @property
    def finished(self) -> bool:
        return self in (TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.STOPPED)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    max_running_tasks: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """Per-user quota; None = the server default."""
    dataset_quota_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """Storage quota of the user's datasets; None = the server default (as for the three below)."""
    artifact_quota_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    max_cpus_per_task: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_gpus_per_task: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_workers_per_task: Mapped[int | None] = mapped_column(Integer, nullable=True)
    founder: Mapped[bool | None] = mapped_column(Boolean, nullable=True, unique=True, index=True)
    """True on the account the server's first sign-up made administrator, NULL on all others.

    Unique (NULLs are distinct): of concurrent first sign-ups only one row can claim it, so exactly
    one becomes administrator whatever the interleaving, on SQLite and PostgreSQL alike."""
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class LoginSession(Base):
    """A browser session; the cookie holds the raw token, the table only its SHA-256."""

    __tablename__ = "login_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())


class ApiToken(Base):
    """A personal token for the CLI/SDK; shown once at creation, stored as SHA-256."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class Dataset(Base):
    __tablename__ = "datasets"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(32))
    """folder | csv | bitmaps: which dataset node type reads it."""
    path: Mapped[str] = mapped_column(String(500))
    """Relative to the data dir, e.g. datasets/<id>/data."""
    info: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    """classes, counts per class, image size stats."""
    size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class Graph(Base):
    __tablename__ = "graphs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    current_version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)

    versions: Mapped[list[GraphVersion]] = relationship(
        back_populates="graph", cascade="all, delete-orphan", order_by="GraphVersion.version"
    )


class GraphVersion(Base):
    """Every save is a new immutable version; restoring copies an old one into a new version."""

    __tablename__ = "graph_versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    graph_id: Mapped[str] = mapped_column(ForeignKey("graphs.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)

    graph: Mapped[Graph] = relationship(back_populates="versions")

    __table_args__ = (Index("ix_graph_versions_graph_version", "graph_id", "version", unique=True),)


class Task(Base):
    __tablename__ = "tasks"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    graph_id: Mapped[str | None] = mapped_column(
        ForeignKey("graphs.id", ondelete="SET NULL"), nullable=True, index=True
    )
    graph_snapshot: Mapped[dict[str, Any]] = mapped_column(JSON)
    """The graph as submitted: later edits of the saved graph do not change a task."""
    status: Mapped[TaskStatus] = mapped_column(Enum(TaskStatus, native_enum=False, length=16), index=True)
    priority: Mapped[int] = mapped_column(Integer, default=0)
    resources: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    """{"cpus": float, "gpus": float}"""
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, default=3)
    stop_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    resume: Mapped[bool] = mapped_column(Boolean, default=False)
    """Start the next attempt from the newest checkpoint."""
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """{"code", "message", "node_id"} for FAILED tasks."""
    progress: Mapped[float] = mapped_column(default=0.0)
    epoch: Mapped[int] = mapped_column(Integer, default=0)
    best_metrics: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    worker_pid: Mapped[int | None] = mapped_column(Integer, nullable=True)
    worker_ref: Mapped[str | None] = mapped_column(String(200), nullable=True)
    """The runner's handle (Ray actor name) for stop and reconciliation."""
    worker_node: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """The cluster node the current (or last) attempt was placed on."""
    queued_reason: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """Why a QUEUED task has not started yet ({"code", "message", "details"}); None otherwise."""
    heartbeat_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, index=True)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class TaskEvent(Base):
    """Everything a task reported (status, metric, log, artifact, error), in order.

    The autoincrement id is the server-sent event id, so a client resumes with Last-Event-ID.
    Ids must never be handed out twice: SQLite reuses the highest rowid after the newest rows are
    deleted (a deleted task takes its events along) unless the table is AUTOINCREMENT; PostgreSQL's
    sequence never goes back.
    """

    __tablename__ = "task_events"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)

    __table_args__ = (
        Index("ix_task_events_task_id_id", "task_id", "id"),
        Index("ix_task_events_task_kind", "task_id", "kind"),
        {"sqlite_autoincrement": True},
    )


class Model(Base):
    """A trained model: the bundle a successful task left in its artifacts directory."""

    __tablename__ = "models"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    task_id: Mapped[str | None] = mapped_column(ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True)
    name: Mapped[str] = mapped_column(String(200))
    path: Mapped[str] = mapped_column(String(500))
    """Bundle directory relative to the data dir, e.g. artifacts/<task_id>."""
    classes: Mapped[list[Any]] = mapped_column(JSON, default=list)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    input_spec: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    task: Mapped[str] = mapped_column(String(32), default="classification", server_default="classification")
    """The task kind it was trained for (model.json's `task`): classification | regression."""
    input_columns: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True, default=None)
    """A table model's input columns (name, kind, missing, categories); None for image models."""
    target: Mapped[str | None] = mapped_column(String(200), nullable=True, default=None)
    """The column a table model predicts; None for image models."""
    input_type: Mapped[str] = mapped_column(String(32), default="images", server_default="images")
    """The input type it takes (its dataset node's, engine/inputs/registry.py): the port type's name."""
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class SweepStatus(enum.StrEnum):
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"


class Sweep(Base):
    """A hyper-parameter search: trials of one base graph, each trial a normal task of the owner.

    The Optuna study is rebuilt from the `sweep_trials` rows at each decision
    (`dragdl.engine.sweep.study`), so these two tables are the whole state of a sweep."""

    __tablename__ = "sweeps"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    graph_id: Mapped[str | None] = mapped_column(
        ForeignKey("graphs.id", ondelete="SET NULL"), nullable=True, index=True
    )
    base_graph: Mapped[dict[str, Any]] = mapped_column(JSON)
    """The graph with its search section, as submitted."""
    status: Mapped[SweepStatus] = mapped_column(Enum(SweepStatus, native_enum=False, length=16), index=True)
    trials: Mapped[int] = mapped_column(Integer)
    """The budget: how many trials in all."""
    parallel: Mapped[int] = mapped_column(Integer)
    objective: Mapped[str] = mapped_column(String(64))
    direction: Mapped[str] = mapped_column(String(16))
    sampler: Mapped[str] = mapped_column(String(16))
    pruner: Mapped[str] = mapped_column(String(16))
    seed: Mapped[int] = mapped_column(Integer, default=0)
    resources: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    """What each trial's task reserves ({"cpus", "gpus"})."""
    error: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    best_model_id: Mapped[str | None] = mapped_column(
        ForeignKey("models.id", ondelete="SET NULL", name="fk_sweeps_best_model_id_models"), nullable=True
    )
    """The best trial's model once registered: the one model of the sweep in the user's list (the
    other trials' models are listed on asking only)."""
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, index=True)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class SweepTrial(Base):
    """One trial: the params Optuna chose, the task that trains them, and what the study saw."""

    __tablename__ = "sweep_trials"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    sweep_id: Mapped[str] = mapped_column(ForeignKey("sweeps.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    task_id: Mapped[str | None] = mapped_column(ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True)
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    """`node.param` -> sampled value."""
    state: Mapped[str] = mapped_column(String(16))
    """RUNNING | COMPLETE | PRUNED | FAILED | STOPPED (`dragdl.engine.sweep.study.TrialState`)."""
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    intermediate: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    """Objective value per epoch ({"1": 0.91, ...}), read from the task's epoch metrics."""
    system_attrs: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    last_event_id: Mapped[int] = mapped_column(Integer, default=0)
    """The task's last metric event already reported to the study."""
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)

    __table_args__ = (Index("ix_sweep_trials_sweep_number", "sweep_id", "number", unique=True),)

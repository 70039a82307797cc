"""Typed answers of the REST API. Unknown fields are ignored, so a newer server does not break the SDK."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

FINAL_STATUSES = ("SUCCEEDED", "FAILED", "STOPPED")


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, protected_namespaces=())


def as_utc(moment: datetime) -> datetime:
    """SQLite-backed servers send some times without a zone; every server time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class User(_Model):
    id: int
    username: str
    is_admin: bool = False
    created_at: datetime | None = None


class ApiToken(_Model):
    id: str
    name: str
    prefix: str = ""
    token: str | None = None
    """The secret itself: only in the answer that created it."""


class GraphSummary(_Model):
    id: str
    name: str
    current_version: int
    created_at: datetime
    updated_at: datetime


class Graph(GraphSummary):
    graph: dict[str, Any]


class ValidationResult(_Model):
    ok: bool
    errors: list[dict[str, Any]] = Field(default_factory=list)
    shapes: dict[str, str] = Field(default_factory=dict)
    dataset: dict[str, Any] | None = None


class TaskError(_Model):
    code: str
    message: str
    node_id: str | None = None


class Task(_Model):
    id: str
    name: str
    graph_id: str | None = None
    status: str
    priority: int = 0
    resources: dict[str, float | None] = Field(default_factory=dict)
    attempts: int = 0
    max_attempts: int = 0
    stop_requested: bool = False
    error: TaskError | None = None
    progress: float = 0.0
    epoch: int = 0
    best_metrics: dict[str, float] = Field(default_factory=dict)
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    elapsed_s: float | None = None
    graph: dict[str, Any] | None = None
    """The submitted graph: in the detail view (`get_task`, `submit`) only."""
    config: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES


class MetricPoint(_Model):
    id: int
    scope: str
    epoch: int
    step: int
    values: dict[str, float]
    time: datetime


class TaskLog(_Model):
    text: str
    offset: int
    next_offset: int
    size: int


class Column(_Model):
    """A column a table model takes."""

    name: str
    kind: str
    """number | category"""
    missing: int = 0
    categories: list[str] = Field(default_factory=list)


class Model(_Model):
    id: str
    name: str
    task_id: str | None = None
    task: str = "classification"
    """classification | regression (servers before task kinds: classification)."""
    classes: list[str] = Field(default_factory=list)
    input_columns: list[Column] | None = None
    """A table model's input columns; None for an image model."""
    target: str | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    input_spec: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    exports: list[str] = Field(default_factory=list)


class ClassScore(_Model):
    label: str = Field(alias="class")
    probability: float


class Prediction(_Model):
    filename: str
    label: str = Field(alias="class")
    index: int
    probability: float
    top_k: list[ClassScore]
    probabilities: list[float]

    def to_json(self) -> dict[str, Any]:
        """The same JSON as a local prediction (`dragdl.engine.bundle.Prediction.to_json`)."""
        return {
            "class": self.label,
            "index": self.index,
            "probability": self.probability,
            "top_k": [{"class": s.label, "probability": s.probability} for s in self.top_k],
            "probabilities": self.probabilities,
        }


class ValuePrediction(_Model):
    """A regression model's prediction for one image."""

    filename: str
    value: float
    inverted: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value}


class Predictions(_Model):
    model_id: str
    classes: list[str]
    predictions: list[Prediction | ValuePrediction]


class SamplePrediction(_Model):
    """The answer for one sample of a file (a sequence of a .ts file, a row of an .npy array)."""

    filename: str
    sample: int
    """Its position in the file, counted from 1."""
    answer: dict[str, Any]
    """The task kind's answer: label, probability, top_k and probabilities, or a value."""
    summary: str
    """The answer in one line (`fast 97.1%`, `3.25`)."""


class SamplePredictions(_Model):
    model_id: str
    task: str
    classes: list[str] = Field(default_factory=list)
    predictions: list[SamplePrediction]


class RowPrediction(_Model):
    """A table model's prediction for one row: `value` (regression), or the class scores."""

    value: float | None = None
    label: str | None = None
    index: int | None = None
    probability: float | None = None
    top_k: list[ClassScore] = Field(default_factory=list)
    probabilities: list[float] = Field(default_factory=list)


class RowPredictions(_Model):
    model_id: str
    task: str
    target: str | None = None
    classes: list[str] = Field(default_factory=list)
    predictions: list[RowPrediction]


class ClassSummary(_Model):
    index: int
    name: str
    count: int


class Dataset(_Model):
    id: str
    name: str
    kind: str
    count: int
    channels: int
    size: tuple[int, int] | None = None
    classes: list[ClassSummary] = Field(default_factory=list)
    columns: list[Column] | None = None
    """A table dataset's columns; None for images."""
    size_bytes: int = 0
    created_at: datetime
    node: dict[str, Any] = Field(default_factory=dict)


class Trial(_Model):
    number: int
    task_id: str | None = None
    task_status: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    state: str
    """RUNNING, COMPLETE, PRUNED, FAILED or STOPPED."""
    value: float | None = None
    intermediate: dict[str, float] = Field(default_factory=dict)


class Sweep(_Model):
    id: str
    name: str
    status: str
    trials: int
    parallel: int
    objective: str
    direction: str
    sampler: str
    pruner: str
    counts: dict[str, int] = Field(default_factory=dict)
    best_value: float | None = None
    best_trial: int | None = None
    best_model_id: str | None = None
    """The model registered as the sweep's best (`register_best`), if one is."""
    trial_list: list[Trial] = Field(default_factory=list)
    """The trials: in the detail view (`get_sweep`, `create_sweep`) only."""
    importance: dict[str, float] = Field(default_factory=dict)
    importance_trials: int = 0
    """The complete trials the importance was computed from."""
    importance_min_trials: int = 0
    """Below this many complete trials the importance means little (detail view only)."""

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES

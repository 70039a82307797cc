"""Sweeps: creation, the sweep views and their trials."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dragdl.db.models import SweepStatus, TaskStatus
from dragdl.server.schemas.tasks import TaskResources


class SweepCreate(BaseModel):
    """A sweep of a graph with a `search` section: inline (`graph`) or a saved graph (`graph_id`)."""

    model_config = ConfigDict(extra="forbid")

    graph: dict[str, Any] | None = Field(None, description="The graph JSON with its search section.")
    graph_id: str | None = Field(None, max_length=64, description="A saved graph of yours.")
    name: str | None = Field(None, min_length=1, max_length=180, description="Defaults to the graph's name.")
    trials: int = Field(
        16, ge=1, le=1000, description="The budget: trials in all (a grid: at most its size)."
    )
    parallel: int = Field(2, ge=1, le=64, description="Trials training at once (your running quota applies).")
    objective: str | None = Field(
        None,
        max_length=64,
        description="A validation metric of the train node's task kind (val_accuracy, val_loss, val_r2 ...); "
        "default: the kind's first metric. Its direction follows from the kind.",
    )
    sampler: Literal["random", "grid", "tpe"] = "tpe"
    pruner: Literal["none", "median", "halving"] = Field(
        "median", description="Stops poor trials early from their per-epoch objective values."
    )
    seed: int = Field(0, ge=0, le=2**31 - 1)
    resources: TaskResources = Field(default_factory=TaskResources)

    @model_validator(mode="after")
    def _one_graph(self) -> SweepCreate:
        if (self.graph is None) == (self.graph_id is None):
            raise ValueError("send exactly one of 'graph' and 'graph_id'")
        return self


class TrialPublic(BaseModel):
    number: int = Field(description="0-based, in the order the trials were asked.")
    task_id: str | None
    task_status: TaskStatus | None = Field(description="The status of the trial's task (null: deleted).")
    params: dict[str, Any] = Field(description="`node.param` -> the value the trial trains with.")
    state: Literal["RUNNING", "COMPLETE", "PRUNED", "FAILED", "STOPPED"]
    value: float | None = Field(description="The objective: the task's best; a pruned trial's best so far.")
    intermediate: dict[str, float] = Field(description="The objective per epoch (1-based keys).")
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class SweepPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    name: str
    graph_id: str | None
    status: SweepStatus
    trials: int
    parallel: int
    objective: str
    direction: Literal["maximize", "minimize"]
    sampler: Literal["random", "grid", "tpe"]
    pruner: Literal["none", "median", "halving"]
    seed: int
    error: str | None
    best_model_id: str | None = Field(
        description="The model registered as the sweep's best (`register-best`), if one is."
    )
    created_at: datetime
    finished_at: datetime | None


class SweepSummary(SweepPublic):
    counts: dict[str, int] = Field(description="Trials per state.")
    best_value: float | None


class SweepsPublic(BaseModel):
    data: list[SweepSummary]
    count: int


class SweepDetail(SweepSummary):
    base_graph: dict[str, Any] = Field(description="The graph swept, with its search section, as submitted.")
    search: dict[str, dict[str, dict[str, Any]]] = Field(description="The graph's search section.")
    trial_list: list[TrialPublic]
    best_trial: int | None = Field(description="The number of the best complete trial.")
    importance: dict[str, float] = Field(
        description="Each searched param's importance for the objective (empty below two complete trials)."
    )
    importance_trials: int = Field(
        0, description="The complete trials when the importance was computed (it reads the newest 200)."
    )
    importance_min_trials: int = Field(
        description="Complete trials below which the importance means little (fANOVA splits a few "
        "points by chance): at least 10, and 5 per searched param. Clients say so below it."
    )


class SweepRegisterBest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="The model's name (the web UI words it in its language); "
        'default "<sweep> (best of sweep)".',
    )


class SweepBestModel(BaseModel):
    model_id: str
    name: str

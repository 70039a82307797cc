"""What the engine answers to clients, as typed models: the node catalog and validation results.

Kept free of torch so that the server can declare them as response models at import time (its
OpenAPI document, and so the generated TypeScript types, then describe them exactly).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.graph.errors import GraphError


class PortSpec(BaseModel):
    name: str
    types: list[str] = Field(
        description="The port types it takes or gives: an input type's name (images, table, sequence, "
        "or one another module registered), tensor, logits, or data (any input type)."
    )
    multiple: bool
    label: str


class CatalogEntry(BaseModel):
    """One node type: the palette entry, its ports and the JSON Schema of its params form."""

    type: str
    category: Literal["dataset", "op", "layer", "model", "train"]
    title: str
    description: str
    inputs: list[PortSpec]
    outputs: list[PortSpec]
    random: bool
    task: str | None = Field(None, description="The task kind of a train node (classification, regression).")
    params_schema: dict[str, Any] = Field(description="JSON Schema of the params (with x-* form hints).")


ColumnKind = Literal["number", "category"]


class ColumnInfo(BaseModel):
    """One column of a table as the user sees it: its kind, how many values are missing, its categories."""

    # Unknown keys are ignored: a bundle written by a newer DragDL stays readable.
    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str
    kind: ColumnKind
    missing: int = 0
    categories: tuple[str, ...] = ()
    """Sorted; only for "category" columns."""

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class DatasetSummary(BaseModel):
    input_type: str = Field(
        "images", description="The dataset's input type (images, table, sequence): its port type."
    )
    classes: list[str] = Field(description="The class names; empty for a table's numeric target.")
    count: int
    channels: int
    size: str | None = Field(description="HxW when all images share it.")
    columns: list[ColumnInfo] | None = Field(
        None, description="A table's feature columns (kind, missing values, categories); null for images."
    )
    target: str | None = Field(None, description="A table's target column.")
    shape: list[int | None] | None = Field(
        None,
        description="One sample's shape as the dataset node outputs it: (C, H, W) images, (F,) features, "
        "(T, F) sequences; a dimension that varies is null.",
    )
    sample: str | None = Field(
        None, description="One sample in words, as its input type says it: '28 steps x 28 features'."
    )
    samples_name: str = Field("samples", description="What the count counts: images, rows, sequences.")
    missing_targets: int = Field(
        0, description="Rows left out of the data because their target is missing (`count` is without them)."
    )
    missing_target_rows: list[int] = Field(
        default_factory=list, description="The first of those rows (1-based, as numbered in the file)."
    )


class ValidationResult(BaseModel):
    """What `POST /api/graphs/validate`, `dragdl validate` and the canvas receive."""

    ok: bool
    errors: list[GraphError] = Field(default_factory=list)
    shapes: dict[str, str] = Field(
        default_factory=dict, description="Output shape per node id, e.g. 16x28x28 or 13 features."
    )
    dataset: DatasetSummary | None = None
    model_inputs: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="What each pretrained model node expects (size, normalization)."
    )
    task: str | None = Field(None, description="The train node's task kind, when the graph has one.")


class MetricDescriptor(BaseModel):
    """How one metric of a task kind is shown and judged (the engine's `MetricSpec`)."""

    key: str = Field(description="The metric's name without the val_/test_ prefix (accuracy, r2).")
    label: str
    format: Literal["percent", "number"] = Field(description="percent: a share in 0..1, shown as a %.")
    unit: str | None = None
    higher_is_better: bool
    charted: bool = Field(description="Drawn as an epoch curve and offered as a sweep objective.")


class TaskKindEntry(BaseModel):
    """A task kind as clients present it: its metrics, its headline figure and one answer's schema."""

    name: str = Field(description="What train nodes, reports and models name it (TaskKind.name).")
    title: str
    metrics: list[MetricDescriptor] = Field(description="Every epoch and test metric besides the loss.")
    headline: str = Field(description="The key of the metric that sums up a run.")
    ranks_classes: bool = Field(description="Whether an answer ranks the model's classes (top-k).")
    answer_schema: dict[str, Any] = Field(description="JSON Schema of one prediction answer.")


class Catalog(BaseModel):
    """What the canvas, the monitor and the prediction views build on (GET /api/catalog)."""

    nodes: list[CatalogEntry]
    task_kinds: list[TaskKindEntry]

"""Trained models and predictions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


def _registered_kind(name: str) -> str:
    # The registry imports torch: asked when a model is described, never when the app starts.
    from dragdl.engine.tasks.registry import get_task_kind

    return get_task_kind(name).name


TaskKindName = Annotated[str, AfterValidator(_registered_kind)]
"""A registered task kind's name (engine/tasks/registry.py; GET /api/catalog lists them)."""


class ColumnPublic(BaseModel):
    """A column of a table: its name, kind, how many values were missing in training, its categories."""

    name: str
    kind: Literal["number", "category"]
    missing: int = Field(0, description="Missing values in the training table.")
    categories: list[str] = Field(
        default_factory=list,
        description="The values of a category column, sorted; empty for numbers. An uploaded table's "
        "description keeps the first 20 (cut to 100 characters): `category_count` has them all.",
    )
    category_count: int = Field(
        # Descriptions written before the count (and models' columns, which list them all) count the list.
        default_factory=lambda data: len(data["categories"]),
        description="How many distinct values the column holds (0 for numbers), however many are listed.",
    )


class ModelPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True, protected_namespaces=())

    id: str
    name: str
    task_id: str | None
    task: TaskKindName = Field(
        "classification", description="What the model predicts: classes, or one number (regression)."
    )
    classes: list[str] = Field(description="The class names, in output order; empty for regression.")
    input_columns: list[ColumnPublic] | None = Field(
        None,
        description="The columns a table model takes (see /predict/rows); null for image models.",
    )
    target: str | None = Field(None, description="The column a table model predicts; null for image models.")
    input_type: str = Field(
        "images",
        description="The input type it takes (images, table, sequence; GET /api/catalog's dataset nodes' "
        "output port types): which prediction request it answers.",
    )
    metrics: dict[str, Any] = Field(
        description="From the test report: `test` (test_accuracy, ... or test_mae, test_rmse, test_r2), "
        "best_epoch, best_score, monitor, epochs_completed."
    )
    input_spec: dict[str, Any]
    created_at: datetime
    exports: list[str] = Field(
        default_factory=list,
        description="Formats already exported (onnx, torchscript); the others are made on first download.",
    )


class ModelsPublic(BaseModel):
    data: list[ModelPublic]
    count: int
    hidden_trials: int = 0
    """Models of sweep trials left out of `data` (not registered as their sweep's best)."""


class ClassScore(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    label: str = Field(alias="class", serialization_alias="class")
    probability: float


class ImagePredictionPublic(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    filename: str
    label: str = Field(alias="class", serialization_alias="class", description="The most probable class.")
    index: int = Field(description="Its position in `classes`.")
    probability: float
    top_k: list[ClassScore]
    probabilities: list[float] = Field(description="One probability per class, in the order of `classes`.")
    inverted: bool = Field(
        False,
        description="The image was inverted (255 - value) to have the paper of the training images.",
    )


class ImageValuePublic(BaseModel):
    """The prediction of a regression model for one image."""

    filename: str
    value: float = Field(description="The predicted number.")
    inverted: bool = Field(
        False,
        description="The image was inverted (255 - value) to have the paper of the training images.",
    )


class PredictionsPublic(BaseModel):
    model_config = ConfigDict(protected_namespaces=())

    model_id: str
    classes: list[str] = Field(description="The class names, in output order; empty for regression.")
    batched: bool = Field(description="Whether the server merged concurrent requests into batches.")
    predictions: list[ImagePredictionPublic | ImageValuePublic] = Field(
        description="One per image, in order: class scores for a classifier, `value` for a regression model."
    )


class SamplePredictionPublic(BaseModel):
    """The answer for one sample of an uploaded file (a sequence of a .ts file, an .npy array's row)."""

    filename: str
    sample: int = Field(description="Its position in the file, counted from 1.")
    answer: dict[str, Any] = Field(
        description="The task kind's answer: the `answer_schema` of the kind named by `task` in GET "
        "/api/catalog (a classifier's label, probability, top_k and probabilities; a regression's value)."
    )
    summary: str = Field(description="The answer in one line, as the CLI prints it (`cat 97.1%`, `3.25`).")


class SamplePredictionsPublic(BaseModel):
    """A model whose input type reads files holding several samples (sequences): one answer per sample."""

    model_config = ConfigDict(protected_namespaces=())

    model_id: str
    task: TaskKindName
    classes: list[str] = Field(description="The class names, in output order; empty for regression.")
    batched: bool = Field(description="Whether the server merged concurrent requests into batches.")
    predictions: list[SamplePredictionPublic] = Field(
        description="One per sample of each file, in the order of the files and of the samples in each."
    )


MAX_PREDICT_ROWS = 1000
"""Rows of one JSON prediction request."""

CellValue = float | int | str | bool | None


class RowsPredictionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rows: list[dict[str, CellValue]] = Field(
        min_length=1,
        max_length=MAX_PREDICT_ROWS,
        description="One object per row: column name -> value (a number, a category's text, or null "
        "for missing). Columns the model does not take are ignored.",
    )


class RowClassPrediction(BaseModel):
    """A classifier's answer for one row (the engine's `TaskKind.answer`)."""

    label: str = Field(description="The most probable class.")
    index: int = Field(description="Its position in `classes`.")
    probability: float
    top_k: list[ClassScore]
    probabilities: list[float] = Field(description="One probability per class, in the order of `classes`.")


class RowValuePrediction(BaseModel):
    """A regression model's answer for one row."""

    value: float = Field(description="The predicted number.")


class RowPredictionsPublic(BaseModel):
    model_config = ConfigDict(protected_namespaces=())

    model_id: str
    task: TaskKindName
    target: str | None = Field(description="The column the model predicts.")
    classes: list[str] = Field(description="The class names (classification); empty for regression.")
    predictions: list[RowClassPrediction | RowValuePrediction] = Field(
        description="One per row, in order: class scores for a classifier, `value` for a regression model."
    )

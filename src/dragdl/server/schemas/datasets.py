"""Uploaded datasets: the public view, with per-class counts and, in the detail view, sample URLs
(images) or sample series for small line plots (sequences)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from dragdl.server.schemas.models import ColumnPublic

DatasetKind = Literal["folder", "csv", "bitmaps", "table", "sequence"]


class SizeStats(BaseModel):
    """Image sizes as [height, width]: per dimension, the smallest, largest and mean."""

    min: tuple[int, int]
    max: tuple[int, int]
    mean: tuple[float, float]


class ClassSummary(BaseModel):
    index: int
    name: str
    count: int


class ClassPreview(ClassSummary):
    samples: list[str] = Field(description="URLs of small PNG previews (at most 128 px) of a few images.")


class LengthStats(BaseModel):
    min: int
    max: int
    mean: float


class TargetStats(BaseModel):
    """A sequence set's numeric targets (regression)."""

    min: float
    max: float
    mean: float
    std: float


class SequenceSummary(BaseModel):
    """An uploaded sequence set: T steps of F features per sample."""

    format: Literal["ts", "csv_folders", "npy", "recording"] = Field(
        description="ts: a UCR/UEA .ts file or TRAIN/TEST pair; csv_folders: one CSV per sequence in class "
        "folders; npy: X.npy with its labels; recording: one CSV cut into windows (the dataset's node "
        "carries its label column, window and stride)."
    )
    features: int = Field(description="F, the values per time step.")
    length: LengthStats = Field(description="Time steps per sequence.")
    equal_length: bool
    test_count: int | None = Field(
        description="Sequences of the predefined test split (a .ts TEST file); null when the split is drawn."
    )
    targets: TargetStats | None = Field(description="Numeric targets; null when the set has classes.")


class SeriesSample(BaseModel):
    sample: int = Field(description="The sequence's index in the dataset.")
    length: int = Field(description="Its time steps.")
    target: float | None = Field(description="Its numeric target; null for a class.")
    values: list[list[float]] = Field(
        description="Per plotted feature, min(length, max_points) values at evenly spaced steps: point i "
        "is step round(i * (length - 1) / (points - 1)); every step when the sequence is that short."
    )


class SeriesGroup(BaseModel):
    name: str | None = Field(description="The class; null for a range of numeric targets.")
    index: int | None = Field(description="The class index; null for numeric targets.")
    samples: list[SeriesSample]


class FeatureStats(BaseModel):
    index: int
    mean: float
    std: float
    min: float
    max: float


class SequencePreview(BaseModel):
    """A few series per class (or per target range, lowest first) for small line plots, and
    statistics per feature over every valid step; bounded however large the set."""

    groups: list[SeriesGroup]
    features: int
    features_shown: int = Field(description="Features plotted per series (the first ones).")
    max_points: int = Field(description="Points per plotted feature at most.")
    feature_stats: list[FeatureStats] = Field(description="Of the first 64 features.")


class DatasetPublic(BaseModel):
    id: str
    name: str
    kind: DatasetKind = Field(
        description="folder: class folders; csv: a path,label list with images; bitmaps: one .npy per class; "
        "table: a CSV, TSV or Parquet table (see `columns`); sequence: time series (see `sequence`)."
    )
    count: int = Field(description="Images in all classes; a table's rows.")
    channels: int = Field(description="1 when every image is grayscale, else 3; 0 for a table.")
    size: tuple[int, int] | None = Field(
        description="[height, width] when every image has it, else null (and for a table)."
    )
    size_stats: SizeStats | None = Field(description="The images' sizes; null for a table.")
    classes: list[ClassSummary] = Field(description="The classes and their images; empty for a table.")
    columns: list[ColumnPublic] | None = Field(
        None,
        description="A table's columns: name, kind (number or category), missing values, categories; "
        "null for images.",
    )
    sequence: SequenceSummary | None = Field(None, description="A sequence set's shape; null otherwise.")
    size_bytes: int
    created_at: datetime
    node: dict[str, Any] = Field(
        description="The graph node that reads this dataset, ready to drop on the canvas.",
        examples=[{"type": "dataset.uploaded", "params": {"dataset_id": "3f2a9c0d1e4b5a6f"}}],
    )


class DatasetDetail(DatasetPublic):
    classes: list[ClassPreview]  # type: ignore[assignment]
    series: SequencePreview | None = Field(
        None, description="A sequence set's sample series and feature statistics; null otherwise."
    )


class DatasetsPublic(BaseModel):
    data: list[DatasetPublic]
    count: int

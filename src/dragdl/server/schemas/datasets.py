"""Uploaded datasets: the public view, with per-class counts and, in the detail view, sample URLs."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from dragdl.server.schemas.models import ColumnPublic

DatasetKind = Literal["folder", "csv", "bitmaps", "table"]


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


class DatasetPublic(BaseModel):
    id: str
    name: str
    kind: DatasetKind = Field(
        description="folder: class folders; csv: a path,label list with images; bitmaps: one .npy per class; "
        "table: a CSV, TSV or Parquet table (see `columns`)."
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
    size_bytes: int
    created_at: datetime
    node: dict[str, Any] = Field(
        description="The graph node that reads this dataset, ready to drop on the canvas.",
        examples=[{"type": "dataset.uploaded", "params": {"dataset_id": "3f2a9c0d1e4b5a6f"}}],
    )


class DatasetDetail(DatasetPublic):
    classes: list[ClassPreview]  # type: ignore[assignment]


class DatasetsPublic(BaseModel):
    data: list[DatasetPublic]
    count: int

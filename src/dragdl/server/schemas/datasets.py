"""Uploaded datasets: the public view, with per-class counts and, in the detail view, sample URLs."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

DatasetKind = Literal["folder", "csv", "bitmaps"]


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
        description="folder: class folders; csv: a path,label list with images; bitmaps: one .npy per class."
    )
    count: int = Field(description="Images in all classes.")
    channels: int = Field(description="1 when every image is grayscale, else 3.")
    size: tuple[int, int] | None = Field(description="[height, width] when every image has it, else null.")
    size_stats: SizeStats
    classes: list[ClassSummary]
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

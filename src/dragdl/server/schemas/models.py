"""Trained models and predictions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ModelPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True, protected_namespaces=())

    id: str
    name: str
    task_id: str | None
    classes: list[str]
    metrics: dict[str, Any]
    input_spec: dict[str, Any]
    created_at: datetime
    exports: list[str] = Field(
        default_factory=list,
        description="Formats already exported (onnx, torchscript); the others are made on first download.",
    )


class ModelsPublic(BaseModel):
    data: list[ModelPublic]
    count: int


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


class PredictionsPublic(BaseModel):
    model_config = ConfigDict(protected_namespaces=())

    model_id: str
    classes: list[str]
    batched: bool = Field(description="Whether the server merged concurrent requests into batches.")
    predictions: list[ImagePredictionPublic]

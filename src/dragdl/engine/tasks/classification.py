"""Classification: one of N classes per sample, cross-entropy, accuracy, a confusion matrix."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch
from pydantic import BaseModel
from torch import Tensor, nn

from dragdl.engine.data.base import DatasetError, DatasetInfo, Source
from dragdl.engine.graph.errors import NodeError
from dragdl.engine.tasks.base import MetricSpec, RunningMetrics, TaskKind
from dragdl.engine.tasks.metrics import averages, confusion_matrix, per_class_metrics
from dragdl.engine.tasks.settings import TrainConfig


class ClassificationMetrics(RunningMetrics):
    """Loss, accuracy and (from 10 classes) top-5 accuracy."""

    def __init__(self, device: torch.device, top5: bool) -> None:
        self.top5 = top5
        super().__init__(device)

    def keys(self) -> tuple[str, ...]:
        return ("loss", "correct", "correct5") if self.top5 else ("loss", "correct")

    def fold(self, sums: dict[str, Tensor], outputs: Tensor, targets: Tensor) -> None:
        sums["correct"].add_((outputs.argmax(dim=1) == targets).sum())
        if self.top5:
            top = outputs.topk(min(5, outputs.shape[1]), dim=1).indices
            sums["correct5"].add_((top == targets[:, None]).any(dim=1).sum())

    def figures(self, sums: dict[str, float], count: int) -> dict[str, float]:
        out = {"loss": sums["loss"] / count, "accuracy": sums["correct"] / count}
        if self.top5:
            out["top5_accuracy"] = sums["correct5"] / count
        return out


_PROBABILITY: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}

NUMERIC_CLASSES_LIMIT = 20
"""More classes than this, all numbers, ..."""
ROWS_PER_CLASS = 10
"""... with fewer samples than this per class on average, read as a value to regress."""


def _is_number(name: str) -> bool:
    try:
        return math.isfinite(float(name))
    except ValueError:
        return False


class Classification(TaskKind):
    name: ClassVar[str] = "classification"
    title: ClassVar[str] = "Classification"
    target: ClassVar[str] = "classes"
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = (
        MetricSpec("accuracy", "Accuracy", "percent", higher_is_better=True),
        MetricSpec("top5_accuracy", "Top-5 accuracy", "percent", higher_is_better=True, charted=False),
    )
    headline: ClassVar[str] = "accuracy"
    ranks_classes: ClassVar[bool] = True
    classes_are_vocabulary: ClassVar[bool] = True
    output_mismatch_code: ClassVar[str] = "output_mismatch"
    export_output_name: ClassVar[str] = "logits"
    export_output_meaning: ClassVar[str] = (
        "logits: unnormalised class scores; softmax over the last axis gives probabilities."
    )
    answer_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "The most probable class."},
            "index": {"type": "integer", "description": "Its index in the model's classes."},
            "probability": _PROBABILITY,
            "top_k": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"class": {"type": "string"}, "probability": _PROBABILITY},
                    "required": ["class", "probability"],
                },
            },
            "probabilities": {"type": "array", "items": _PROBABILITY, "description": "One per class."},
        },
        "required": ["label", "index", "probability", "top_k", "probabilities"],
    }

    def summarize(self, answer: dict[str, Any]) -> str:
        return f"{answer['label']} {answer['probability']:.1%}"

    def expected_output(self, outputs: int) -> str:
        return f"one score per class ({outputs})"

    def output_width_hint(self, outputs: int) -> str:
        return f"the dataset has {outputs} classes: set out_features of the last Linear to 'auto'"

    def output_size(self, info: DatasetInfo) -> int:
        if len(info.classes) < 2:
            only = f" ({info.classes[0]!r})" if info.classes else ""
            raise DatasetError(
                f"the dataset has {len(info.classes)} class{only}; a classifier needs at least 2",
                code="too_few_classes",
            )
        return len(info.classes)

    def dataset_warnings(self, info: DatasetInfo) -> list[NodeError]:
        # Many classes that are all numbers, each seen only a few times, are a measurement (a mass
        # in grams: "94 classes"): a classifier learns each value as a name and cannot answer one
        # between them. Digits, ratings or numeric codes have few classes or many rows per class.
        classes = len(info.classes)
        if classes <= NUMERIC_CLASSES_LIMIT or info.count >= ROWS_PER_CLASS * classes:
            return []
        if not all(_is_number(name) for name in info.classes):
            return []
        target = f"the target column {info.target!r}" if info.target else "the labels"
        return [
            NodeError(
                "classes_look_like_values",
                f"{target} holds {classes} distinct numbers in {info.count} rows: a classifier learns "
                "each number as a class of its own and cannot answer a value between them; to predict "
                "the number, use a Regressor instead",
                column=info.target or "",
                classes=classes,
                count=info.count,
                suggest="regression",
            )
        ]

    def targets(self, source: Source) -> np.ndarray:
        return np.asarray(source.labels, dtype=np.int64)

    def strata(self, targets: np.ndarray) -> np.ndarray:
        # Stratified: every split keeps the class proportions.
        return targets

    def criterion(self, config: BaseModel, scale: tuple[float, float] | None = None) -> nn.Module:
        smoothing = config.label_smoothing if isinstance(config, TrainConfig) else 0.0
        return nn.CrossEntropyLoss(label_smoothing=smoothing)

    def running(self, device: torch.device, classes: list[str]) -> RunningMetrics:
        return ClassificationMetrics(device, top5=len(classes) >= 10)

    def collect(self, outputs: Tensor) -> Tensor:
        return outputs.argmax(dim=1)

    def test_details(self, preds: np.ndarray, targets: np.ndarray, classes: list[str]) -> dict[str, Any]:
        matrix = confusion_matrix(targets.astype(np.int64), preds.astype(np.int64), len(classes))
        rows = per_class_metrics(matrix, classes)
        return {"per_class": rows, "averages": averages(rows), "confusion_matrix": matrix.tolist()}

    def answer(self, outputs: Tensor, classes: list[str], top: int) -> list[dict[str, Any]]:
        probabilities = torch.softmax(outputs.float(), dim=1)
        k = max(1, min(top, len(classes)))
        values, indices = probabilities.topk(k, dim=1)
        answers = []
        for row, vals, idx in zip(probabilities.tolist(), values.tolist(), indices.tolist(), strict=True):
            answers.append(
                {
                    "label": classes[idx[0]],
                    "index": idx[0],
                    "probability": vals[0],
                    "top_k": [
                        {"class": classes[i], "probability": p} for i, p in zip(idx, vals, strict=True)
                    ],
                    "probabilities": row,
                }
            )
        return answers

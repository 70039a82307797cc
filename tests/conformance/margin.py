"""A dummy third task kind for the conformance test, written as a third party would: one module.

`margin`: classification trained with the multi-class hinge loss, answering the class and its
margin over the runner-up (no probabilities). The module follows docs/architecture.md's recipe
"Adding a task kind" and nothing else:

1. the `TaskKind` (`Margin`) with its `RunningMetrics` and presentation (metric descriptors,
   headline, answer schema, one-line summary), registered by the caller with one
   `register_task_kind(Margin())` line;
2. its train node `train.Margin` and its settings (`MarginConfig`, a `TrainSettings`), registered by
   its `@register` decorator as every node family is;
3. its exported script's blocks: the classifier's, with the hinge loss in place of cross-entropy and
   its `MARGIN` setting, registered with `register_task_blocks`.

Nothing else in DragDL names it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Literal

import numpy as np
import torch
from pydantic import BaseModel, Field
from torch import Tensor, nn

from dragdl.engine.compile.codegen_classification import CLASSIFICATION
from dragdl.engine.compile.codegen_tasks import register_task_blocks
from dragdl.engine.data.base import DatasetError, DatasetInfo, Source
from dragdl.engine.nodes.base import TrainNode
from dragdl.engine.nodes.registry import register
from dragdl.engine.tasks.base import MetricSpec, RunningMetrics, TaskKind
from dragdl.engine.tasks.metrics import confusion_matrix
from dragdl.engine.tasks.settings import TrainSettings


class MarginMetrics(RunningMetrics):
    """Loss, accuracy and the mean margin of the true class over the best other one."""

    def keys(self) -> tuple[str, ...]:
        return ("loss", "correct", "margin")

    def fold(self, sums: dict[str, Tensor], outputs: Tensor, targets: Tensor) -> None:
        scores = outputs.float()
        true = scores.gather(1, targets[:, None]).squeeze(1)
        others = scores.scatter(1, targets[:, None], float("-inf")).amax(dim=1)
        sums["correct"].add_((scores.argmax(dim=1) == targets).sum())
        sums["margin"].add_((true - others).sum())

    def figures(self, sums: dict[str, float], count: int) -> dict[str, float]:
        return {
            "loss": sums["loss"] / count,
            "accuracy": sums["correct"] / count,
            "margin": sums["margin"] / count,
        }


class MarginConfig(TrainSettings):
    """The `train.Margin` node: the multi-class hinge loss."""

    margin: float = Field(1.0, gt=0, le=100, title="Margin", description="The hinge's margin.")
    monitor: Literal["val_loss", "val_accuracy", "val_margin"] = Field(
        "val_loss", title="Watched metric", description="Metric watched by early stopping."
    )


class Margin(TaskKind):
    name: ClassVar[str] = "margin"
    title: ClassVar[str] = "Margin classification"
    target: ClassVar[str] = "classes"
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = (
        MetricSpec("accuracy", "Accuracy", "percent", higher_is_better=True),
        MetricSpec("margin", "Mean margin", higher_is_better=True),
    )
    headline: ClassVar[str] = "accuracy"
    classes_are_vocabulary: ClassVar[bool] = True
    output_mismatch_code: ClassVar[str] = "margin_output_mismatch"
    export_output_name: ClassVar[str] = "scores"
    export_output_meaning: ClassVar[str] = "scores: one per class; the highest is the answer."
    answer_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "index": {"type": "integer"},
            "margin": {"type": "number", "description": "Its score minus the runner-up's."},
        },
        "required": ["label", "index", "margin"],
        "additionalProperties": False,
    }

    def summarize(self, answer: dict[str, Any]) -> str:
        return f"{answer['label']} (margin {answer['margin']:.2f})"

    def expected_output(self, outputs: int) -> str:
        return f"one score per class ({outputs})"

    def output_width_hint(self, outputs: int) -> str:
        return f"the dataset has {outputs} classes: set out_features of the last Linear to 'auto'"

    def output_size(self, info: DatasetInfo) -> int:
        if len(info.classes) < 2:
            raise DatasetError("a margin classifier needs at least 2 classes", code="too_few_classes")
        return len(info.classes)

    def targets(self, source: Source) -> np.ndarray:
        return np.asarray(source.labels, dtype=np.int64)

    def strata(self, targets: np.ndarray) -> np.ndarray:
        return targets

    def criterion(self, config: BaseModel, scale: tuple[float, float] | None = None) -> nn.Module:
        assert isinstance(config, MarginConfig)
        return nn.MultiMarginLoss(margin=config.margin)

    def running(self, device: torch.device, classes: list[str]) -> RunningMetrics:
        return MarginMetrics(device)

    def collect(self, outputs: Tensor) -> Tensor:
        return outputs.argmax(dim=1)

    def test_details(self, preds: np.ndarray, targets: np.ndarray, classes: list[str]) -> dict[str, Any]:
        matrix = confusion_matrix(targets.astype(np.int64), preds.astype(np.int64), len(classes))
        return {"confusion_matrix": matrix.tolist()}

    def answer(self, outputs: Tensor, classes: list[str], top: int) -> list[dict[str, Any]]:
        best = outputs.float().topk(2, dim=1)
        return [
            {"label": classes[i[0]], "index": i[0], "margin": v[0] - v[1]}
            for v, i in zip(best.values.tolist(), best.indices.tolist(), strict=True)
        ]


@register
class MarginTrainer(TrainNode[MarginConfig]):
    type = "train.Margin"
    title = "Train margin classifier"
    description = "Trains the network with the multi-class hinge loss. Connect the last layer here."
    params_model = MarginConfig
    task: ClassVar = Margin()


HINGE = "nn.MultiMarginLoss(margin=MARGIN)"
CROSS_ENTROPY = "nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING)"
assert CROSS_ENTROPY in CLASSIFICATION.evaluate and CROSS_ENTROPY in CLASSIFICATION.train_head

MARGIN_BLOCKS = register_task_blocks(
    Margin.name,
    dataclasses.replace(
        CLASSIFICATION,
        settings=lambda config: [f"MARGIN = {config.margin!r}"],
        evaluate=CLASSIFICATION.evaluate.replace(CROSS_ENTROPY, HINGE),
        train_head=CLASSIFICATION.train_head.replace(CROSS_ENTROPY, HINGE),
    ),
)

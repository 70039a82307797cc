"""The task-kind contract.

A task kind says what the network learns and everything downstream that depends on it: the width
of the head, the targets, the loss, the metrics and which way each is better, how the data is
split, what the test report holds and what a prediction answers. The train node names its kind
(`TrainNode.task`); the trainer, the splits, validation, bundles and prediction ask the kind and
never test for a particular one. Adding a kind is one module here (registered in `registry.py`)
plus its results and prediction views in the frontend (docs/architecture.md, section 9).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

import numpy as np
import torch
from pydantic import BaseModel
from torch import Tensor, nn

from dragdl.engine.data.base import DatasetInfo, ImageSource
from dragdl.engine.data.splits import Splits

TargetType = Literal["classes", "value"]


class RunningMetrics(ABC):
    """Per-epoch sums kept on the device: adding never synchronises with the GPU.

    `values()` (a few `.item()` calls) runs only at log points. `state()`/`load()` go into
    checkpoints so that a resumed epoch reports the same figures as an uninterrupted one.
    """

    @property
    @abstractmethod
    def count(self) -> int:
        """Samples added since the last reset."""

    @abstractmethod
    def reset(self) -> None: ...

    @abstractmethod
    def add(self, loss: Tensor, outputs: Tensor, targets: Tensor) -> None:
        """`loss` is the batch mean."""

    @abstractmethod
    def sums(self) -> dict[str, float]:
        """The raw sums (with `count`), for windowed step logging by differences."""

    @abstractmethod
    def values(self, prefix: str = "") -> dict[str, float]: ...

    @staticmethod
    @abstractmethod
    def window(now: dict[str, float], before: dict[str, float], count: int) -> dict[str, float]:
        """Metrics of the steps between two `sums()`, over `count` samples."""

    @abstractmethod
    def state(self) -> dict[str, Any]: ...

    @abstractmethod
    def load(self, state: dict[str, Any]) -> None: ...


class TaskKind(ABC):
    name: ClassVar[str]
    """Stored in report.json, model.json and the task row: "classification", "regression"."""
    target: ClassVar[TargetType]
    metrics: ClassVar[tuple[str, ...]]
    """Epoch metrics besides the loss, in display order (the monitor charts them)."""
    higher_is_better: ClassVar[frozenset[str]]
    """Metric names (without val_/test_ prefix) where a higher value is better; others: lower."""

    # -- the data -----------------------------------------------------------------------------

    @abstractmethod
    def output_size(self, info: DatasetInfo) -> int:
        """Width of the network's last layer (what 'auto' out_features becomes); raises DatasetError."""

    @abstractmethod
    def targets(self, source: ImageSource) -> np.ndarray:
        """One training target per sample (int64 class index or float32 value); raises DatasetError."""

    @abstractmethod
    def split(
        self,
        targets: np.ndarray,
        val_ratio: float,
        test_ratio: float,
        seed: int,
        predefined_test: np.ndarray | None,
    ) -> Splits: ...

    # -- training -----------------------------------------------------------------------------

    @abstractmethod
    def criterion(self, config: BaseModel) -> nn.Module: ...

    @abstractmethod
    def running(self, device: torch.device, classes: list[str]) -> RunningMetrics: ...

    def better(self, metric: str, score: float, best: float) -> bool:
        base = metric.removeprefix("val_").removeprefix("test_")
        return score > best if base in self.higher_is_better else score < best

    # -- results ------------------------------------------------------------------------------

    @abstractmethod
    def collect(self, outputs: Tensor) -> Tensor:
        """What the test report keeps per sample from the network's outputs (class or value)."""

    @abstractmethod
    def test_details(self, preds: np.ndarray, targets: np.ndarray, classes: list[str]) -> dict[str, Any]:
        """The report's test sections beyond the metrics (confusion matrix, residuals ...)."""

    @abstractmethod
    def answer(self, outputs: Tensor, classes: list[str], top: int) -> list[dict[str, Any]]:
        """One prediction per row of `outputs`, as JSON (what the API and the CLI show)."""

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

    A step only appends its (loss, outputs, targets) to a short list; every `FOLD_EVERY` steps, and
    whenever the sums are read, the list is folded into the sums in one batched pass. A few small
    kernels per step cost as much as a small network's forward pass (tables train with batches of
    32 rows), so this keeps a step's bookkeeping to a list append. Folds happen at the same steps in
    an interrupted and an uninterrupted run (the unfolded steps travel in `state()`), so a resumed
    epoch sums in the same order and reports exactly the same figures.
    """

    FOLD_EVERY = 16

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.reset()

    @property
    def count(self) -> int:
        """Samples added since the last reset."""
        return self._count

    def reset(self) -> None:
        self._pending: list[tuple[Tensor, Tensor, Tensor]] = []
        self._count = 0
        self._sums = {key: torch.zeros((), dtype=torch.float64, device=self.device) for key in self.keys()}

    def add(self, loss: Tensor, outputs: Tensor, targets: Tensor) -> None:
        """`loss` is the batch mean."""
        self._pending.append((loss.detach(), outputs.detach(), targets))
        self._count += targets.shape[0]
        if len(self._pending) >= self.FOLD_EVERY:
            self._fold()

    def _fold(self) -> None:
        if not self._pending:
            return
        losses, outputs, targets = zip(*self._pending, strict=True)
        self._pending = []
        sizes = torch.tensor([t.shape[0] for t in targets], dtype=torch.float64, device=self.device)
        self._sums["loss"].add_((torch.stack(losses).double() * sizes).sum())
        self.fold(self._sums, torch.cat(outputs), torch.cat(targets))

    def sums(self) -> dict[str, float]:
        """The raw sums (with `count`), for windowed step logging by differences."""
        self._fold()
        return {key: value.item() for key, value in self._sums.items()}

    def values(self, prefix: str = "") -> dict[str, float]:
        if self._count == 0:
            return {}
        return {f"{prefix}{k}": v for k, v in self.figures(self.sums(), self._count).items()}

    def window(self, now: dict[str, float], before: dict[str, float], count: int) -> dict[str, float]:
        """Metrics of the steps between two `sums()`, over `count` samples."""
        return self.figures({key: now[key] - before.get(key, 0.0) for key in now}, count)

    def state(self) -> dict[str, Any]:
        # Copies: the sums are added to in place, and the state must not change with them.
        sums = {key: value.clone() for key, value in self._sums.items()}
        return {"sums": sums, "pending": [list(p) for p in self._pending], "count": self._count}

    def load(self, state: dict[str, Any]) -> None:
        self._sums = {key: state["sums"][key].to(self.device) for key in self.keys()}
        self._pending = [(loss, out, y) for loss, out, y in state["pending"]]
        self._pending = [
            (a.to(self.device), b.to(self.device), c.to(self.device)) for a, b, c in self._pending
        ]
        self._count = int(state["count"])

    # -- what a kind adds ------------------------------------------------------------------------

    @abstractmethod
    def keys(self) -> tuple[str, ...]:
        """The names of the sums, "loss" first."""

    @abstractmethod
    def fold(self, sums: dict[str, Tensor], outputs: Tensor, targets: Tensor) -> None:
        """Add the batches' outputs and targets to `sums` (the loss is already added)."""

    @abstractmethod
    def figures(self, sums: dict[str, float], count: int) -> dict[str, float]:
        """The metrics from sums over `count` samples (`loss` and the kind's metrics)."""


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

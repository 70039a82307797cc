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
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import numpy as np
import torch
from pydantic import BaseModel
from torch import Tensor, nn

from dragdl.engine.data.base import DatasetInfo, ImageSource
from dragdl.engine.data.batch import TARGET, Batch, network_inputs
from dragdl.engine.data.splits import Splits, split_indices

TargetType = Literal["classes", "value"]


class RunningMetrics(ABC):
    """Per-epoch sums kept on the device: adding never synchronises with the GPU.

    `values()` (a few `.item()` calls) runs only at log points. `state()`/`load()` go into
    checkpoints so that a resumed epoch reports the same figures as an uninterrupted one: every
    step is added on its own, in order, so the sums never depend on when they were read.
    """

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.reduce: Callable[[Tensor], Tensor] | None = None
        """Set by a distributed run: sums a tensor over its workers, so that `sums()` and `values()`
        describe every worker's samples (each worker sees its share of every batch)."""
        self.reset()

    @property
    def count(self) -> int:
        """Samples added since the last reset."""
        return self._count

    def reset(self) -> None:
        self._count = 0
        self._sums = {key: torch.zeros((), dtype=torch.float64, device=self.device) for key in self.keys()}

    def add(self, loss: Tensor, outputs: Tensor, batch: Batch) -> None:
        """`loss` is the batch mean, `outputs` what the kind's `step` returned for `batch`."""
        targets = batch[TARGET]
        n = targets.shape[0]
        self._sums["loss"].add_(loss.detach(), alpha=n)
        self.fold(self._sums, outputs.detach(), targets)
        self._count += n

    def sums(self) -> dict[str, float]:
        """The raw sums and their sample `count`, for windowed step logging by differences.
        In a distributed run every worker must call it at the same step (it sums over them)."""
        keys = self.keys()
        stacked = torch.stack([self._sums[key] for key in keys])
        count = torch.tensor([float(self._count)], dtype=torch.float64, device=self.device)
        totals = torch.cat([stacked, count])
        if self.reduce is not None:
            totals = self.reduce(totals)
        values = totals.tolist()
        return dict(zip((*keys, "count"), values, strict=True))

    def values(self, prefix: str = "") -> dict[str, float]:
        sums = self.sums()
        count = int(sums.pop("count"))
        if count == 0:
            return {}
        return {f"{prefix}{k}": v for k, v in self.figures(sums, count).items()}

    def window(self, now: dict[str, float], before: dict[str, float]) -> dict[str, float]:
        """Metrics of the steps between two `sums()`."""
        diff = {key: now[key] - before.get(key, 0.0) for key in now}
        return self.figures(diff, int(diff.pop("count")))

    def state(self) -> dict[str, Any]:
        # Copies: the sums are added to in place, and the state must not change with them.
        return {"sums": {key: value.clone() for key, value in self._sums.items()}, "count": self._count}

    def load(self, state: dict[str, Any]) -> None:
        # Checkpoints written before task kinds hold a classifier's sums at the top level.
        sums = state.get("sums") or {
            "loss": state["loss"],
            "correct": state["correct"],
            "correct5": state["correct5"],
        }
        self._sums = {key: sums[key].to(self.device) for key in self.keys()}
        self._count = int(state["count"])

    # -- what a kind adds ------------------------------------------------------------------------

    @abstractmethod
    def keys(self) -> tuple[str, ...]:
        """The names of the sums, "loss" first."""

    @abstractmethod
    def fold(self, sums: dict[str, Tensor], outputs: Tensor, targets: Tensor) -> None:
        """Add a batch's outputs and targets to `sums` (the loss is already added)."""

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
    def strata(self, targets: np.ndarray) -> np.ndarray:
        """An int64 group per sample that every split keeps in proportion (one group: a plain
        random split)."""

    def split(
        self,
        targets: np.ndarray,
        val_ratio: float,
        test_ratio: float,
        seed: int,
        predefined_test: np.ndarray | None,
    ) -> Splits:
        return split_indices(self.strata(targets), val_ratio, test_ratio, seed, predefined_test)

    # -- training -----------------------------------------------------------------------------

    def step(self, model: nn.Module, batch: Batch, criterion: nn.Module) -> tuple[Tensor, Tensor]:
        """The batch's mean loss and the outputs the metrics and the test report read: what the
        trainer, the evaluator, the fast-path probe and the non-finite diagnosis run for a batch
        (inside the run's autocast). The default calls the network with its inputs and takes
        `criterion` against the targets; a kind whose network computes its own loss (detection, for
        example) overrides it."""
        outputs: Tensor = model(*network_inputs(batch))
        loss: Tensor = criterion(outputs, batch[TARGET])
        return loss, outputs

    def output_scale(self, config: BaseModel, train_targets: np.ndarray) -> tuple[float, float] | None:
        """(shift, scale) the network's output is mapped by (`z * scale + shift`), learned from the
        training targets; None to leave the output as it is (classes)."""
        return None

    @abstractmethod
    def criterion(self, config: BaseModel, scale: tuple[float, float] | None = None) -> nn.Module:
        """The loss between the network's (scaled) outputs and the targets; `scale` is what
        `output_scale` chose."""

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

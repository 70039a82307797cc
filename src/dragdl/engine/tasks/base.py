"""The task-kind contract.

A task kind says what the network learns and everything downstream that depends on it: the width
of the head, the targets, the loss, the metrics and which way each is better, how the data is
split, what the test report holds and what a prediction answers. The train node names its kind
(`TrainNode.task`); the trainer, the splits, validation, bundles and prediction ask the kind and
never test for a particular one. Adding a kind is one module here (registered in `registry.py`)
plus its results and prediction views in the frontend (docs/architecture.md, section 9).
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import torch
from pydantic import BaseModel
from torch import Tensor, nn

from dragdl.engine.data.base import DatasetInfo, Source
from dragdl.engine.data.batch import TARGET, Batch, network_inputs
from dragdl.engine.data.splits import Splits, split_indices
from dragdl.engine.graph.errors import NodeError

MetricFormat = Literal["percent", "number"]


def with_added_losses(loss: Tensor, model: nn.Module) -> Tensor:
    """`loss` plus the terms the network's layers add to it: a module that regularises itself (a
    T-Net's orthogonality) keeps its term in `added_loss` after a forward pass in training, None
    otherwise. Every kind's step adds them (the default `step` does), so a layer carries its own
    regulariser without the trainer or the kind knowing it."""
    for module in model.modules():
        term = getattr(module, "added_loss", None)
        if isinstance(term, Tensor):
            loss = loss + term
    return loss


@dataclass(frozen=True)
class MetricSpec:
    """How a metric is shown and judged: the monitor, the task list, sweeps and early stopping read it.

    `key` is the name without the val_/test_ prefix; `percent` values are shares in 0..1.
    `charted`: drawn as an epoch curve and offered as a sweep objective (top-5 accuracy exists only
    from 10 classes, so it is reported but not charted).
    """

    key: str
    label: str
    format: MetricFormat = "number"
    higher_is_better: bool = False
    unit: str | None = None
    charted: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "format": self.format,
            "unit": self.unit,
            "higher_is_better": self.higher_is_better,
            "charted": self.charted,
        }


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
    title: ClassVar[str]
    """What the catalog calls the kind (English; nodes/i18n_zh.py has the Chinese)."""
    target: ClassVar[str]
    """The kind's own word for its target ("classes", "value"): for its messages, never compared
    by generic code, which asks the declarations below."""
    metric_specs: ClassVar[tuple[MetricSpec, ...]]
    """Every epoch and test metric besides the loss, in display order."""
    headline: ClassVar[str]
    """The key of the one metric that sums up a run (accuracy, R²)."""

    # -- what generic code asks instead of testing the kind's name -------------------------------

    ranks_classes: ClassVar[bool] = False
    """Its answers rank the dataset's classes (label, probability, top-k, probabilities): the
    prediction views and the CLI show probabilities, and bf16 serving is checked on the ranking."""
    classes_are_vocabulary: ClassVar[bool] = False
    """The dataset's classes are what the kind answers, so they are listed (a model's classes, the
    dataset summary); a regressor's "classes" are only its distinct target values."""
    output_mismatch_code: ClassVar[str] = "output_mismatch"
    """Validation's error code when the network's last shape is not `output_size`."""
    export_output_name: ClassVar[str] = "logits"
    """The name of the network's output in exported ONNX/TorchScript models."""
    export_output_meaning: ClassVar[str] = "logits: the network's outputs."
    answer_schema: ClassVar[dict[str, Any]]
    """The JSON Schema of one answer (one element of what `answer()` returns)."""

    @property
    def metrics(self) -> tuple[str, ...]:
        """Charted epoch metrics besides the loss, in display order (the monitor and sweeps)."""
        return tuple(spec.key for spec in self.metric_specs if spec.charted)

    @property
    def higher_is_better(self) -> frozenset[str]:
        """Metric keys (without val_/test_ prefix) where a higher value is better; others: lower."""
        return frozenset(spec.key for spec in self.metric_specs if spec.higher_is_better)

    def metric_spec(self, key: str) -> MetricSpec | None:
        """The descriptor of a metric, with or without its val_/test_ prefix."""
        base = key.removeprefix("val_").removeprefix("test_")
        return next((spec for spec in self.metric_specs if spec.key == base), None)

    @abstractmethod
    def summarize(self, answer: dict[str, Any]) -> str:
        """One answer in one line, for the CLI, the task list and the monitor ("cat 97.1%", "3.25")."""

    @abstractmethod
    def expected_output(self, outputs: int) -> str:
        """What the network must end in, for validation's message ("one score per class (10)")."""

    @abstractmethod
    def output_width_hint(self, outputs: int) -> str:
        """Why a vector of the wrong width is wrong, and the fix, for validation's message."""

    def describe(self) -> dict[str, Any]:
        """The kind as the catalog serves it (GET /api/catalog's `task_kinds`), in English."""
        return {
            "name": self.name,
            "title": self.title,
            "metrics": [spec.to_json() for spec in self.metric_specs],
            "headline": self.headline,
            "ranks_classes": self.ranks_classes,
            "answer_schema": copy.deepcopy(self.answer_schema),
        }

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A headline that names no metric would leave the monitor's KPI empty: refuse it at import.
        specs = getattr(cls, "metric_specs", None)
        headline = getattr(cls, "headline", None)
        if specs is not None and headline not in {spec.key for spec in specs}:
            raise TypeError(f"task kind {cls.__name__}: headline {headline!r} is not one of its metric_specs")

    # -- the data -----------------------------------------------------------------------------

    @abstractmethod
    def output_size(self, info: DatasetInfo) -> int:
        """Width of the network's last layer (what 'auto' out_features becomes); raises DatasetError."""

    def dataset_warnings(self, info: DatasetInfo) -> list[NodeError]:
        """What in a dataset this kind trains on but probably should not (a classifier on a
        measurement): validation shows each as a warning on the train node, which stays valid."""
        return []

    @abstractmethod
    def targets(self, source: Source) -> np.ndarray:
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
        return with_added_losses(loss, model), outputs

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
        # The loss and any metric without a descriptor: lower is better.
        spec = self.metric_spec(metric)
        return score > best if spec is not None and spec.higher_is_better else score < best

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

    # -- exported scripts ---------------------------------------------------------------------

    def script_blocks(self, blocks: Mapping[str, object]) -> object:
        """What writes this kind's part of an exported training script (its split, loss, metrics,
        report, targets and settings), chosen from `blocks`, the code generator's by kind name.

        The blocks live in `compile/` (`codegen_<kind>.py`, each registered with
        `register_task_blocks`), which sits above this package, so a kind can only choose among
        them. Without its own it cannot be exported, and NotImplementedError says so (the code
        generator reports it as `codegen_unsupported` on the train node)."""
        found = blocks.get(self.name)
        if found is None:
            raise NotImplementedError(
                f"{self.title} ({self.name}) cannot be exported as a training script yet"
            )
        return found

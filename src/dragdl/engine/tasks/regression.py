"""Regression: one number per sample; MSE/MAE/Huber loss; MAE, RMSE and R²; residuals in the report."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch
from pydantic import BaseModel
from torch import Tensor, nn

from dragdl.engine.data.base import DatasetError, DatasetInfo, Source
from dragdl.engine.tasks.base import MetricSpec, RunningMetrics, TaskKind
from dragdl.engine.tasks.settings import RegressionConfig

SCATTER_POINTS = 2000
"""The report keeps at most this many (actual, predicted) pairs for the scatter plot."""
HISTOGRAM_BINS = 30


class RegressionMetrics(RunningMetrics):
    """Sums of the loss, |error|, error², y and y², from which MAE, RMSE and R² follow."""

    def keys(self) -> tuple[str, ...]:
        return ("loss", "abs", "sq", "y", "y2")

    def fold(self, sums: dict[str, Tensor], outputs: Tensor, targets: Tensor) -> None:
        pred = outputs.reshape(-1).double()
        y = targets.reshape(-1).double()
        err = pred - y
        sums["abs"].add_(err.abs().sum())
        sums["sq"].add_(err.square().sum())
        sums["y"].add_(y.sum())
        sums["y2"].add_(y.square().sum())

    def figures(self, sums: dict[str, float], count: int) -> dict[str, float]:
        mean = sums["y"] / count
        total = sums["y2"] - count * mean * mean
        # R² is undefined when every target is the same; 0 says "no better than the mean". The
        # threshold is relative to the targets' size: an absolute 1e-12 read prices in millionths
        # (variance ~1e-14) as constant and reported R² 0 for a model that fits them.
        r2 = 1.0 - sums["sq"] / total if total > 1e-12 * sums["y2"] and total > 0 else 0.0
        return {
            "loss": sums["loss"] / count,
            "mae": sums["abs"] / count,
            "rmse": math.sqrt(max(sums["sq"], 0.0) / count),
            "r2": r2,
        }


def target_scale(train_targets: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation of the training targets: the network learns (y - mean) / std and
    answers z * std + mean. A constant target keeps a spread of 1 (nothing to scale by)."""
    mean = float(np.mean(train_targets, dtype=np.float64)) if len(train_targets) else 0.0
    std = float(np.std(train_targets, dtype=np.float64)) if len(train_targets) else 1.0
    return mean, std if std > 1e-12 else 1.0


class Regression(TaskKind):
    name: ClassVar[str] = "regression"
    title: ClassVar[str] = "Regression"
    target: ClassVar[str] = "value"
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = (
        MetricSpec("mae", "MAE"),
        MetricSpec("rmse", "RMSE"),
        MetricSpec("r2", "R²", higher_is_better=True),
    )
    headline: ClassVar[str] = "r2"
    output_mismatch_code: ClassVar[str] = "value_output_mismatch"
    export_output_name: ClassVar[str] = "value"
    export_output_meaning: ClassVar[str] = "value: the predicted number per row, shaped (batch, 1)."
    answer_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"value": {"type": "number", "description": "The predicted number."}},
        "required": ["value"],
    }

    def summarize(self, answer: dict[str, Any]) -> str:
        return f"{answer['value']:.6g}"

    def expected_output(self, outputs: int) -> str:
        return "one value per sample"

    def output_width_hint(self, outputs: int) -> str:
        return (
            "a regressor predicts one value per sample: set out_features of the last Linear to 'auto' (or 1)"
        )

    def output_size(self, info: DatasetInfo) -> int:
        # Checked while validating, so a text target is refused on the canvas rather than when the
        # task runs: a table names the row, images the label.
        if info.target is not None and info.target_text is not None:
            row, value = info.target_text
            raise DatasetError(
                f"the target column {info.target!r} holds the text {value!r} in row {row}; a regressor "
                "needs a number in every row (use a classifier for categories)",
                code="target_not_numeric",
            )
        for name in info.classes:
            try:
                float(name)
            except ValueError:
                column = f"the target column {info.target!r}" if info.target else "the labels"
                raise DatasetError(
                    f"{column} holds the text {name!r}; a regressor needs a number per sample "
                    "(use a classifier for categories)",
                    code="target_not_numeric",
                ) from None
        return 1

    def targets(self, source: Source) -> np.ndarray:
        values = source.target_values()
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DatasetError(
                f"the target of sample {row + 1} is missing or not a number; regression needs a number "
                "for every sample",
                code="target_not_numeric",
            )
        return values.astype(np.float32)

    def strata(self, targets: np.ndarray) -> np.ndarray:
        # Plain random split: a value has no class to stratify by (one stratum is a permutation).
        return np.zeros(len(targets), np.int64)

    def output_scale(self, config: BaseModel, train_targets: np.ndarray) -> tuple[float, float] | None:
        if isinstance(config, RegressionConfig) and config.scale_target:
            return target_scale(train_targets)
        return None

    def criterion(self, config: BaseModel, scale: tuple[float, float] | None = None) -> nn.Module:
        if not isinstance(config, RegressionConfig):
            raise TypeError(f"a regressor trains with a RegressionConfig, not {type(config).__name__}")
        spread = 1.0 if scale is None else scale[1]
        if config.loss == "mae":
            return _Flat(nn.L1Loss(), spread)
        if config.loss == "huber":
            return _Flat(nn.HuberLoss(delta=config.huber_delta), spread)
        return _Flat(nn.MSELoss(), spread)

    def running(self, device: torch.device, classes: list[str]) -> RunningMetrics:
        return RegressionMetrics(device)

    def collect(self, outputs: Tensor) -> Tensor:
        return outputs.reshape(-1).float()

    def test_details(self, preds: np.ndarray, targets: np.ndarray, classes: list[str]) -> dict[str, Any]:
        preds, targets = preds.astype(np.float64), targets.astype(np.float64)
        residuals = preds - targets
        keep = np.arange(len(preds))
        if len(keep) > SCATTER_POINTS:  # evenly spaced: the same points on every run
            keep = np.linspace(0, len(preds) - 1, SCATTER_POINTS).round().astype(np.int64)
        counts, edges = np.histogram(residuals, bins=HISTOGRAM_BINS) if len(residuals) else (None, None)
        return {
            "scatter": {
                "actual": targets[keep].tolist(),
                "predicted": preds[keep].tolist(),
                "total": len(preds),
            },
            "residuals": {
                "edges": [] if edges is None else [float(e) for e in edges],
                "counts": [] if counts is None else [int(c) for c in counts],
                "mean": float(residuals.mean()) if len(residuals) else 0.0,
                "std": float(residuals.std()) if len(residuals) else 0.0,
            },
        }

    def answer(self, outputs: Tensor, classes: list[str], top: int) -> list[dict[str, Any]]:
        return [{"value": float(v)} for v in outputs.reshape(-1).float().tolist()]


class _Flat(nn.Module):
    """A loss between (N, 1) outputs and (N,) targets, without broadcasting them to (N, N).

    Both are divided by the target's spread (`spread`, 1 when the target is not scaled), so the loss
    is that of the standardized target whatever the target's units: the same learning rate suits
    prices and percentages. Dividing by 1.0 leaves every value as it was.
    """

    def __init__(self, loss: nn.Module, spread: float = 1.0) -> None:
        super().__init__()
        self.loss = loss
        self.spread = spread

    def forward(self, outputs: Tensor, targets: Tensor) -> Tensor:
        predicted = outputs.reshape(-1) / self.spread
        actual = targets.reshape(-1).to(outputs.dtype) / self.spread
        return self.loss(predicted, actual)  # type: ignore[no-any-return]

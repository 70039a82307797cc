"""The progress of a run that a checkpoint must restore, besides model/optimizer/RNG states."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import torch


@dataclass
class TrainState:
    epoch: int = 0
    """0-based index of the epoch in progress (or just finished, when `epoch_done`)."""
    step: int = 0
    """Steps done in that epoch."""
    epoch_done: bool = False
    global_step: int = 0
    history: list[dict[str, float]] = field(default_factory=list)
    best_score: float | None = None
    best_epoch: int | None = None
    best_state: dict[str, torch.Tensor] | None = None
    """CPU copy of the best weights; kept only with early stopping."""
    bad_epochs: int = 0
    stopped_early: bool = False
    train_time: float = 0.0
    """Pure training seconds spent in the current epoch so far."""
    logged: dict[str, float] = field(default_factory=dict)
    logged_count: int = 0
    """The epoch's running sums (the task kind's `RunningMetrics.sums()`) at the last step log point."""

    def to_dict(self) -> dict[str, Any]:
        """Plain containers and tensors only, so the checkpoint loads with weights_only=True."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainState:
        return cls(
            epoch=int(data["epoch"]),
            step=int(data["step"]),
            epoch_done=bool(data["epoch_done"]),
            global_step=int(data["global_step"]),
            history=[dict(h) for h in data["history"]],
            best_score=None if data["best_score"] is None else float(data["best_score"]),
            best_epoch=None if data["best_epoch"] is None else int(data["best_epoch"]),
            best_state=data["best_state"],
            bad_epochs=int(data["bad_epochs"]),
            stopped_early=bool(data["stopped_early"]),
            train_time=float(data["train_time"]),
            logged=_logged(data),
            logged_count=int(data["logged_count"]),
        )


def _logged(data: dict[str, Any]) -> dict[str, float]:
    if "logged" in data:
        return {str(k): float(v) for k, v in data["logged"].items()}
    # A checkpoint written before task kinds kept a classifier's two sums by name.
    return {"loss": float(data["logged_loss"]), "correct": float(data["logged_correct"])}

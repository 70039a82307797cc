"""Running loss/accuracy sums kept on the device, and the per-class test report."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor


class Running:
    """Sums of loss, correct and top-5-correct predictions, as device tensors.

    Adding never synchronises with the GPU; `values()` (one `.item()` per metric) is only called
    at log points.
    """

    def __init__(self, device: torch.device, top5: bool) -> None:
        self.device = device
        self.top5 = top5
        self.reset()

    def reset(self) -> None:
        self.loss = torch.zeros((), dtype=torch.float64, device=self.device)
        self.correct = torch.zeros((), dtype=torch.int64, device=self.device)
        self.correct5 = torch.zeros((), dtype=torch.int64, device=self.device)
        self.count = 0

    def add(self, loss: Tensor, logits: Tensor, target: Tensor) -> None:
        """`loss` is the batch mean."""
        n = target.shape[0]
        self.loss.add_(loss.detach(), alpha=n)
        self.correct += (logits.argmax(dim=1) == target).sum()
        if self.top5:
            top = logits.topk(min(5, logits.shape[1]), dim=1).indices
            self.correct5 += (top == target[:, None]).any(dim=1).sum()
        self.count += n

    def values(self, prefix: str = "") -> dict[str, float]:
        if self.count == 0:
            return {}
        out = {
            f"{prefix}loss": self.loss.item() / self.count,
            f"{prefix}accuracy": self.correct.item() / self.count,
        }
        if self.top5:
            out[f"{prefix}top5_accuracy"] = self.correct5.item() / self.count
        return out

    def state(self) -> dict[str, Any]:
        return {"loss": self.loss, "correct": self.correct, "correct5": self.correct5, "count": self.count}

    def load(self, state: dict[str, Any]) -> None:
        self.loss = state["loss"].to(self.device)
        self.correct = state["correct"].to(self.device)
        self.correct5 = state["correct5"].to(self.device)
        self.count = int(state["count"])


def confusion_matrix(targets: np.ndarray, preds: np.ndarray, num_classes: int) -> np.ndarray:
    """Counts with rows = true class, columns = predicted class."""
    flat = targets.astype(np.int64) * num_classes + preds.astype(np.int64)
    return np.bincount(flat, minlength=num_classes * num_classes).reshape(num_classes, num_classes)


def per_class_metrics(matrix: np.ndarray, classes: list[str]) -> list[dict[str, Any]]:
    """Precision, recall, F1 and support per class; 0 where undefined (as scikit-learn's zero_division=0)."""
    tp = np.diag(matrix).astype(np.float64)
    predicted = matrix.sum(axis=0).astype(np.float64)
    support = matrix.sum(axis=1).astype(np.float64)
    precision = np.divide(tp, predicted, out=np.zeros_like(tp), where=predicted > 0)
    recall = np.divide(tp, support, out=np.zeros_like(tp), where=support > 0)
    denom = precision + recall
    f1 = np.divide(2 * precision * recall, denom, out=np.zeros_like(tp), where=denom > 0)
    return [
        {
            "class": name,
            "precision": float(precision[i]),
            "recall": float(recall[i]),
            "f1": float(f1[i]),
            "support": int(support[i]),
        }
        for i, name in enumerate(classes)
    ]


def averages(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Macro and support-weighted averages of the per-class precision/recall/F1."""
    support = np.array([r["support"] for r in rows], dtype=np.float64)
    out: dict[str, float] = {}
    for key in ("precision", "recall", "f1"):
        vals = np.array([r[key] for r in rows], dtype=np.float64)
        out[f"macro_{key}"] = float(vals.mean()) if len(vals) else 0.0
        out[f"weighted_{key}"] = float((vals * support).sum() / support.sum()) if support.sum() else 0.0
    return out

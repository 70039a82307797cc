"""The per-class test report of a classifier: confusion matrix, precision, recall, F1."""

from __future__ import annotations

from typing import Any

import numpy as np


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

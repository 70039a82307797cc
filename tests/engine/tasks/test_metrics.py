"""Running sums and the per-class report, checked against direct computation and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import confusion_matrix as sk_confusion
from sklearn.metrics import precision_recall_fscore_support

from dragdl.engine.data.batch import TARGET
from dragdl.engine.tasks.classification import ClassificationMetrics
from dragdl.engine.tasks.metrics import averages, confusion_matrix, per_class_metrics


def test_running_sums_loss_accuracy_and_top5() -> None:
    running = ClassificationMetrics(torch.device("cpu"), top5=True)
    gen = torch.Generator().manual_seed(0)
    sizes = [7, 5] * 10
    logits = [torch.randn(n, 12, generator=gen) for n in sizes]
    targets = [torch.randint(0, 12, (n,), generator=gen) for n in sizes]
    for lg, tg in zip(logits, targets, strict=True):
        running.add(torch.nn.functional.cross_entropy(lg, tg), lg, {TARGET: tg})
    all_logits, all_targets = torch.cat(logits), torch.cat(targets)
    assert running.count == sum(sizes)
    resumed = ClassificationMetrics(torch.device("cpu"), top5=True)
    resumed.load(running.state())  # as a checkpoint restores it
    values = running.values("val_")
    assert resumed.values("val_") == values
    assert values["val_loss"] == pytest.approx(
        torch.nn.functional.cross_entropy(all_logits, all_targets).item()
    )
    assert values["val_accuracy"] == pytest.approx(
        (all_logits.argmax(1) == all_targets).float().mean().item()
    )
    top5 = (all_logits.topk(5, 1).indices == all_targets[:, None]).any(1).float().mean().item()
    assert values["val_top5_accuracy"] == pytest.approx(top5)


def test_per_class_metrics_match_scikit_learn_including_a_never_predicted_class() -> None:
    rng = np.random.default_rng(0)
    targets = rng.integers(0, 4, 200)
    preds = np.where(rng.random(200) < 0.7, targets, rng.integers(0, 3, 200))  # class 3 never predicted
    matrix = confusion_matrix(targets, preds, 4)
    assert (matrix == sk_confusion(targets, preds, labels=[0, 1, 2, 3])).all()
    rows = per_class_metrics(matrix, ["a", "b", "c", "d"])
    p, r, f, s = precision_recall_fscore_support(targets, preds, labels=[0, 1, 2, 3], zero_division=0)
    assert [row["precision"] for row in rows] == pytest.approx(p)
    assert [row["recall"] for row in rows] == pytest.approx(r)
    assert [row["f1"] for row in rows] == pytest.approx(f)
    assert [row["support"] for row in rows] == s.tolist()
    macro = precision_recall_fscore_support(targets, preds, average="macro", zero_division=0)
    assert averages(rows)["macro_f1"] == pytest.approx(macro[2])

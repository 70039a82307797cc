"""The trainer loop: events, exact resume, checkpoints, report, early stopping, schedules."""

from __future__ import annotations

import json
import math
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import precision_recall_fscore_support

from dragdl.engine.data.base import TensorSource
from dragdl.engine.data.batch import INPUT, TARGET
from dragdl.engine.data.splits import split_indices
from dragdl.engine.train.checkpoint import list_checkpoints
from dragdl.engine.train.events import (
    ArtifactEvent,
    ErrorEvent,
    MetricEvent,
    ProgressEvent,
    StartEvent,
    StatusEvent,
)
from dragdl.engine.train.reporter import ListReporter

from .conftest import (
    CLASSES,
    TASK,
    Runner,
    StopAt,
    make_model,
    make_pipeline,
    make_source,
    model_metrics,
    weights,
)


def report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def assert_same_outcome(a: Path, b: Path) -> None:
    wa, wb = weights(a / "model.safetensors"), weights(b / "model.safetensors")
    assert wa.keys() == wb.keys()
    for key in wa:
        assert torch.equal(wa[key], wb[key]), key
    ra, rb = report(a), report(b)
    assert model_metrics(ra["history"]) == model_metrics(rb["history"])
    for key in ("test", "confusion_matrix", "per_class", "best_epoch", "best_score", "config"):
        assert ra[key] == rb[key], key


def step_metrics(reporter: ListReporter) -> list[tuple[int, int, dict[str, float]]]:
    return [
        (e.epoch, e.step, e.values)
        for e in reporter.events
        if isinstance(e, MetricEvent) and e.scope == "step"
    ]


def test_reporter_sees_running_first_and_succeeded_last(run: Runner) -> None:
    result, rep, _ = run(epochs=2)
    events = rep.events
    assert result.status == "succeeded"
    assert events[0] == StatusEvent("running")
    assert isinstance(events[1], StartEvent)
    assert events[1].epochs == 2 and events[1].train_samples == 90 and events[1].test_samples == 30
    assert isinstance(events[-1], StatusEvent) and events[-1].status == "succeeded"
    progress = [(e.epoch, e.step) for e in events if isinstance(e, ProgressEvent)]
    steps = events[1].steps_per_epoch
    assert progress == [(ep, st) for ep in (1, 2) for st in range(1, steps + 1)]
    epochs = [e for e in events if isinstance(e, MetricEvent) and e.scope == "epoch"]
    assert [e.epoch for e in epochs] == [1, 2]
    assert {"loss", "accuracy", "val_loss", "val_accuracy", "lr", "samples_per_s"} <= epochs[0].values.keys()
    assert "top5_accuracy" not in epochs[0].values  # three classes only
    test = [e for e in events if isinstance(e, MetricEvent) and e.scope == "test"]
    assert len(test) == 1 and {"test_loss", "test_accuracy"} <= test[0].values.keys()
    kinds = [e.kind for e in events if isinstance(e, ArtifactEvent)]
    assert kinds[-2:] == ["model", "report"] and "checkpoint" in kinds
    json.dumps([e.to_json() for e in events])


def test_resume_at_an_epoch_boundary_matches_an_uninterrupted_run(run: Runner, tmp_path: Path) -> None:
    cfg = {"schedule": "step", "step_size": 1, "gamma": 0.7}
    run("full", epochs=4, **cfg)
    first, _, _ = run("split", epochs=2, **cfg)
    assert first.status == "succeeded"
    resumed, rep, _ = run("split", epochs=4, resume=True, **cfg)
    start = next(e for e in rep.events if isinstance(e, StartEvent))
    assert start.resumed_from_epoch == 3 and start.resumed_from_step == 0
    assert resumed.epochs_completed == 4
    assert_same_outcome(tmp_path / "full", tmp_path / "split")


def test_stop_mid_epoch_then_resume_matches_an_uninterrupted_run(run: Runner, tmp_path: Path) -> None:
    cfg = {"schedule": "cosine", "optimizer": "sgd", "label_smoothing": 0.1}
    _, full_rep, _ = run("full", **cfg)
    stopper = StopAt(epoch=2, step=3)
    stopped, _, _ = run("split", reporter=stopper, stop=stopper.stop, **cfg)
    assert stopped.status == "stopped" and stopped.epochs_completed == 1
    assert stopper.events[-1] == StatusEvent("stopped", "training stopped; resume to continue")
    assert list_checkpoints(tmp_path / "split")[-1].name == "ckpt-0002-0000003.pt"
    assert not (tmp_path / "split" / "report.json").exists()

    resumed, rep, _ = run("split", resume=True, **cfg)
    assert resumed.status == "succeeded"
    start = next(e for e in rep.events if isinstance(e, StartEvent))
    assert (start.resumed_from_epoch, start.resumed_from_step) == (2, 3)
    # The history before the checkpoint is re-emitted for monitors that join late.
    first_epoch = next(e for e in rep.events if isinstance(e, MetricEvent) and e.scope == "epoch")
    assert first_epoch.epoch == 1
    assert step_metrics(stopper) + step_metrics(rep) == step_metrics(full_rep)
    assert_same_outcome(tmp_path / "full", tmp_path / "split")


def test_checkpoints_keep_the_last_two_and_load_with_weights_only(run: Runner, tmp_path: Path) -> None:
    # A tiny interval makes a mid-epoch checkpoint after almost every step.
    _, rep, _ = run(epochs=3, checkpoint_minutes=1e-9)
    saved = [e.path for e in rep.events if isinstance(e, ArtifactEvent) and e.kind == "checkpoint"]
    assert len(saved) > 6
    kept = list_checkpoints(tmp_path / "run")
    assert [p.name for p in kept] == [Path(p).name for p in saved[-2:]]
    assert not list((tmp_path / "run" / "checkpoints").glob("*.tmp"))
    state = torch.load(kept[-1], weights_only=True)
    assert state["state"]["epoch"] == 2 and state["state"]["epoch_done"] is True
    assert state["model"].keys() == make_model().state_dict().keys()
    assert len(state["state"]["history"]) == 3


def test_report_holds_per_class_metrics_and_confusion_matrix(run: Runner, tmp_path: Path) -> None:
    result, _, _ = run(epochs=2, random_stage=False)
    data = report(tmp_path / "run")
    assert data["classes"] == CLASSES and len(data["history"]) == 2
    assert data["config"]["epochs"] == 2
    matrix = np.array(data["confusion_matrix"])
    assert matrix.shape == (3, 3) and matrix.sum() == 30

    # Recompute the predictions from the saved weights and compare with scikit-learn.
    model = make_model()
    model.load_state_dict(weights(tmp_path / "run" / "model.safetensors"))
    model.eval()
    pipeline = make_pipeline(random_stage=False)
    assert pipeline.test is not None
    with torch.no_grad():
        batches = list(pipeline.test.batches(0))
        preds = torch.cat([model(b[INPUT]).argmax(1) for b in batches]).numpy()
    targets = torch.cat([b[TARGET] for b in batches]).numpy()
    assert (matrix.sum(axis=1) == np.bincount(targets, minlength=3)).all()
    assert np.trace(matrix) == (preds == targets).sum()
    assert data["test"]["test_accuracy"] == pytest.approx((preds == targets).mean())
    assert result.test == data["test"]
    precision, recall, f1, support = precision_recall_fscore_support(
        targets, preds, labels=[0, 1, 2], zero_division=0
    )
    for i, row in enumerate(data["per_class"]):
        assert row["class"] == CLASSES[i]
        assert row["precision"] == pytest.approx(precision[i])
        assert row["recall"] == pytest.approx(recall[i])
        assert row["f1"] == pytest.approx(f1[i])
        assert row["support"] == support[i]


def test_early_stopping_stops_and_restores_the_best_weights(run: Runner, tmp_path: Path) -> None:
    # Validation images carry the next class's label: the better the model fits the training
    # split, the worse the validation loss gets, so training stops well before 20 epochs.
    base = make_source()
    splits = split_indices(base.labels, 0.2, 0.2, seed=0)
    labels = base.labels.copy()
    labels[splits.val] = (labels[splits.val] + 1) % 3
    images = base.images()
    assert images is not None
    source = TensorSource(images, labels, tuple(CLASSES))
    result, _, _ = run("early", source=source, random_stage=False, epochs=20, early_stopping=True, patience=2)
    val_losses = [h["val_loss"] for h in result.history]
    assert result.stopped_early and result.best_epoch is not None
    assert result.epochs_completed == result.best_epoch + 2 < 20
    assert val_losses[result.best_epoch - 1] == min(val_losses)
    assert report(tmp_path / "early")["stopped_early"] is True
    # The saved weights are those of the best epoch: the same as a run that ended there.
    run("best", source=source, random_stage=False, epochs=result.best_epoch)
    best = weights(tmp_path / "early" / "model.safetensors")
    ended_there = weights(tmp_path / "best" / "model.safetensors")
    assert all(torch.equal(best[k], ended_there[k]) for k in best)
    # ...and not those of the last epoch trained.
    last = torch.load(list_checkpoints(tmp_path / "early")[-1], weights_only=True)["model"]
    assert any(not torch.equal(last[k], best[k]) for k in best)


def lrs(rep: ListReporter) -> list[float]:
    return [e.values["lr"] for e in rep.events if isinstance(e, MetricEvent) and e.scope == "step"]


@pytest.mark.parametrize("schedule", ["none", "step", "cosine", "onecycle"])
def test_schedules_change_the_learning_rate(run: Runner, schedule: str) -> None:
    result, rep, _ = run(
        random_stage=False, epochs=3, optimizer="sgd", lr=0.1, schedule=schedule, step_size=1, gamma=0.5
    )
    per_step = lrs(rep)
    total = len(per_step)
    assert total == 3 * 6  # 90 training images, batches of 16, a log point every step
    per_epoch = [h["lr"] for h in result.history]
    if schedule == "none":
        assert set(per_step) == {0.1}
    elif schedule == "step":
        assert per_epoch == pytest.approx([0.1, 0.05, 0.025])
    elif schedule == "cosine":
        expected = [0.1 * (1 + math.cos(math.pi * t / total)) / 2 for t in range(total)]
        assert per_step == pytest.approx(expected)
    else:
        peak = int(np.argmax(per_step))
        assert per_step[0] == pytest.approx(0.1 / 25)
        assert max(per_step) == pytest.approx(0.1, rel=0.05)
        assert all(a < b for a, b in pairwise(per_step[: peak + 1]))
        assert all(a > b for a, b in pairwise(per_step[peak:]))
        assert per_step[-1] < 0.001


def test_a_failing_run_reports_an_error_and_failed_status(tmp_path: Path) -> None:
    from dragdl.engine.tasks.settings import TrainConfig
    from dragdl.engine.train.trainer import train

    rep = ListReporter()
    too_few_outputs = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 2))
    with pytest.raises(IndexError):
        train(
            too_few_outputs,
            make_pipeline(),
            TrainConfig(epochs=1, device="cpu"),
            CLASSES,
            tmp_path,
            rep,
            task=TASK,
        )
    error = next(e for e in rep.events if isinstance(e, ErrorEvent))
    assert error.code == "train_failed" and "IndexError" in error.message
    assert isinstance(rep.events[-1], StatusEvent) and rep.events[-1].status == "failed"


class Explode(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * float("inf")


def test_a_non_finite_loss_fails_with_a_machine_readable_code(tmp_path: Path) -> None:
    from dragdl.engine.tasks.settings import TrainConfig
    from dragdl.engine.train.device import TrainError
    from dragdl.engine.train.trainer import train

    rep = ListReporter()
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 3), Explode())
    with pytest.raises(TrainError) as err:
        train(model, make_pipeline(), TrainConfig(epochs=1, device="cpu"), CLASSES, tmp_path, rep, task=TASK)
    assert err.value.code == "loss_not_finite" and "lr=" in err.value.message
    assert next(e for e in rep.events if isinstance(e, ErrorEvent)).code == "loss_not_finite"
    assert rep.events[-1] == StatusEvent("failed", err.value.message)


def test_a_layer_producing_inf_is_named_and_the_learning_rate_is_not_blamed(tmp_path: Path) -> None:
    from dragdl.engine.network.module import GraphModule
    from dragdl.engine.tasks.settings import TrainConfig
    from dragdl.engine.train.device import TrainError
    from dragdl.engine.train.trainer import train

    torch.manual_seed(0)
    layers = {"flat": torch.nn.Flatten(), "fc": torch.nn.Linear(64, 3), "boom": Explode()}
    order = [("flat", (GraphModule.INPUT,)), ("fc", ("flat",)), ("boom", ("fc",))]
    model = GraphModule(layers, GraphModule.plan_steps(order, "boom"), "boom")
    rep = ListReporter()
    with pytest.raises(TrainError) as err:
        train(model, make_pipeline(), TrainConfig(epochs=1, device="cpu"), CLASSES, tmp_path, rep, task=TASK)
    assert (err.value.code, err.value.node_id) == ("non_finite", "boom")
    assert err.value.message.startswith("layer boom produced NaN or infinite values from finite inputs")
    assert "at epoch 1, step 1" in err.value.message
    error = next(e for e in rep.events if isinstance(e, ErrorEvent))
    assert (error.code, error.node_id) == ("non_finite", "boom")


def test_a_lambda_log_on_real_black_pixels_fails_naming_the_lambda_node(tmp_path: Path) -> None:
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.data.builtin import open_builtin
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.device import TrainError

    # Validation tries the formula on random values in [0, 1): log(x) passes it, and MNIST's black
    # background then gives -inf. The run must blame the Lambda, not the learning rate.
    graph = {
        "version": 1,
        "nodes": [
            {"id": "data", "type": "dataset.builtin", "params": {"name": "mnist-5k"}},
            {"id": "lg", "type": "op.Lambda", "params": {"expression": "log(x)"}},
            {"id": "flat", "type": "layer.Flatten"},
            {"id": "fc", "type": "layer.Linear", "params": {"out_features": "auto"}},
            {"id": "train", "type": "train.Classifier", "params": {"epochs": 1, "device": "cpu"}},
        ],
        "edges": [
            {"source": "data", "target": "lg"},
            {"source": "lg", "target": "flat"},
            {"source": "flat", "target": "fc"},
            {"source": "fc", "target": "train"},
        ],
    }
    rep = ListReporter()
    with pytest.raises(TrainError) as err:
        run_graph(graph, DataContext(data_dir=tmp_path), tmp_path / "run", rep)
    assert (err.value.code, err.value.node_id) == ("non_finite", "lg")
    message = err.value.message
    assert message.startswith("the operator lg (Lambda) produced ") and "log(x + 0.01)" in message
    index = int(message.split("for image ")[1].split(" ")[0])
    assert int(open_builtin("mnist-5k").image(index).min()) == 0  # the image named has a black pixel
    assert "learning rate" not in message

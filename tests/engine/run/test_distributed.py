"""Data-parallel runs on Ray Train (a local Ray of this machine's 2 CPUs, workers of 1 CPU): two
workers learn what one process learns, a stop checkpoints and a resumed run continues from Ray
Train's checkpoint, and an error in the data fails the run once, naming its node.

The workers really are two processes joined by gloo: the start event lists their process ids.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import torch
from tests.graphs import chain
from tests.runner.support import corrupt_folder_graph

from dragdl.engine.data.base import DataContext, DatasetError
from dragdl.engine.run import run_graph
from dragdl.engine.train.events import Event, LogEvent, MetricEvent, StartEvent
from dragdl.engine.train.reporter import ListReporter
from dragdl.runner.worker import describe_error

pytestmark = pytest.mark.slow


def digits(workers: int, epochs: int = 3, **train: Any) -> dict[str, Any]:
    params = {"epochs": epochs, "batch_size": 64, "lr": 0.01, "device": "cpu", "workers": workers, **train}
    return chain(
        "Digits",
        [
            ("data", "dataset.builtin", {"name": "digits"}),
            ("flatten", "layer.Flatten", {}),
            ("hidden", "layer.Linear", {"out_features": 32}),
            ("relu", "layer.ReLU", {}),
            ("dense", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", params),
        ],
    )


def report(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "report.json").read_text())
    return data


def starts(reporter: ListReporter) -> list[StartEvent]:
    return [e for e in reporter.events if isinstance(e, StartEvent)]


def test_two_workers_learn_what_one_process_learns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Relative folders, as `dragdl run --out runs/x` gives: the workers run in Ray's own directory.
    monkeypatch.chdir(tmp_path)
    ctx = DataContext(Path("data"), allow_download=False)
    one, two = ListReporter(), ListReporter()
    single = run_graph(digits(1), ctx, tmp_path / "one", one)
    both = run_graph(digits(2), ctx, Path("two"), two)
    assert single.status == both.status == "succeeded"

    (start,) = starts(two)
    assert start.workers is not None and [w["rank"] for w in start.workers] == [0, 1]
    assert len({w["pid"] for w in start.workers}) == 2  # two processes, gloo between them
    assert starts(one)[0].workers is None
    # Each worker took half of every batch of 64 and their gradients were averaged: the same steps
    # as one process, up to the order of floating-point sums and the last, unevenly split batch.
    assert start.steps_per_epoch == starts(one)[0].steps_per_epoch
    for a, b in zip(single.history, both.history, strict=True):
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-2)
        assert b["val_loss"] == pytest.approx(a["val_loss"], rel=1e-2)
    assert single.test is not None and both.test is not None
    assert abs(both.test["test_accuracy"] - single.test["test_accuracy"]) <= 0.01
    # The main worker wrote the bundle; the checkpoints went through Ray Train.
    assert (tmp_path / "two" / "model.json").exists() and report(tmp_path / "two")["epochs_completed"] == 3
    assert both.model_path == tmp_path / "two" / "model.safetensors"
    assert (tmp_path / "data" / "cache").is_dir()  # the data dir the run was given, not Ray's
    kept = sorted(p.name for p in (tmp_path / "two" / "distributed").glob("ckpt-*"))
    steps = start.steps_per_epoch
    assert kept == [f"ckpt-0002-{steps:07d}", f"ckpt-0003-{steps:07d}"]  # the newest two


class StopAfterFirstEpoch(ListReporter):
    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self.stop = stop

    def emit(self, event: Event) -> None:
        super().emit(event)
        if isinstance(event, MetricEvent) and event.scope == "epoch":
            self.stop.set()


def test_a_stopped_run_checkpoints_and_resumes_from_ray_trains_checkpoint(tmp_path: Path) -> None:
    ctx = DataContext(tmp_path / "data", allow_download=False)
    stop = threading.Event()
    first = StopAfterFirstEpoch(stop)
    stopped = run_graph(digits(2, epochs=4), ctx, tmp_path / "run", first, stop=stop)
    assert stopped.status == "stopped" and 1 <= stopped.epochs_completed < 4

    again = ListReporter()
    done = run_graph(digits(2, epochs=4), ctx, tmp_path / "run", again, resume=True)
    assert done.status == "succeeded" and done.epochs_completed == 4
    (start,) = starts(again)
    assert start.resumed_from_epoch == stopped.epochs_completed + 1
    logs = [e.message for e in again.events if isinstance(e, LogEvent)]
    assert any(m.startswith("resumed from checkpoint ckpt-") for m in logs), logs
    # The curve of the epochs before the stop is the stopped run's.
    assert done.history[: stopped.epochs_completed] == stopped.history


def test_an_error_in_the_data_fails_the_run_once_naming_its_node(tmp_path: Path) -> None:
    graph = corrupt_folder_graph(tmp_path / "images")
    graph["nodes"][-1]["params"]["workers"] = 2
    reporter = ListReporter()
    with pytest.raises(DatasetError) as failed:
        run_graph(graph, DataContext(tmp_path / "data", allow_download=False), tmp_path / "run", reporter)
    # Worded for the task as a single process's error: the dataset node, the file.
    described = describe_error(failed.value, graph)
    assert described["node_id"] == "data" and "5.png" in described["message"], described
    assert "Traceback" not in described["message"]
    # The workers Ray Train started again returned at once instead of meeting the error again.
    assert not starts(reporter)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_gpu_workers_average_with_nccl_and_train_in_mixed_precision(tmp_path: Path) -> None:
    reporter = ListReporter()
    graph = digits(2, device="auto", gpus_per_worker=1.0)
    ctx = DataContext(tmp_path / "data", allow_download=False)
    result = run_graph(graph, ctx, tmp_path / "run", reporter)
    assert result.status == "succeeded"
    (start,) = starts(reporter)
    assert start.workers is not None and all(w["device"].startswith("cuda") for w in start.workers)
    assert start.fast_path is not None and start.fast_path["precision"] in ("bf16", "fp16")
    logs = [e.message for e in reporter.events if isinstance(e, LogEvent)]
    assert any("gradients averaged with NCCL" in m for m in logs), logs

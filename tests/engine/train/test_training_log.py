"""log.txt reads like the output of a hand-written training script, with the values of the events."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import torch

from dragdl.engine.data.base import DataContext
from dragdl.engine.run import run_graph
from dragdl.engine.train.events import (
    ArtifactEvent,
    ErrorEvent,
    Event,
    LogEvent,
    MetricEvent,
    ProgressEvent,
    StartEvent,
    StatusEvent,
)
from dragdl.engine.train.fastpath import native_bf16
from dragdl.engine.train.reporter import JsonlReporter, ListReporter, MultiReporter, TrainingLog

from ...graphs import chain
from .conftest import StopAt

STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (INFO|WARNING|ERROR)\s+")


def digits_graph(epochs: int = 2, batch_size: int = 64) -> dict[str, Any]:
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        (
            "train",
            "train.Classifier",
            {"epochs": epochs, "batch_size": batch_size, "lr": 0.01, "device": "cpu", "seed": 0},
        ),
    ]
    return chain("Digits", nodes)


def log_lines(out: Path) -> list[str]:
    """log.txt without the time and level in front of each line."""
    lines = (out / "log.txt").read_text(encoding="utf-8").splitlines()
    assert all(STAMP.match(line) for line in lines), lines
    return [STAMP.sub("", line) for line in lines]


def pct(value: float) -> str:
    return f"{value * 100:.2f}%"


def epoch_line(event: MetricEvent, epochs: int) -> str:
    v = event.values
    return (
        f"epoch {event.epoch}/{epochs}  train loss {v['loss']:.4f} acc {pct(v['accuracy'])}  "
        f"val loss {v['val_loss']:.4f} acc {pct(v['val_accuracy'])}  "
        f"{v['samples_per_s']:.0f} samples/s  {v['epoch_time_s']:.1f} s"
    )


def metrics(events: list[Event], scope: str) -> list[MetricEvent]:
    return [e for e in events if isinstance(e, MetricEvent) and e.scope == scope]


def start_of(events: list[Event]) -> StartEvent:
    starts = [e for e in events if isinstance(e, StartEvent)]
    assert len(starts) == 1
    return starts[0]


def test_a_real_run_logs_its_setup_every_epoch_and_the_test_accuracy(tmp_path: Path) -> None:
    out = tmp_path / "run"
    listed = ListReporter()
    with JsonlReporter(out) as files:
        result = run_graph(
            digits_graph(),
            DataContext(tmp_path / "data", allow_download=False),
            out,
            MultiReporter(listed, files),
        )
    assert result.status == "succeeded"
    start = start_of(listed.events)
    epochs = metrics(listed.events, "epoch")
    (test,) = metrics(listed.events, "test")
    t = test.values
    assert [e.epoch for e in epochs] == [1, 2] and start.batch_size == 64
    # A network without convolutions over images: no layout to measure, and bf16 only where the CPU
    # computes it natively, which a run this small is too short for. Either way fp32 contiguous.
    why = "a small run" if native_bf16(torch.device("cpu")) else "no convolution over images"
    small = f"fast path: fp32, contiguous ({why}"
    assert log_lines(out) == [
        f"training on cpu for 2 epochs, batch size 64 ({start.steps_per_epoch} steps per epoch)",
        f"data: {start.train_samples:,} train / {start.val_samples} val / {start.test_samples} test samples",
        f"model: {start.total_parameters} parameters, {start.trainable_parameters} trainable",
        next(line for line in log_lines(out) if line.startswith(small)),
        epoch_line(epochs[0], 2),
        f"checkpoint saved: ckpt-0001-{start.steps_per_epoch:07d}.pt",
        epoch_line(epochs[1], 2),
        f"checkpoint saved: ckpt-0002-{start.steps_per_epoch:07d}.pt",
        f"test loss {t['test_loss']:.4f} acc {pct(t['test_accuracy'])} top-5 {pct(t['test_top5_accuracy'])}",
        "model saved: model.safetensors",
        "report saved: report.json",
        "training finished",
    ]
    assert start.train_samples + start.val_samples + start.test_samples == 1797
    assert result.test is not None and t["test_accuracy"] == result.test["test_accuracy"] > 0.5


def test_a_resumed_run_continues_the_log_and_logs_every_epoch_once(tmp_path: Path) -> None:
    out, ctx, graph = (
        tmp_path / "run",
        DataContext(tmp_path / "data", allow_download=False),
        digits_graph(epochs=3),
    )
    first = ListReporter()
    with JsonlReporter(out) as files:
        stopper = StopAt(2, 3, first, files)
        assert run_graph(graph, ctx, out, stopper, stop=stopper.stop).status == "stopped"
    second = ListReporter()
    with JsonlReporter(out) as files:
        assert run_graph(graph, ctx, out, MultiReporter(second, files), resume=True).status == "succeeded"

    lines = log_lines(out)
    steps = start_of(second.events).steps_per_epoch
    stopped = lines.index("training stopped; resume to continue")
    assert lines[stopped - 1] == "checkpoint saved: ckpt-0002-0000003.pt"
    assert lines[stopped + 1 : stopped + 3] == [
        "resumed from checkpoint ckpt-0002-0000003.pt",
        "training on cpu for 3 epochs, batch size 64 (" + f"{steps} steps per epoch)",
    ]
    assert f"resuming epoch 2 after step 3/{steps}" in lines
    # The resumed trainer replays epoch 1 (for live monitors); the log has it from the first attempt.
    assert [e.epoch for e in metrics(second.events, "epoch")] == [1, 2, 3]
    logged = [line for line in lines if line.startswith("epoch ")]
    expected = [*metrics(first.events, "epoch"), *metrics(second.events, "epoch")[1:]]
    assert logged == [epoch_line(e, 3) for e in expected]
    assert lines[-1] == "training finished"


def test_warnings_errors_and_tracebacks_keep_their_level_and_lines(tmp_path: Path) -> None:
    with JsonlReporter(tmp_path) as files:
        assert not files.error_logged
        files.emit(StatusEvent("running"))
        files.emit(ProgressEvent(1, 1, 5))
        files.emit(MetricEvent("step", 1, 1, {"loss": 0.5, "accuracy": 0.5, "lr": 0.1}))
        files.emit(LogEvent("warning", "the settings changed"))
        files.emit(ErrorEvent("train_failed", "ValueError: bad\nTraceback line", "dense"))
        files.emit(StatusEvent("failed", "ValueError: bad"))
        assert files.error_logged
    lines = (tmp_path / "log.txt").read_text().splitlines()
    assert len(lines) == 3
    assert re.match(r"^\S+ \S+ WARNING the settings changed$", lines[0])
    assert re.match(
        r"^\S+ \S+ ERROR   training failed \(train_failed\): node dense: ValueError: bad$", lines[1]
    )
    assert lines[2] == " " * len("2026-01-01 00:00:00 ERROR   ") + "Traceback line"


def test_the_log_words_events_without_a_start_and_with_a_node_named_once() -> None:
    log = TrainingLog()
    assert log.lines(MetricEvent("epoch", 4, 40, {"loss": 0.25, "accuracy": 0.5})) == [
        ("info", "epoch 4  train loss 0.2500 acc 50.00%")
    ]
    named = ErrorEvent("layer_failed", "node dense: shapes differ", "dense")
    assert log.lines(named) == [("error", "training failed (layer_failed): node dense: shapes differ")]
    assert log.lines(ArtifactEvent("checkpoint", "/x/checkpoints/ckpt-0004-0000010.pt")) == [
        ("info", "checkpoint saved: ckpt-0004-0000010.pt")
    ]

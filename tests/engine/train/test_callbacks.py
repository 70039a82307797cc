"""Training callbacks: hooks in order, artifacts written into the run folder, events unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dragdl.engine.tasks.settings import TrainConfig
from dragdl.engine.train.callbacks import Callback, RunContext
from dragdl.engine.train.events import ArtifactEvent, MetricEvent, Status, StatusEvent
from dragdl.engine.train.reporter import ListReporter
from dragdl.engine.train.trainer import train

from .conftest import CLASSES, TASK, make_model, make_pipeline


class Recorder(Callback):
    """Notes every hook it sees, and writes the first layer's weight norm after each epoch."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def on_epoch_end(self, ctx: RunContext, values: dict[str, float]) -> None:
        epoch = ctx.state.epoch + 1
        self.seen.append(("epoch", epoch, ctx.state.history[-1] is values))
        norm = sum(float(p.detach().norm()) for p in ctx.model.parameters())
        ctx.write_artifact("weights", f"weights-{epoch}.json", lambda p: p.write_text(json.dumps(norm)))

    def on_checkpoint(self, ctx: RunContext, path: Path) -> None:
        self.seen.append(("checkpoint", path.name))

    def on_artifact(self, ctx: RunContext, kind: str, path: Path) -> None:
        self.seen.append(("artifact", kind, path.name))

    def on_test_end(self, ctx: RunContext, metrics: dict[str, float], details: dict[str, Any]) -> None:
        self.seen.append(("test", "test_accuracy" in metrics, "confusion_matrix" in details))

    def on_train_end(self, ctx: RunContext, status: Status, message: str) -> None:
        self.seen.append(("end", status))


def test_a_callback_sees_epochs_checkpoints_and_the_test_in_order_and_writes_artifacts(
    tmp_path: Path,
) -> None:
    recorder, reporter = Recorder(), ListReporter()
    config = TrainConfig(epochs=2, batch_size=16, lr=0.01, device="cpu")
    out = tmp_path / "run"
    pipeline = make_pipeline(random_stage=False)
    train(make_model(), pipeline, config, CLASSES, out, reporter, task=TASK, callbacks=[recorder])
    steps = len(pipeline.train)
    assert recorder.seen == [
        ("epoch", 1, True),
        ("artifact", "weights", "weights-1.json"),
        ("checkpoint", f"ckpt-0001-{steps:07d}.pt"),
        ("epoch", 2, True),
        ("artifact", "weights", "weights-2.json"),
        ("checkpoint", f"ckpt-0002-{steps:07d}.pt"),
        ("test", True, True),
        ("artifact", "model", "model.safetensors"),
        ("artifact", "report", "report.json"),
        ("end", "succeeded"),
    ]
    # The artifacts lie in the run folder, and the reporter was told of each like of the model's.
    assert json.loads((out / "weights-2.json").read_text()) > 0
    assert not list(out.glob("*.tmp"))
    artifacts = [(e.kind, Path(e.path).name) for e in reporter.events if isinstance(e, ArtifactEvent)]
    assert ("weights", "weights-1.json") in artifacts and artifacts[-2:] == [
        ("model", "model.safetensors"),
        ("report", "report.json"),
    ]
    # The reporter's events come from its callback, which runs before the extra ones.
    epochs = [e.epoch for e in reporter.events if isinstance(e, MetricEvent) and e.scope == "epoch"]
    assert epochs == [1, 2]
    statuses = [e.status for e in reporter.events if isinstance(e, StatusEvent)]
    assert statuses == ["running", "succeeded"]


class Failing(Callback):
    def __init__(self) -> None:
        self.ends: list[tuple[str, str]] = []

    def on_epoch_end(self, ctx: RunContext, values: dict[str, float]) -> None:
        raise RuntimeError("the histogram writer broke")

    def on_error(self, ctx: RunContext, code: str, message: str, node_id: str | None) -> None:
        self.ends.append(("error", code))

    def on_train_end(self, ctx: RunContext, status: Status, message: str) -> None:
        self.ends.append(("end", status))


def test_a_failing_callback_fails_the_run_with_its_error(tmp_path: Path) -> None:
    failing, reporter = Failing(), ListReporter()
    config = TrainConfig(epochs=1, batch_size=16, device="cpu")
    with pytest.raises(RuntimeError, match="histogram writer"):
        train(
            make_model(), make_pipeline(), config, CLASSES, tmp_path, reporter, task=TASK, callbacks=[failing]
        )
    assert failing.ends == [("error", "train_failed"), ("end", "failed")]
    assert [e.status for e in reporter.events if isinstance(e, StatusEvent)] == ["running", "failed"]

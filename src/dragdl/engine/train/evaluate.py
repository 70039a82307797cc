"""Evaluation passes and the final test report."""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from dragdl.engine.data import batch as batches
from dragdl.engine.data.batch import TARGET, Batch
from dragdl.engine.data.pipeline import BatchSource, Pipeline
from dragdl.engine.tasks.base import RunningMetrics, TaskKind
from dragdl.engine.tasks.settings import TrainSettings
from dragdl.engine.train.device import Precision
from dragdl.engine.train.state import TrainState


@dataclass
class Evaluator:
    """Runs a model over a split the way training does (device, precision, memory format)."""

    criterion: nn.Module
    device: torch.device
    precision: Precision
    channels_last: bool
    task: TaskKind
    classes: list[str]

    def new_running(self) -> RunningMetrics:
        return self.task.running(self.device, self.classes)

    def to_device(self, batch: Batch) -> Batch:
        return batches.to_device(batch, self.device, self.channels_last)

    def step(self, model: nn.Module, batch: Batch) -> tuple[Tensor, Tensor]:
        """The task kind's step on a batch already on the device, in the run's precision."""
        with self.autocast():
            return self.task.step(model, batch, self.criterion)

    def autocast(self) -> AbstractContextManager[Any]:
        if not self.precision.enabled:
            return nullcontext()
        return torch.autocast(self.device.type, dtype=self.precision.dtype)

    def run(
        self, model: nn.Module, source: BatchSource, prefix: str, collect: bool = False
    ) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
        """Metrics named `<prefix>loss` etc.; with `collect`, also what the task kind keeps of each
        prediction (class or value) and the targets."""
        was_training = model.training
        model.eval()
        running = self.new_running()
        preds: list[Tensor] = []
        targets: list[Tensor] = []
        with torch.no_grad():
            for cpu_batch in source.batches(0):
                batch = self.to_device(cpu_batch)
                loss, outputs = self.step(model, batch)
                running.add(loss, outputs, batch)
                if collect:
                    preds.append(self.task.collect(outputs))
                    targets.append(batch[TARGET])
        model.train(was_training)
        if not collect:
            return running.values(prefix), np.zeros(0, np.int64), np.zeros(0, np.int64)
        return running.values(prefix), torch.cat(preds).cpu().numpy(), torch.cat(targets).cpu().numpy()


def write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def build_report(
    state: TrainState,
    config: TrainSettings,
    task: TaskKind,
    classes: list[str],
    pipeline: Pipeline,
    model: nn.Module,
    device: str,
    monitor: str,
) -> dict[str, Any]:
    """report.json without the test details and timings (the caller adds those)."""
    return {
        "task": task.name,
        "classes": classes,
        "config": config.model_dump(),
        "device": device,
        "input_shape": list(pipeline.input_shape),
        "fitted": pipeline.fitted,
        "parameters": {
            "trainable": sum(t.numel() for t in model.parameters() if t.requires_grad),
            "total": sum(t.numel() for t in model.parameters()),
        },
        "epochs_completed": len(state.history),
        "stopped_early": state.stopped_early,
        "monitor": monitor,
        "best_epoch": state.best_epoch,
        "best_score": state.best_score,
        "history": [{"epoch": i + 1, **h} for i, h in enumerate(state.history)],
    }


def report_timings(state: TrainState, pipeline: Pipeline) -> dict[str, float]:
    n = pipeline.train.num_samples
    pure = sum(n / h["samples_per_s"] for h in state.history)
    return {
        "train_s": sum(h["epoch_time_s"] for h in state.history),
        "pure_train_s": pure,
        "mean_samples_per_s": n * len(state.history) / pure if pure > 0 else 0.0,
    }

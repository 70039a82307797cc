"""Tiny data and models for trainer tests: three learnable classes of 8x8 grey images."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import safetensors.torch
import torch
from torch import Tensor, nn

from dragdl.engine.data.base import TensorSource
from dragdl.engine.data.batch import Batch
from dragdl.engine.data.pipeline import OpStage, Pipeline, build_pipeline
from dragdl.engine.data.splits import Splits, split_indices
from dragdl.engine.tasks.classification import Classification
from dragdl.engine.tasks.settings import TrainConfig
from dragdl.engine.train.events import Event, ProgressEvent
from dragdl.engine.train.reporter import ListReporter, Reporter
from dragdl.engine.train.trainer import TIMING_KEYS, TrainResult, train

CLASSES = ["a", "b", "c"]
TASK = Classification()


def classify(model: nn.Module, batch: Batch) -> tuple[Tensor, Tensor]:
    """The classification kind's step with a plain cross-entropy (what a fast-path probe runs)."""
    return TASK.step(model, batch, nn.CrossEntropyLoss())


class StopAt(ListReporter):
    """Keeps every event (and hands it on to `also`), and sets `stop` when the progress event of
    (epoch, step) goes by: a run given `stop=stopper.stop` stops there, as a user's stop would."""

    def __init__(self, epoch: int, step: int, *also: Reporter) -> None:
        super().__init__()
        self.at = (epoch, step)
        self.also = also
        self.stop = threading.Event()

    def emit(self, event: Event) -> None:
        super().emit(event)
        for reporter in self.also:
            reporter.emit(event)
        if isinstance(event, ProgressEvent) and (event.epoch, event.step) == self.at:
            self.stop.set()


class Jitter(nn.Module):
    """A random op drawing from torch's global generator, as torchvision's random ops do."""

    def forward(self, x: Tensor) -> Tensor:
        return x + (torch.rand(x.shape) - 0.5) * 0.2


def make_source(n: int = 150) -> TensorSource:
    gen = torch.Generator().manual_seed(0)
    labels = np.arange(n) % 3
    base = torch.as_tensor(labels, dtype=torch.float32)[:, None, None, None] * 70 + 20
    images = (base + torch.rand(n, 1, 8, 8, generator=gen) * 90).clamp(0, 255).to(torch.uint8)
    return TensorSource(images, labels, tuple(CLASSES))


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(4 * 8 * 8, 3),
    )


def make_pipeline(
    random_stage: bool = True,
    splits: Splits | None = None,
    batch_size: int = 16,
    source: TensorSource | None = None,
) -> Pipeline:
    source = source or make_source()
    stages = [OpStage("norm", nn.Identity(), random=False, needs_float=True)]
    if random_stage:
        stages.append(OpStage("jitter", Jitter(), random=True, needs_float=True))
    if splits is None:
        splits = split_indices(source.labels, 0.2, 0.2, seed=0)
    return build_pipeline(
        source, splits, stages, batch_size, seed=0, device=torch.device("cpu"), num_workers=0
    )


Runner = Callable[..., tuple[TrainResult, ListReporter, nn.Module]]


@pytest.fixture
def run(tmp_path: Path) -> Runner:
    """Train a fresh tiny model; `out` names a sub-folder of tmp_path so runs can share one."""

    def go(
        out: str = "run",
        random_stage: bool = True,
        splits: Splits | None = None,
        source: TensorSource | None = None,
        reporter: ListReporter | None = None,
        resume: bool = False,
        stop: threading.Event | None = None,
        **config: Any,
    ) -> tuple[TrainResult, ListReporter, nn.Module]:
        reporter = reporter or ListReporter()
        model = make_model()
        pipeline = make_pipeline(random_stage, splits, source=source)
        cfg = TrainConfig(**{"epochs": 4, "batch_size": 16, "lr": 0.01, "device": "cpu", **config})
        result = train(
            model, pipeline, cfg, CLASSES, tmp_path / out, reporter, task=TASK, resume=resume, stop=stop
        )
        return result, reporter, model

    return go


def weights(path: Path) -> dict[str, Tensor]:
    return safetensors.torch.load_file(str(path))


def model_metrics(history: list[dict[str, float]]) -> list[dict[str, float]]:
    return [{k: v for k, v in h.items() if k not in TIMING_KEYS} for h in history]

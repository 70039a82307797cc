"""One trained sketcher bundle per session, with the model and pipeline that trained it still in memory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from dragdl.engine.bundle import write_bundle
from dragdl.engine.compile.plan import Plan, compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.data.batch import INPUT
from dragdl.engine.data.pipeline import Pipeline
from dragdl.engine.data.splits import split_indices
from dragdl.engine.run import prepare, read_report
from dragdl.engine.train.reporter import ListReporter
from dragdl.engine.train.trainer import TrainResult, train

from ...graphs import chain

OVERRIDES = {"epochs": 1, "batch_size": 128, "device": "cpu"}


def sketcher_graph() -> dict[str, Any]:
    graph: dict[str, Any] = json.loads(
        resources.files("dragdl.examples").joinpath("sketcher_cnn.json").read_text()
    )
    return graph


def digits_graph() -> dict[str, Any]:
    """A tiny graph with a Resize, a random op (training only) and a fitted Normalize after it."""
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("resize", "op.Resize", {"height": 12}),
        ("flip", "op.RandomHorizontalFlip", {"p": 0.5}),
        ("norm", "op.Normalize", {"preset": "dataset"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 2, "batch_size": 64, "lr": 0.01, "seed": 0}),
    ]
    return chain("Digits", nodes)


def context(tmp: Path) -> DataContext:
    return DataContext(data_dir=tmp, allow_download=False)


def split_test_indices(plan: Plan) -> np.ndarray:
    c = plan.config
    return split_indices(plan.source.labels, c.val_split, c.test_split, c.seed, plan.source.test_indices).test


@dataclass
class Trained:
    out: Path
    plan: Plan
    pipeline: Pipeline
    result: TrainResult

    def eval_batch(self) -> tuple[list[torch.Tensor], torch.Tensor]:
        """Raw uint8 test images and the trained model's probabilities on the pipeline's first eval batch."""
        assert self.pipeline.test is not None
        x = next(iter(self.pipeline.test.batches(0)))[INPUT]
        self.plan.model.eval()
        with torch.no_grad():
            probs = torch.softmax(self.plan.model(x), dim=1)
        indices = split_test_indices(self.plan)[: len(x)]
        return [self.plan.source.image(int(i)) for i in indices], probs


@pytest.fixture(scope="session")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trained]:
    """The sketcher example trained one epoch, as run_graph does it, keeping model and pipeline."""
    root = tmp_path_factory.mktemp("sketcher")
    plan = compile_graph(sketcher_graph(), context(root), overrides=OVERRIDES)
    graph = plan.graph.model_copy(deep=True)
    graph.node("train").params = plan.config.model_dump()
    pipeline = prepare(plan)
    out = root / "run"
    result = train(plan.model, pipeline, plan.config, plan.classes, out, ListReporter(), task=plan.task)
    write_bundle(out, graph, plan, pipeline.fitted, read_report(result))
    yield Trained(out, plan, pipeline, result)
    pipeline.close()

"""Sequence training throughput: DragDL against a hand-written PyTorch loop of the same model and data.

Two models, each built on the canvas and by hand the way a competent user writes it:

- LSTM on sequential MNIST (mnist-5k read row by row: 28 steps of 28 features): one LSTM layer of
  128 units, its last step, a Linear to the 10 classes;
- a 1-D CNN on the same sequences: Conv1d 32 (kernel 5) + ReLU, MaxPool1d 2, Conv1d 64 (kernel 5)
  + ReLU, global average pooling over time, Linear to the 10 classes. (On the built-in waves, the
  CNN's accuracy set, an epoch lasts a few tens of milliseconds: too short to time.)

Both train with Adam (lr 1e-3), batch 128, the same split (70/10/20, seed 0), the same thread count,
in one process. The hand-written loop indexes its batches out of the training tensor in DragDL's
epoch order; one of its epochs runs after each DragDL epoch, so every epoch sees the same machine
load. Speed is training samples per second over the training steps only.

    .venv/bin/python benchmarks/bench_sequence.py                 # both models, 5 epochs
    .venv/bin/python benchmarks/bench_sequence.py --model lstm --epochs 5 --threads 2

Target (issue 17): DragDL / hand-written >= 1.0 for both models.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from torch import Tensor, nn

from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.data.batches import epoch_order
from dragdl.engine.data.stages import derive_seed
from dragdl.engine.run import prepare, split
from dragdl.engine.train.events import Event, MetricEvent
from dragdl.engine.train.reporter import JsonlReporter, MultiReporter
from dragdl.engine.train.trainer import train

TARGET = 1.0
TRAIN = {"epochs": 3, "batch_size": 128, "optimizer": "adam", "lr": 0.001, "seed": 0, "val_split": 0.1,
         "test_split": 0.2, "device": "cpu", "precision": "auto", "memory_format": "auto"}  # fmt: skip


def _graph(name: str, dataset: str, layers: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    nodes = [{"id": "data", "type": "dataset.sequence", "params": {"source": "builtin", "name": dataset}}]
    nodes += [{"id": f"l{i}", "type": kind, "params": params} for i, (kind, params) in enumerate(layers)]
    nodes.append({"id": "train", "type": "train.Classifier", "params": dict(TRAIN)})
    ids = [node["id"] for node in nodes]
    edges = [{"source": a, "target": b} for a, b in itertools.pairwise(ids)]
    return {"version": 1, "name": name, "nodes": nodes, "edges": edges}


GRAPHS = {
    "lstm": _graph(
        "LSTM on seq-mnist",
        "seq-mnist",
        [
            ("layer.LSTM", {"hidden_size": 128}),
            ("layer.LastStep", {}),
            ("layer.Linear", {"out_features": "auto"}),
        ],
    ),
    "cnn": _graph(
        "1-D CNN on seq-mnist",
        "seq-mnist",
        [
            ("layer.Conv1d", {"out_channels": 32, "kernel_size": 5, "padding": "same"}),
            ("layer.ReLU", {}),
            ("layer.MaxPool1d", {"kernel_size": 2}),
            ("layer.Conv1d", {"out_channels": 64, "kernel_size": 5, "padding": "same"}),
            ("layer.ReLU", {}),
            ("layer.GlobalPoolTime", {"mode": "mean"}),
            ("layer.Linear", {"out_features": "auto"}),
        ],
    ),
}


class LstmNet(nn.Module):
    def __init__(self, features: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: Tensor) -> Tensor:
        out, _ = self.lstm(x)
        result: Tensor = self.head(out[:, -1])
        return result


class Cnn1d(nn.Module):
    def __init__(self, features: int, classes: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv1d(features, 32, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool1d(2),
            nn.Conv1d(32, 64, 5, padding=2),
            nn.ReLU(),
        )
        self.head = nn.Linear(64, classes)

    def forward(self, x: Tensor) -> Tensor:
        result: Tensor = self.head(self.body(x.transpose(1, 2)).mean(dim=2))
        return result


@dataclass
class Outcome:
    epoch_s: list[float]
    samples: int
    test_accuracy: float

    @property
    def samples_per_s(self) -> float:
        return self.samples * len(self.epoch_s) / max(sum(self.epoch_s), 1e-9)


class PlainLoop:
    """The hand-written loop: batches indexed out of the training tensor, Adam, cross-entropy."""

    def __init__(
        self, model: nn.Module, x: Tensor, y: Tensor, test: tuple[Tensor, Tensor], seed: int
    ) -> None:
        self.model, self.x, self.y, self.test, self.seed = model, x, y, test, seed
        self.optimizer = torch.optim.Adam(model.parameters(), lr=TRAIN["lr"])
        self.loss_fn = nn.CrossEntropyLoss()
        self.epoch_s: list[float] = []

    def epoch(self) -> None:
        model, size, epoch = self.model, TRAIN["batch_size"], len(self.epoch_s)
        model.train()
        torch.manual_seed(derive_seed(self.seed, epoch))
        t0 = time.perf_counter()
        order = epoch_order(len(self.y), True, self.seed, epoch)
        for start in range(0, len(self.y), size):
            index = order[start : start + size]
            self.optimizer.zero_grad()
            loss = self.loss_fn(model(self.x[index]), self.y[index])
            loss.backward()
            self.optimizer.step()
        self.epoch_s.append(time.perf_counter() - t0)

    def outcome(self) -> Outcome:
        self.model.eval()
        x, y = self.test
        with torch.no_grad():
            accuracy = float((self.model(x).argmax(1) == y).float().mean())
        return Outcome(self.epoch_s, len(self.y), accuracy)


class Interleave:
    """A reporter that runs one epoch of the plain loop after each DragDL epoch."""

    def __init__(self, plain: PlainLoop) -> None:
        self.plain = plain

    def emit(self, event: Event) -> None:
        if isinstance(event, MetricEvent) and event.scope == "epoch":
            self.plain.epoch()


def run_model(name: str, epochs: int, data_dir: Path) -> tuple[Outcome, Outcome]:
    graph = GRAPHS[name]
    for node in graph["nodes"]:
        if node["id"] == "train":
            node["params"]["epochs"] = epochs
    plan = compile_graph(graph, DataContext(data_dir=data_dir, allow_download=False))
    source = plan.source
    values = torch.from_numpy(np.asarray(source.values))  # type: ignore[attr-defined]
    labels = torch.from_numpy(np.asarray(plan.targets, dtype=np.int64))
    splits = split(plan)
    train_rows, test_rows = torch.from_numpy(splits.train), torch.from_numpy(splits.test)
    features, classes = values.shape[2], len(plan.classes)
    torch.manual_seed(0)
    hand: nn.Module = LstmNet(features, 128, classes) if name == "lstm" else Cnn1d(features, classes)
    plain = PlainLoop(
        hand, values[train_rows], labels[train_rows], (values[test_rows], labels[test_rows]), plan.config.seed
    )
    pipeline = prepare(plan)
    with tempfile.TemporaryDirectory() as out, JsonlReporter(Path(out)) as jsonl:
        result = train(
            plan.model,
            pipeline,
            plan.config,
            plan.classes,
            Path(out),
            MultiReporter(jsonl, Interleave(plain)),
            task=plan.task,
        )
    pipeline.close()
    n = pipeline.train.num_samples
    assert result.test is not None
    ours = Outcome([n / h["samples_per_s"] for h in result.history], n, result.test["test_accuracy"])
    return ours, plain.outcome()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", choices=["lstm", "cnn", "both"], default="both")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--data-dir", type=Path, default=Path.home() / ".dragdl")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    console = Console()
    table = Table(
        title=f"Sequence training on the CPU: {args.epochs} epochs, batch 128, {args.threads} threads"
    )
    for col in (
        "model",
        "DragDL samples/s",
        "hand-written samples/s",
        "ratio",
        "DragDL test acc",
        "hand test acc",
    ):
        table.add_column(col, justify="right")
    names = ["lstm", "cnn"] if args.model == "both" else [args.model]
    ratios = []
    for name in names:
        ours, plain = run_model(name, args.epochs, args.data_dir)
        ratio = ours.samples_per_s / plain.samples_per_s
        ratios.append(ratio)
        table.add_row(
            GRAPHS[name]["name"],
            f"{ours.samples_per_s:,.0f}",
            f"{plain.samples_per_s:,.0f}",
            f"{ratio:.2f}x",
            f"{ours.test_accuracy:.2%}",
            f"{plain.test_accuracy:.2%}",
        )
    table.caption = f"target: DragDL / hand-written >= {TARGET} for every model; lowest {min(ratios):.2f}x"
    console.print(table)


if __name__ == "__main__":
    main()

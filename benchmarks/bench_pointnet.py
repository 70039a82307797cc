"""PointNet training throughput: DragDL against a hand-written PyTorch PointNet loop of the same
model and data.

The model, built on the canvas and by hand the way a competent user writes it (channels first,
(B, C, N), Conv1d with kernel 1 throughout): an input T-Net (a PointNet of 16, 32 and 256 channels,
max pooling, 128 and 64 units, a 3x3 matrix, its orthogonality term weighted 0.001 in the loss), a
shared MLP of 64, 64, 128 and 256 channels with BatchNorm and ReLU, max pooling over the points,
Linear 128 + ReLU, Linear to the 6 classes. Data: the built-in synthetic shapes (6 x 300 clouds of
256 points), centred and scaled to the unit sphere once (DragDL's Normalize to unit sphere; the
hand-written loop gets the same tensor).

Both train with Adam (lr 1e-3), batch 32, the same split (70/10/20, seed 0), the same thread count,
in one process. The hand-written loop indexes its batches out of the training tensor in DragDL's
epoch order; one of its epochs runs after each DragDL epoch, so every epoch sees the same machine
load. Speed is training samples per second over the training steps only.

    .venv/bin/python benchmarks/bench_pointnet.py                 # 3 epochs
    .venv/bin/python benchmarks/bench_pointnet.py --epochs 5 --threads 2
    .venv/bin/python benchmarks/bench_pointnet.py --precision fp32    # the hand loop's precision

Target (issue 18): DragDL / hand-written >= 1.0.
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
from dragdl.engine.data.point_ops import NormalizePoints
from dragdl.engine.data.stages import derive_seed
from dragdl.engine.run import prepare, split
from dragdl.engine.train.events import Event, MetricEvent
from dragdl.engine.train.reporter import JsonlReporter, MultiReporter
from dragdl.engine.train.trainer import train

TARGET = 1.0
REGULARIZATION = 0.001
TRAIN = {"epochs": 3, "batch_size": 32, "optimizer": "adam", "lr": 0.001, "seed": 0, "val_split": 0.1,
         "test_split": 0.2, "device": "cpu", "precision": "auto", "memory_format": "auto"}  # fmt: skip
LAYERS: list[tuple[str, dict[str, Any]]] = [
    ("op.NormalizePoints", {}),
    ("layer.TNet", {"width": 16, "regularization": REGULARIZATION}),
    ("layer.SharedMLP", {"out_channels": 64}),
    ("layer.SharedMLP", {"out_channels": 64}),
    ("layer.SharedMLP", {"out_channels": 128}),
    ("layer.SharedMLP", {"out_channels": 256}),
    ("layer.GlobalPoolPoints", {"mode": "max"}),
    ("layer.Linear", {"out_features": 128}),
    ("layer.ReLU", {}),
    ("layer.Linear", {"out_features": "auto"}),
]


def pointnet_graph(epochs: int, precision: str = "auto") -> dict[str, Any]:
    data = {"source": "builtin", "name": "shapes", "points": 256, "per_class": 300, "seed": 0}
    nodes = [{"id": "data", "type": "dataset.points", "params": data}]
    nodes += [{"id": f"l{i}", "type": kind, "params": params} for i, (kind, params) in enumerate(LAYERS)]
    nodes.append(
        {
            "id": "train",
            "type": "train.Classifier",
            "params": {**TRAIN, "epochs": epochs, "precision": precision},
        }
    )
    ids = [node["id"] for node in nodes]
    edges = [{"source": a, "target": b} for a, b in itertools.pairwise(ids)]
    return {"version": 1, "name": "PointNet on the shapes", "nodes": nodes, "edges": edges}


def mlp(widths: list[int]) -> list[nn.Module]:
    """Shared per-point layers on (B, C, N): Conv1d kernel 1, BatchNorm, ReLU."""
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(widths):
        layers += [nn.Conv1d(a, b, 1, bias=False), nn.BatchNorm1d(b), nn.ReLU()]
    return layers


class TNet(nn.Module):
    def __init__(self, k: int, width: int) -> None:
        super().__init__()
        self.k = k
        self.features = nn.Sequential(*mlp([k, width, 2 * width, 16 * width]))
        self.head = nn.Sequential(
            nn.Linear(16 * width, 8 * width),
            nn.ReLU(),
            nn.Linear(8 * width, 4 * width),
            nn.ReLU(),
            nn.Linear(4 * width, k * k),
        )
        nn.init.zeros_(self.head[-1].weight)
        nn.init.zeros_(self.head[-1].bias)
        self.register_buffer("eye", torch.eye(k))

    def forward(self, x: Tensor) -> Tensor:
        pooled = self.features(x).amax(dim=2)
        return self.head(pooled).view(-1, self.k, self.k) + self.eye


class PointNet(nn.Module):
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.tnet = TNet(3, 16)
        self.body = nn.Sequential(*mlp([3, 64, 64, 128, 256]))
        self.head = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, classes))
        self.matrix: Tensor | None = None

    def forward(self, points: Tensor) -> Tensor:
        x = points.transpose(1, 2)  # (B, 3, N)
        self.matrix = self.tnet(x)
        x = torch.bmm(self.matrix.transpose(1, 2), x)  # each point times the matrix
        result: Tensor = self.head(self.body(x).amax(dim=2))
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

    def __init__(self, model: PointNet, x: Tensor, y: Tensor, test: tuple[Tensor, Tensor], seed: int) -> None:
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
            matrix = model.matrix
            gram = matrix @ matrix.transpose(1, 2)
            loss = loss + REGULARIZATION * ((gram - model.tnet.eye) ** 2).sum((1, 2)).mean()
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


def run_model(epochs: int, data_dir: Path, precision: str) -> tuple[Outcome, Outcome]:
    plan = compile_graph(
        pointnet_graph(epochs, precision), DataContext(data_dir=data_dir, allow_download=False)
    )
    values = NormalizePoints()(torch.from_numpy(np.asarray(plan.source.values)))  # type: ignore[attr-defined]
    labels = torch.from_numpy(np.asarray(plan.targets, dtype=np.int64))
    splits = split(plan)
    train_rows, test_rows = torch.from_numpy(splits.train), torch.from_numpy(splits.test)
    torch.manual_seed(0)
    plain = PlainLoop(
        PointNet(len(plan.classes)),
        values[train_rows],
        labels[train_rows],
        (values[test_rows], labels[test_rows]),
        plan.config.seed,
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
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument(
        "--precision",
        choices=["auto", "fp32", "bf16"],
        default="auto",
        help="DragDL's precision (auto: the train node's probe chooses; the hand-written loop is fp32)",
    )
    parser.add_argument("--data-dir", type=Path, default=Path.home() / ".dragdl")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    table = Table(
        title=f"PointNet training on the CPU: {args.epochs} epochs, batch 32, {args.threads} threads, "
        f"DragDL in {args.precision}"
    )
    for col in ("DragDL samples/s", "hand-written samples/s", "ratio", "DragDL test acc", "hand test acc"):
        table.add_column(col, justify="right")
    ours, plain = run_model(args.epochs, args.data_dir, args.precision)
    ratio = ours.samples_per_s / plain.samples_per_s
    table.add_row(
        f"{ours.samples_per_s:,.0f}",
        f"{plain.samples_per_s:,.0f}",
        f"{ratio:.2f}x",
        f"{ours.test_accuracy:.2%}",
        f"{plain.test_accuracy:.2%}",
    )
    table.caption = f"target: DragDL / hand-written >= {TARGET}"
    Console().print(table)


if __name__ == "__main__":
    main()

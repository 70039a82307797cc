"""Head-only transfer learning with and without the frozen-feature cache.

EfficientNet-Lite0 (ImageNet weights, frozen) on mnist-5k resized to --size (70/10/20 split,
seed 0), Adam 1e-3, batch 64. Both runs start from the same compiled graph and seed, so they train
the same head on the same batches; the cached run computes the backbone's features once (setup)
and trains on them, the other runs the backbone at every step and in every validation pass.
Epoch times are the trainer's (training steps + validation).

    .venv/bin/python benchmarks/bench_transfer.py              # 3 epochs at 64x64
    .venv/bin/python benchmarks/bench_transfer.py --size 32 --epochs 5

Targets: epoch-2+ speed-up >= 5x, test accuracies within 1 point.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.table import Table
from torch import nn

from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.run import prepare, split
from dragdl.engine.run.feature_cache import feature_pipeline, frozen_backbone
from dragdl.engine.train.reporter import NullReporter
from dragdl.engine.train.trainer import train


def transfer_graph(size: int, epochs: int) -> dict[str, Any]:
    nodes = [
        ("data", "dataset.builtin", {"name": "mnist-5k"}),
        ("resize", "op.Resize", {"height": size}),
        ("lite0", "model.efficientnet_lite0", {"freeze_features": True, "resize_input": False}),
        (
            "train",
            "train.Classifier",
            {"epochs": epochs, "batch_size": 64, "lr": 1e-3, "seed": 0, "device": "cpu"},
        ),
    ]
    edges = [{"source": a[0], "target": b[0]} for a, b in itertools.pairwise(nodes)]
    return {
        "version": 1,
        "name": "Lite0 on mnist-5k",
        "nodes": [{"id": i, "type": t, "params": p} for i, t, p in nodes],
        "edges": edges,
    }


@dataclass
class Outcome:
    setup_s: float
    """Compile and data preparation: for the cached run, the one pass of the backbone."""
    epoch_s: list[float]
    test_accuracy: float
    wall_s: float


def run(graph: dict[str, Any], data_dir: Path, cached: bool) -> Outcome:
    start = time.perf_counter()
    ctx = DataContext(data_dir=data_dir, allow_download=False)
    plan = compile_graph(graph, ctx)
    frozen = frozen_backbone(plan)
    assert frozen is not None, "the graph must allow the feature cache"
    reporter = NullReporter()
    model: nn.Module
    if cached:
        model, pipeline = frozen.head_network(), feature_pipeline(plan, frozen, split(plan), ctx, reporter)
    else:
        model, pipeline = plan.model, prepare(plan)
    setup_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as out:
        result = train(
            model,
            pipeline,
            plan.config,
            plan.classes,
            Path(out),
            reporter,
            task=plan.task,
            network=plan.model,
        )
    pipeline.close()
    assert result.test is not None
    return Outcome(
        setup_s,
        [h["epoch_time_s"] for h in result.history],
        result.test["test_accuracy"],
        time.perf_counter() - start,
    )


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--size", type=int, default=64, help="images are resized to size x size")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    console = Console()
    graph = transfer_graph(args.size, args.epochs)
    with tempfile.TemporaryDirectory() as data_dir:
        # Imports and Lite0's weight conversion happen once per process, outside both timings.
        compile_graph(graph, DataContext(data_dir=Path(data_dir), allow_download=False))
        # A fresh data dir: the cached run pays for computing the features, as a first run does.
        cached = run(graph, Path(data_dir), cached=True)
        console.log(f"cached: setup {cached.setup_s:.1f} s, epochs {[round(s, 2) for s in cached.epoch_s]}")
        full = run(graph, Path(data_dir), cached=False)
        console.log(f"uncached: setup {full.setup_s:.1f} s, epochs {[round(s, 2) for s in full.epoch_s]}")

    table = Table(
        title=f"EfficientNet-Lite0 head on mnist-5k {args.size}x{args.size}: {args.epochs} epochs, "
        f"cpu, {args.threads} threads"
    )
    table.add_column("")
    for col in ("setup s", *(f"epoch {i + 1} s" for i in range(args.epochs)), "wall s", "test accuracy"):
        table.add_column(col, justify="right")
    for label, o in (("feature cache", cached), ("backbone every step", full)):
        table.add_row(
            label,
            f"{o.setup_s:.1f}",
            *(f"{s:.2f}" for s in o.epoch_s),
            f"{o.wall_s:.1f}",
            f"{o.test_accuracy:.2%}",
        )
    console.print(table)
    later = slice(1, None) if args.epochs > 1 else slice(None)
    speedup = sum(full.epoch_s[later]) / max(sum(cached.epoch_s[later]), 1e-9)
    gap = abs(cached.test_accuracy - full.test_accuracy)
    # Epochs after which the one backbone pass has paid for itself.
    extra = cached.setup_s - full.setup_s
    per_epoch = sum(full.epoch_s) / len(full.epoch_s) - sum(cached.epoch_s) / len(cached.epoch_s)
    console.print(
        f"epoch-2+ speed-up: {speedup:,.0f}x (target >= 5x); whole run {full.wall_s / cached.wall_s:.1f}x "
        f"faster, the backbone pass included (it pays off after {extra / per_epoch:.1f} epochs); "
        f"test accuracy gap {gap * 100:.2f} points (target <= 1)"
    )


if __name__ == "__main__":
    main()

"""Tables: DragDL's test figures beside scikit-learn's, and training throughput against plain PyTorch.

1. Quality. For iris, wine, breast_cancer (classification) and diabetes (regression), the shipped
   template trains through `dragdl run`'s engine (seed 0: val 0.1, test 0.2, the kind's split:
   stratified for classes, random for values). scikit-learn's LogisticRegression (classes) or Ridge
   (values) is fitted on the same training rows, standardized with the training rows' statistics,
   and scored on the same test rows.
2. Speed. The breast-cancer MLP (30 -> 64 -> ReLU -> Dropout -> 2) trains in DragDL and in a
   hand-written PyTorch loop over the same (N, F) float32 tensors that DragDL's table pipeline
   produced, from the same initial weights, with the same batch size, optimizer and thread count,
   in one process. Epochs alternate (one plain epoch after each DragDL epoch) so both see the same
   machine load. Speed is training samples per second over the training steps only.

    .venv/bin/python benchmarks/bench_tabular.py
    .venv/bin/python benchmarks/bench_tabular.py --epochs 60 --rounds 3

Targets: iris >= 93%, wine >= 95%, breast_cancer >= 95% test accuracy, diabetes R² >= 0.38;
DragDL/plain speed ratio >= 0.9.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from torch import nn

from dragdl.engine.compile.plan import Plan, compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.data.batches import TensorBatches
from dragdl.engine.data.tables import TableSource
from dragdl.engine.run import prepare, run_graph, split
from dragdl.engine.train.events import Event, MetricEvent, StartEvent
from dragdl.engine.train.reporter import MultiReporter, NullReporter

SETS = {
    "iris": ("logistic_regression_iris", "test_accuracy", 0.93),
    "wine": ("logistic_regression_wine", "test_accuracy", 0.95),
    "breast_cancer": ("mlp_breast_cancer", "test_accuracy", 0.95),
    "diabetes": ("linear_regression_diabetes", "test_r2", 0.38),
}
SPEED_TEMPLATE = "mlp_breast_cancer"


def template(name: str) -> dict[str, Any]:
    graph: dict[str, Any] = json.loads(
        resources.files("dragdl.examples").joinpath(f"{name}.json").read_text()
    )
    return graph


def sklearn_score(plan: Plan) -> float:
    """LogisticRegression or Ridge on the plan's split, standardized on its training rows."""
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.preprocessing import StandardScaler

    assert isinstance(plan.source, TableSource)
    columns = plan.source.features.columns
    x = np.stack([columns[name] for name in plan.source.features.names], axis=1)
    splits = split(plan)
    scaler = StandardScaler().fit(x[splits.train])
    y = plan.targets
    model = Ridge() if plan.task.target == "value" else LogisticRegression(max_iter=5000)
    model.fit(scaler.transform(x[splits.train]), y[splits.train])
    return float(model.score(scaler.transform(x[splits.test]), y[splits.test]))


def quality(ctx: DataContext, console: Console) -> None:
    table = Table(title="Test figures on the same split (seed 0: train 70% / val 10% / test 20%)")
    for column in ("set", "template", "metric", "DragDL", "scikit-learn", "goal", "train s"):
        table.add_column(column, justify="right" if column not in ("set", "template") else "left")
    for name, (graph_name, metric, goal) in SETS.items():
        graph = template(graph_name)
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            run_graph(graph, ctx, Path(out), NullReporter(), overrides={"device": "cpu"})
            seconds = time.perf_counter() - start
            report = json.loads((Path(out) / "report.json").read_text())
        ours = report["test"][metric]
        theirs = sklearn_score(compile_graph(graph, ctx, overrides={"device": "cpu"}))
        baseline = "Ridge" if metric == "test_r2" else "LogisticRegression"
        table.add_row(
            name,
            graph_name,
            "R²" if metric == "test_r2" else "accuracy",
            f"{ours:.4f}",
            f"{theirs:.4f} ({baseline})",
            f">= {goal}",
            f"{seconds:.1f}",
        )
    console.print(table)


class PlainLoop:
    """A hand-written loop over the same tensors: randperm, index, forward, backward, step."""

    def __init__(self, batches: TensorBatches, init_from: nn.Module, lr: float, seed: int) -> None:
        self.x, self.y = batches.images, batches.labels
        self.batch_size = batches.batch_size
        features = self.x.shape[1]
        self.model = nn.Sequential(
            nn.Linear(features, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, int(self.y.max()) + 1)
        )
        ours = [p for p in init_from.parameters()]
        mine = list(self.model.parameters())
        if [p.shape for p in ours] != [p.shape for p in mine]:
            raise ValueError(f"the DragDL network is not the breast-cancer MLP: {[p.shape for p in ours]}")
        with torch.no_grad():
            for dst, src in zip(mine, ours, strict=True):
                dst.copy_(src)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.loss_fn = nn.CrossEntropyLoss()
        # Its own generator: the trainer reseeds torch's global one every epoch.
        self.gen = torch.Generator().manual_seed(seed)
        self.epoch_s: list[float] = []

    def epoch(self) -> None:
        self.model.train()
        start = time.perf_counter()
        order = torch.randperm(len(self.y), generator=self.gen)
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            self.optimizer.zero_grad()
            loss = self.loss_fn(self.model(self.x[idx]), self.y[idx])
            loss.backward()
            self.optimizer.step()
        self.epoch_s.append(time.perf_counter() - start)


class Interleave:
    """Runs one plain epoch each time DragDL reports an epoch (after DragDL's epoch timing stopped);
    with `plain_first`, one more before DragDL's first epoch and none after its last, so that in
    alternate rounds each loop is the one that runs right after the other's epoch."""

    def __init__(self, plain: PlainLoop, plain_first: bool, epochs: int) -> None:
        self.plain, self.plain_first, self.epochs = plain, plain_first, epochs

    def emit(self, event: Event) -> None:
        if isinstance(event, StartEvent) and self.plain_first:
            self.plain.epoch()
        last = self.plain_first and isinstance(event, MetricEvent) and event.epoch == self.epochs
        if isinstance(event, MetricEvent) and event.scope == "epoch" and not last:
            self.plain.epoch()


def speed(ctx: DataContext, epochs: int, rounds: int, batch_size: int | None, console: Console) -> None:
    graph = template(SPEED_TEMPLATE)
    overrides: dict[str, Any] = {"device": "cpu", "epochs": epochs, "early_stopping": False}
    if batch_size is not None:
        overrides["batch_size"] = batch_size
    ours_s: list[float] = []
    plain_s: list[float] = []
    samples = 0
    for r in range(rounds):
        plan = compile_graph(graph, ctx, overrides=overrides)
        pipeline = prepare(plan)  # the tensors the DragDL run below trains on (same seed, same split)
        assert isinstance(pipeline.train, TensorBatches)
        plain = PlainLoop(pipeline.train, plan.model, plan.config.lr, plan.config.seed)
        samples = pipeline.train.num_samples
        with tempfile.TemporaryDirectory() as out:
            # run_graph compiles the same graph again: same seed, so the same initial weights.
            result = run_graph(
                graph,
                ctx,
                Path(out),
                MultiReporter(NullReporter(), Interleave(plain, r % 2 == 1, epochs)),
                overrides,
            )
        ours = [samples / h["samples_per_s"] for h in result.history]
        ours_s.extend(ours)
        plain_s.extend(plain.epoch_s)
        console.log(
            f"round {r + 1}: DragDL {samples * len(ours) / sum(ours):,.0f} samples/s, "
            f"plain {samples * len(plain.epoch_s) / sum(plain.epoch_s):,.0f} samples/s"
        )
    ours_rate = samples * len(ours_s) / sum(ours_s)
    plain_rate = samples * len(plain_s) / sum(plain_s)
    paired = [p / o for o, p in zip(ours_s, plain_s, strict=True)]
    batch = batch_size or graph["nodes"][-1]["params"]["batch_size"]
    table = Table(
        title=f"Training throughput, {SPEED_TEMPLATE} ({samples} training rows, batch "
        f"{batch}): {epochs} epochs x {rounds} rounds, cpu, "
        f"{torch.get_num_threads()} thread(s) outside training; both loops train on 1"
    )
    for column in ("", "samples/s (train)", "train s / round"):
        table.add_column(column, justify="right")
    table.add_row("DragDL (table pipeline + trainer)", f"{ours_rate:,.0f}", f"{sum(ours_s) / rounds:.3f}")
    table.add_row("hand-written PyTorch loop", f"{plain_rate:,.0f}", f"{sum(plain_s) / rounds:.3f}")
    table.caption = (
        f"speed ratio DragDL/plain = {ours_rate / plain_rate:.3f} (median of paired epochs "
        f"{np.median(paired):.3f}; target >= 0.9)"
    )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--epochs", type=int, default=40, help="epochs of the speed comparison")
    parser.add_argument("--rounds", type=int, default=4, help="odd rounds start with the plain loop")
    parser.add_argument("--batch-size", type=int, default=None, help="default: the template's (32)")
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as data:
        ctx = DataContext(data_dir=Path(data), allow_download=False)
        if not args.skip_quality:
            quality(ctx, console)
        speed(ctx, args.epochs, args.rounds, args.batch_size, console)


if __name__ == "__main__":
    main()

"""Scale: what early stopping of poor trials saves a hyper-parameter sweep.

Sweep section: a sweep of the Quick Draw "sketcher" CNN (examples/sketcher_cnn.json plus a Dropout
before its last layer) on mnist-5k, searching the learning rate (log range), the batch size
(choices) and the dropout probability. The same sampled configurations are trained twice in this
process, one trial at a time: once with the sweep's pruner (median by default) stopping poor
trials after an epoch whose validation accuracy is below the finished trials' median, once with
every trial run to its last epoch. Sampling, pruning and substitution are the engine's own
(`engine/sweep`), exactly as the server's sweep driver asks them; each trial is a real
`run_graph` training whose per-epoch validation accuracy is the objective.

DDP section: the sketcher CNN on mnist-5k (seed 0, fp32, contiguous), trained once in one process
with as many PyTorch threads as there are workers, and once by `--workers` data-parallel workers of
1 CPU on Ray Train (a local Ray; gloo), each taking its share of every batch of 64. Reports the
test accuracy of both (target: within 1 point), their training throughput (samples per second of
the epochs, without start-up) and the wall time of each run, start-up included.

Latency section: a real `dragdl serve` (single-user, fresh data dir, embedded Ray) is sent small
tasks one after another (the iris logistic regression, 3 epochs), and the time from the POST to the
first metric the API returns (`GET /api/tasks/{id}/metrics`, polled every 20 ms) is taken for each.
The first task starts the cluster and is reported apart; the others are the "warm server" figure.
It runs twice: with warm workers (the default, `DRAGDL_WARM_WORKERS=1`) and without (`=0`), each
task submitted 3 s after the previous one ended (a user's next click; the new warm worker imports torch
meanwhile).

    .venv/bin/python benchmarks/bench_scale.py                      # both sections
    .venv/bin/python benchmarks/bench_scale.py --part sweep --trials 8 --epochs 3 --pruner halving
    .venv/bin/python benchmarks/bench_scale.py --part latency --tasks 10
    .venv/bin/python benchmarks/bench_scale.py --part ddp --workers 2 --ddp-epochs 3

Targets: the pruned sweep's wall time <= 60% of the full one's, its best validation accuracy
within 0.5 points of the full sweep's best; DDP test accuracy within 1 point of the single
process's; submit -> first metric p50 on a warm server < 1.5 s.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from pydantic import TypeAdapter
from rich.console import Console
from rich.table import Table

from dragdl.engine.data.base import DataContext
from dragdl.engine.graph.search import SearchSection, substitute
from dragdl.engine.run import run_graph
from dragdl.engine.sweep.study import PrunerName, StoredTrial, SweepPlan, ask, should_prune
from dragdl.engine.train.events import Event, MetricEvent
from dragdl.engine.train.reporter import ListReporter
from server_process import free_port, running_server

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "dragdl" / "examples" / "sketcher_cnn.json"
OBJECTIVE = "val_accuracy"
SEARCH: dict[str, Any] = {
    "train": {
        "lr": {"type": "float", "low": 1e-4, "high": 1e-2, "log": True},
        "batch_size": {"type": "choice", "values": [32, 64, 128]},
    },
    "drop": {"p": {"type": "float", "low": 0.0, "high": 0.6}},
}


def sweep_graph(epochs: int) -> dict[str, Any]:
    """The sketcher CNN with a Dropout before its output layer, `epochs` long, and its search section."""
    graph: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    graph["nodes"].append({"id": "drop", "type": "layer.Dropout", "params": {"p": 0.3}})
    graph["edges"] = [
        edge for edge in graph["edges"] if (edge["source"], edge["target"]) != ("relu4", "dense2")
    ]
    graph["edges"] += [{"source": "relu4", "target": "drop"}, {"source": "drop", "target": "dense2"}]
    train = next(node for node in graph["nodes"] if node["id"] == "train")
    train["params"].update(epochs=epochs, early_stopping=False)
    graph["search"] = SEARCH
    return graph


class TrialReporter:
    """Hands each epoch's objective to the pruner, as the sweep driver does with a task's events,
    and stops the training (after its checkpoint) once the pruner says so."""

    def __init__(self, plan: SweepPlan, done: list[StoredTrial], trial: StoredTrial) -> None:
        self.plan, self.done, self.trial = plan, done, trial
        self.stop = threading.Event()

    def emit(self, event: Event) -> None:
        if not (isinstance(event, MetricEvent) and event.scope == "epoch" and OBJECTIVE in event.values):
            return
        self.trial.intermediate[event.epoch] = event.values[OBJECTIVE]
        if self.plan.pruner != "none":
            pruned, attrs = should_prune(self.plan, [*self.done, self.trial], self.trial.number)
            self.trial.system_attrs = attrs
            if pruned:
                self.stop.set()


@dataclass
class SweepResult:
    wall_s: float
    trials: list[StoredTrial]
    epochs_trained: int

    @property
    def best(self) -> float:
        """The sweep's answer: its best complete trial (a pruned trial's partial value does not count,
        as on the server, even when the pruner spoke only at its last epoch)."""
        return max(t.value for t in self.trials if t.state == "COMPLETE" and t.value is not None)


def run_sweep(graph: dict[str, Any], plan: SweepPlan, ctx: DataContext, work: Path) -> SweepResult:
    done: list[StoredTrial] = []
    epochs = 0
    start = time.perf_counter()
    for number in range(plan.trials):
        params, attrs = ask(plan, done)
        trial = StoredTrial(number, params, "RUNNING", system_attrs=attrs)
        reporter = TrialReporter(plan, done, trial)
        run_graph(
            substitute(graph, params),
            ctx,
            work / f"{plan.pruner}-{number}",
            reporter,
            stop=reporter.stop,
        )
        epochs += len(trial.intermediate)
        trial.state = "PRUNED" if reporter.stop.is_set() else "COMPLETE"
        # The task's best epoch, as the sweep driver settles a trial (a pruned one: its best so far).
        trial.value = max(trial.intermediate.values())
        done.append(trial)
        print(
            f"  {plan.pruner:>7} trial {number}: {trial.state.lower()} after {len(trial.intermediate)} "
            f"epochs, best {OBJECTIVE} {trial.value:.2%}, {time.perf_counter() - start:.0f} s so far",
            flush=True,
        )
    return SweepResult(time.perf_counter() - start, done, epochs)


def trial_table(title: str, result: SweepResult) -> Table:
    table = Table(title=title)
    for column in ("#", "lr", "batch", "dropout", "state", "epochs", "best val acc"):
        table.add_column(column, justify="right")
    for t in result.trials:
        table.add_row(
            str(t.number),
            f"{float(t.params['train.lr']):.2e}",
            str(t.params["train.batch_size"]),
            f"{float(t.params['drop.p']):.2f}",
            t.state,
            str(len(t.intermediate)),
            f"{(t.value or 0):.2%}",
        )
    return table


def sweep_section(ctx: DataContext, trials: int, epochs: int, pruner: PrunerName, console: Console) -> None:
    graph = sweep_graph(epochs)
    section = TypeAdapter(SearchSection).validate_python(graph["search"])
    # Random sampling: each trial's draw depends on the seed and the trial number only, so both
    # sweeps train the same configurations in the same order and differ by the pruner alone.
    base = SweepPlan(section, "maximize", sampler="random", pruner="none", seed=0, trials=trials)
    pruned_plan = SweepPlan(section, "maximize", sampler="random", pruner=pruner, seed=0, trials=trials)
    with tempfile.TemporaryDirectory() as tmp:
        # Untimed: the first training in a process loads the data and warms PyTorch up, which would
        # otherwise be charged to whichever sweep runs first.
        warm = copy.deepcopy(graph)
        next(node for node in warm["nodes"] if node["id"] == "train")["params"]["epochs"] = 1
        run_graph(substitute(warm, {}), ctx, Path(tmp) / "warm-up", ListReporter())
        console.print(f"[bold]{trials} trials of {epochs} epochs, pruner {pruner}[/bold]")
        pruned = run_sweep(graph, pruned_plan, ctx, Path(tmp))
        console.print(trial_table(f"with {pruner} pruning", pruned))
        full = run_sweep(graph, base, ctx, Path(tmp))
        console.print(trial_table("every trial to completion", full))
    same = [t.params for t in pruned.trials] == [t.params for t in full.trials]
    ratio = pruned.wall_s / full.wall_s
    gap = (full.best - pruned.best) * 100
    summary = Table(title="Sweep: pruning against running every trial to completion")
    for column in ("sweep", "wall s", "epochs trained", "pruned trials", "best val acc"):
        summary.add_column(column, justify="right")
    summary.add_row(
        f"{pruner} pruning",
        f"{pruned.wall_s:.1f}",
        str(pruned.epochs_trained),
        str(sum(t.state == "PRUNED" for t in pruned.trials)),
        f"{pruned.best:.2%}",
    )
    summary.add_row("to completion", f"{full.wall_s:.1f}", str(full.epochs_trained), "0", f"{full.best:.2%}")
    console.print(summary)
    console.print(f"same configurations in both sweeps: {same}")
    console.print(
        f"wall time ratio pruned/full: {ratio:.2f} (target <= 0.60: {'met' if ratio <= 0.60 else 'NOT met'})"
    )
    console.print(
        f"best val accuracy gap: {gap:+.2f} points (target within 0.5: "
        f"{'met' if abs(gap) <= 0.5 else 'NOT met'})"
    )


def ddp_graph(epochs: int, workers: int) -> dict[str, Any]:
    graph: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    train = next(node for node in graph["nodes"] if node["type"] == "train.Classifier")
    train["params"].update(
        epochs=epochs,
        seed=0,
        precision="fp32",
        memory_format="contiguous",
        workers=workers,
        cpus_per_worker=1.0,
    )
    return graph


def ddp_section(ctx: DataContext, epochs: int, workers: int, console: Console) -> None:
    rows: list[tuple[str, float, float, float]] = []
    threads = torch.get_num_threads()
    torch.set_num_threads(workers)  # the single process gets the cores the workers get
    with tempfile.TemporaryDirectory() as tmp:
        for label, count in (("1 process", 1), (f"{workers} DDP workers", workers)):
            start = time.perf_counter()
            result = run_graph(ddp_graph(epochs, count), ctx, Path(tmp) / label, ListReporter())
            wall = time.perf_counter() - start
            throughput = statistics.fmean(h["samples_per_s"] for h in result.history)
            accuracy = (result.test or {}).get("test_accuracy", float("nan"))
            rows.append((label, accuracy, throughput, wall))
    torch.set_num_threads(threads)
    table = Table(title=f"DDP on CPU: sketcher CNN, mnist-5k, {epochs} epochs, seed 0, fp32")
    for column in ("run", "test accuracy", "samples/s (epochs)", "wall s (start-up included)"):
        table.add_column(column, justify="right")
    for label, accuracy, throughput, wall in rows:
        table.add_row(label, f"{accuracy:.2%}", f"{throughput:.0f}", f"{wall:.1f}")
    console.print(table)
    gap = (rows[1][1] - rows[0][1]) * 100
    console.print(
        f"test accuracy gap DDP - single: {gap:+.2f} points (target within 1: "
        f"{'met' if abs(gap) <= 1.0 else 'NOT met'}); throughput ratio DDP/single: "
        f"{rows[1][2] / rows[0][2]:.2f} on {workers} CPU(s) each way"
    )


LATENCY_GRAPH = EXAMPLE.with_name("logistic_regression_iris.json")
LATENCY_TARGET_S = 1.5


def _http(url: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "X-Requested-With": "bench"}
    request = urllib.request.Request(
        url, data=data, headers=headers, method="GET" if body is None else "POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def first_metric_latencies(url: str, tasks: int) -> list[float]:
    """Seconds from each task's POST to its first metric, tasks one after another."""
    graph = json.loads(LATENCY_GRAPH.read_text())
    train = next(node for node in graph["nodes"] if node["id"] == "train")
    train["params"].update({"epochs": 3, "device": "cpu"})
    seconds: list[float] = []
    for _ in range(tasks):
        started = time.perf_counter()
        task_id = _http(f"{url}/api/tasks", {"graph": graph})["id"]
        while not _http(f"{url}/api/tasks/{task_id}/metrics")["data"]:
            time.sleep(0.02)
        seconds.append(time.perf_counter() - started)
        while _http(f"{url}/api/tasks/{task_id}")["status"] not in ("SUCCEEDED", "FAILED", "STOPPED"):
            time.sleep(0.1)
        time.sleep(3.0)  # a user's next click: time for the new warm worker to import torch
    return seconds


def latency_section(tasks: int, console: Console) -> None:
    table = Table(title=f"Submit -> first metric, {tasks} small tasks one after another (iris, 3 epochs)")
    for column in ("warm workers", "first task (cold cluster)", "p50, later tasks", "max, later tasks"):
        table.add_column(column, justify="right")
    medians: dict[int, float] = {}
    for warm in (1, 0):
        with tempfile.TemporaryDirectory() as data_dir:
            port = free_port()
            dragdl = str(Path(sys.executable).with_name("dragdl"))
            command = ["env", f"DRAGDL_WARM_WORKERS={warm}", dragdl, "serve", "--no-auth"]
            command += ["--port", str(port), "--data-dir", data_dir]
            log = Path(data_dir) / "serve.log"
            with running_server(command, f"http://127.0.0.1:{port}", log, 120, 0.2, 60) as url:
                seconds = first_metric_latencies(url, tasks)
        later = seconds[1:]
        medians[warm] = statistics.median(later)
        table.add_row(str(warm), f"{seconds[0]:.2f} s", f"{medians[warm]:.2f} s", f"{max(later):.2f} s")
        console.print(f"  warm workers {warm}: " + ", ".join(f"{value:.2f}" for value in seconds))
    console.print(table)
    verdict = "[green]PASS[/]" if medians[1] < LATENCY_TARGET_S else "[red]FAIL[/]"
    console.print(
        f"p50 with warm workers {medians[1]:.2f} s (target < {LATENCY_TARGET_S} s) {verdict}; "
        f"without {medians[0]:.2f} s ({medians[0] / medians[1]:.1f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=["sweep", "ddp", "latency", "all"], default="all")
    parser.add_argument("--workers", type=int, default=2, help="DDP workers (1 CPU each)")
    parser.add_argument("--ddp-epochs", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=8, help="tasks per latency run")
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--pruner", choices=["median", "halving"], default="median")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="PyTorch threads for both sweeps (1: steady on a shared machine, where busy-waiting "
        "thread teams slow down many times over as soon as another process wants the cores)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    console = Console()
    console.print(f"PyTorch threads: {torch.get_num_threads()}")
    if args.part in ("sweep", "all"):
        with tempfile.TemporaryDirectory() as data_dir:
            ctx = DataContext(data_dir=Path(data_dir), allow_download=False)
            sweep_section(ctx, args.trials, args.epochs, args.pruner, console)
    if args.part in ("ddp", "all"):
        with tempfile.TemporaryDirectory() as data_dir:
            ctx = DataContext(data_dir=Path(data_dir), allow_download=False)
            ddp_section(ctx, args.ddp_epochs, args.workers, console)
    if args.part in ("latency", "all"):
        latency_section(args.tasks, console)


if __name__ == "__main__":
    main()

"""What `dragdl run` reports: rich progress bars, the run's files and the final summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from dragdl.engine.train.events import (
    ErrorEvent,
    Event,
    LogEvent,
    MetricEvent,
    ProgressEvent,
    StartEvent,
    StatusEvent,
)
from dragdl.engine.train.reporter import JsonlReporter, summarize_epoch, workers_line


class RichReporter:
    """Shows an epoch bar and a step bar, and one line of metrics per epoch.

    Metrics are worded by the engine's `summarize_epoch`, so the terminal and the run's log.txt
    say the same thing.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.epoch_task: TaskID | None = None
        self.step_task: TaskID | None = None
        self.steps_per_epoch = 0
        self.epochs = 0

    def emit(self, event: Event) -> None:
        if isinstance(event, StartEvent):
            self._start(event)
        elif isinstance(event, ProgressEvent) and self.step_task is not None:
            self.progress.update(self.step_task, completed=event.step, description=f"epoch {event.epoch}")
        elif isinstance(event, MetricEvent):
            self._metric(event)
        elif isinstance(event, LogEvent) and event.level in ("warning", "error"):
            self.console.print(f"[yellow]{event.level}:[/] {event.message}")
        elif (
            isinstance(event, LogEvent)
            and event.level == "info"
            and not event.message.startswith("fast path:")
        ):
            # What the run does besides its steps (starting workers, resuming, early stopping); the
            # fast path has its own line under the start line.
            self.console.print(f"[dim]{event.message}[/]", highlight=False)
        elif isinstance(event, ErrorEvent):
            where = f" at node {event.node_id}" if event.node_id else ""
            self.console.print(f"[red]error{where}:[/] {event.message}")
        elif isinstance(event, StatusEvent) and event.status != "running":
            self.close()

    def _start(self, event: StartEvent) -> None:
        self.console.print(
            f"training on [bold]{event.device}[/]: {event.train_samples} train / {event.val_samples} val / "
            f"{event.test_samples} test samples, {event.trainable_parameters:,} trainable parameters"
            + (f", resuming in epoch {event.resumed_from_epoch}" if event.resumed_from_epoch else "")
        )
        if event.fast_path:
            self.console.print(fast_path_line(event.fast_path), highlight=False)
        if event.workers:
            self.console.print(workers_line(event.workers), highlight=False)
        self.steps_per_epoch = event.steps_per_epoch
        self.epochs = event.epochs
        self.progress.start()
        self.epoch_task = self.progress.add_task(
            "epochs", total=event.epochs, completed=max(0, (event.resumed_from_epoch or 1) - 1), info=""
        )
        self.step_task = self.progress.add_task("epoch", total=event.steps_per_epoch, info="")

    def _metric(self, event: MetricEvent) -> None:
        values = event.values
        if event.scope == "step" and self.step_task is not None:
            self.progress.update(self.step_task, info=summarize_epoch(values))
        elif event.scope == "epoch" and self.epoch_task is not None:
            self.progress.update(self.epoch_task, completed=event.epoch, info="")
            of = f"/{self.epochs}" if self.epochs else ""
            self.progress.console.print(f"[bold]epoch {event.epoch}{of}[/]  {summarize_epoch(values)}")

    def close(self) -> None:
        self.progress.stop()

    def print_summary(
        self, status: str, report: dict[str, Any], out: Path, command_s: float | None = None
    ) -> None:
        test = report.get("test") or {}
        table = Table(title="Result", show_header=False, title_style="bold green")
        table.add_column("metric", style="cyan")
        table.add_column("value", justify="right")
        table.add_row("status", status)
        for key in ("test_accuracy", "test_top5_accuracy", "test_mae", "test_rmse", "test_r2", "test_loss"):
            if key in test:
                table.add_row(key.replace("_", " "), _fmt(key, test[key]))
        timings = report.get("timings") or {}
        for key, value in timings.items():
            if isinstance(value, int | float) and key.endswith("_s") and not key.endswith("per_s"):
                name = "training wall" if key == "wall_s" else key[:-2].replace("_", " ")
                table.add_row(f"{name} time", f"{value:.1f} s")
        if command_s is not None:  # start-up and the data included (a distributed run's workers too)
            table.add_row("command time", f"{command_s:.1f} s")
        if isinstance(timings.get("mean_samples_per_s"), int | float):
            unit = "images" if len(report.get("input_shape") or ()) == 3 else "samples"
            table.add_row("training speed", f"{timings['mean_samples_per_s']:.0f} {unit}/s")
        table.add_row("epochs", str(report.get("epochs_completed", len(report.get("history", [])))))
        if report.get("stopped_early"):
            table.add_row("early stopping", f"best epoch {report.get('best_epoch')}")
        table.add_row("output", str(out))
        self.console.print(table)
        per_class = report.get("per_class")
        if per_class:
            classes = Table(title="Per class (test set)")
            for column in ("class", "precision", "recall", "f1", "support"):
                classes.add_column(column, justify="right" if column != "class" else "left")
            for row in per_class:
                classes.add_row(
                    str(row["class"]),
                    f"{row['precision']:.3f}",
                    f"{row['recall']:.3f}",
                    f"{row['f1']:.3f}",
                    str(row["support"]),
                )
            self.console.print(classes)


class RunFiles:
    """The run folder's events.jsonl and log.txt (`JsonlReporter`), opened at the first event.

    Opening late keeps a graph that fails validation from leaving a folder behind: `run_graph`
    raises before any event. The files are appended to, so `--resume` continues them.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.files: JsonlReporter | None = None

    @property
    def started(self) -> bool:
        return self.files is not None

    @property
    def error_logged(self) -> bool:
        return self.files is not None and self.files.error_logged

    def emit(self, event: Event) -> None:
        if self.files is None:
            self.files = JsonlReporter(self.out)
        self.files.emit(event)

    def close(self) -> None:
        if self.files is not None:
            self.files.close()


def _fmt(key: str, value: float) -> str:
    return f"{value * 100:.2f}%" if "accuracy" in key else f"{value:.4f}"


def fast_path_line(fast_path: dict[str, Any]) -> str:
    """What the run trains in and why, as the first lines of a run show it."""
    layout = str(fast_path.get("memory_format", "")).replace("_", " ")
    line = f"trains in [bold]{fast_path.get('precision')}, {layout}[/] ({fast_path.get('reason', '')})"
    probe_s = fast_path.get("probe_s") or 0.0
    if fast_path.get("measurements"):
        line += f"; probe {probe_s:.2f} s"
    return line

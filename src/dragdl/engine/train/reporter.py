"""Where training events go: a list (tests), a run's files (events.jsonl and log.txt), or several at once.

log.txt is the run's training log, worded from the events in one place (`TrainingLog`), so every
run that keeps its files reads the same: a header (device, parameters, split, batch size, epochs),
one line per epoch, checkpoints, the test result, warnings and errors.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Protocol

from dragdl.engine.train.events import (
    ArtifactEvent,
    ErrorEvent,
    Event,
    LogEvent,
    LogLevel,
    MetricEvent,
    ProgressEvent,
    StartEvent,
    StatusEvent,
    event_from_json,
)


class Reporter(Protocol):
    def emit(self, event: Event) -> None: ...


class ListReporter:
    """Keeps every event in memory."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def of_type(self, cls: type[Event]) -> list[Event]:
        return [e for e in self.events if isinstance(e, cls)]


# -- the training log --------------------------------------------------------------------------------


def summarize_epoch(values: dict[str, float]) -> str:
    """One epoch's metrics as a script prints them:
    `train loss 0.2134 acc 93.41%  val loss 0.1902 acc 94.10%  1840 samples/s  12.3 s`."""
    parts = [
        f"{name} {scores}"
        for name, scores in (("train", _scores(values, "")), ("val", _scores(values, "val_")))
        if scores
    ]
    if "samples_per_s" in values:
        parts.append(f"{values['samples_per_s']:.0f} samples/s")
    if "epoch_time_s" in values:
        parts.append(f"{values['epoch_time_s']:.1f} s")
    return "  ".join(parts)


def summarize_test(values: dict[str, float]) -> str:
    """The test result: `test loss 0.1534 acc 95.28% top-5 99.72%`."""
    return f"test {_scores(values, 'test_', top5=True)}"


def _scores(values: dict[str, float], prefix: str, top5: bool = False) -> str:
    parts = []
    if f"{prefix}loss" in values:
        parts.append(f"loss {values[f'{prefix}loss']:.4f}")
    if f"{prefix}accuracy" in values:
        parts.append(f"acc {values[f'{prefix}accuracy']:.2%}")
    if top5 and f"{prefix}top5_accuracy" in values:
        parts.append(f"top-5 {values[f'{prefix}top5_accuracy']:.2%}")
    for name, label in (("mae", "MAE"), ("rmse", "RMSE"), ("r2", "R²")):  # a regressor's figures
        if f"{prefix}{name}" in values:
            parts.append(f"{label} {values[f'{prefix}{name}']:.4g}")
    return " ".join(parts)


class TrainingLog:
    """Words events as the lines of a run's log (level, text); events that the log leaves out give none.

    It keeps what later lines need: the number of epochs ("epoch 3/20") and, in a resumed run, the
    epoch it continues in. A resumed trainer first replays the epochs of its checkpoint, which the
    log of the earlier attempt already has, so those are left out.
    """

    def __init__(self) -> None:
        self.epochs = 0
        self.replayed_below = 0
        self.error_logged = False
        """Whether an ErrorEvent was logged: the caller that catches the error need not log it again."""

    def lines(self, event: Event) -> list[tuple[LogLevel, str]]:
        if isinstance(event, StartEvent):
            return self._start(event)
        if isinstance(event, MetricEvent):
            if event.scope == "epoch" and event.epoch >= self.replayed_below:
                of = f"/{self.epochs}" if self.epochs else ""
                return [("info", f"epoch {event.epoch}{of}  {summarize_epoch(event.values)}")]
            if event.scope == "test":
                return [("info", summarize_test(event.values))]
            return []
        if isinstance(event, LogEvent):
            return [(event.level, event.message)]
        if isinstance(event, ArtifactEvent):
            return [("info", f"{event.kind} saved: {Path(event.path).name}")]
        if isinstance(event, ErrorEvent):
            self.error_logged = True
            message = event.message
            if event.node_id and not message.startswith(f"node {event.node_id}"):
                message = f"node {event.node_id}: {message}"
            return [("error", f"training failed ({event.code}): {message}")]
        if isinstance(event, StatusEvent) and event.status in ("succeeded", "stopped"):
            return [("info", event.message or f"training {event.status}")]
        return []  # progress and step metrics (too many lines), the running and failed statuses

    def _start(self, event: StartEvent) -> list[tuple[LogLevel, str]]:
        self.epochs = event.epochs
        self.replayed_below = event.resumed_from_epoch or 0
        batches = f", batch size {event.batch_size}" if event.batch_size else ""
        epochs = f"{event.epochs} epoch{'' if event.epochs == 1 else 's'}"
        lines: list[tuple[LogLevel, str]] = [
            (
                "info",
                f"training on {event.device} for {epochs}{batches} ({event.steps_per_epoch} steps per epoch)",
            ),
            (
                "info",
                f"data: {event.train_samples:,} train / {event.val_samples:,} val / "
                f"{event.test_samples:,} test samples",
            ),
            (
                "info",
                f"model: {event.total_parameters:,} parameters, {event.trainable_parameters:,} trainable",
            ),
        ]
        if event.workers:
            lines.append(("info", workers_line(event.workers)))
        if event.resumed_from_epoch is not None:
            step = event.resumed_from_step or 0
            where = f"after step {step}/{event.steps_per_epoch}" if step else "from its start"
            lines.append(("info", f"resuming epoch {event.resumed_from_epoch} {where}"))
        return lines


def workers_line(workers: list[dict[str, Any]]) -> str:
    """A distributed run's workers (the start event's `workers`) in one line: how many, on how many
    nodes, and each one's rank, node, address, process and device."""
    nodes = len({w["node_id"] for w in workers})
    where = ", ".join(
        f"rank {w['rank']} on node {str(w['node_id'])[:8]} ({w['address']}, pid {w['pid']}, {w['device']})"
        for w in workers
    )
    return f"{len(workers)} workers on {nodes} node(s): {where}"


class LogFileReporter:
    """Appends the `TrainingLog` lines to a text file, each with its time and level.

    A message of several lines (an error with a traceback) keeps them, indented under the first.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.log = TrainingLog()
        self._file: IO[str] = path.open("a", encoding="utf-8")

    def emit(self, event: Event) -> None:
        lines = self.log.lines(event)
        if not lines:
            return
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        for level, text in lines:
            prefix = f"{stamp} {level.upper():7} "
            self._file.write(prefix + text.rstrip("\n").replace("\n", "\n" + " " * len(prefix)) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class JsonlReporter:
    """Appends every event to `out_dir/events.jsonl` and the training log to `out_dir/log.txt`.

    Appending (not truncating) lets a resumed run continue the same files. Each line is flushed
    so that a reader tailing the file sees events as they happen.
    """

    def __init__(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.events_path = out_dir / "events.jsonl"
        self.log_path = out_dir / "log.txt"
        self._events: IO[str] = self.events_path.open("a", encoding="utf-8")
        self._log = LogFileReporter(self.log_path)

    @property
    def error_logged(self) -> bool:
        """Whether log.txt already tells of an error (see `TrainingLog.error_logged`)."""
        return self._log.log.error_logged

    def emit(self, event: Event) -> None:
        self._log.emit(event)
        if isinstance(event, ProgressEvent) and event.step < event.steps_per_epoch:
            # The record keeps each epoch's last step only: a line and a flush per step cost a
            # small network a tenth of its training time, and the step metrics already say how far
            # an epoch got.
            return
        self._events.write(json.dumps({**event.to_json(), "time": time.time()}) + "\n")
        self._events.flush()

    def close(self) -> None:
        self._events.close()
        self._log.close()

    def __enter__(self) -> JsonlReporter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class MultiReporter:
    """Forwards every event to each reporter in turn."""

    def __init__(self, *reporters: Reporter) -> None:
        self.reporters = reporters

    def emit(self, event: Event) -> None:
        for reporter in self.reporters:
            reporter.emit(event)


class NullReporter:
    """Drops everything (benchmarks, scripted runs that only want the result)."""

    def emit(self, event: Event) -> None:
        pass


def read_events(path: Path) -> list[Event]:
    """Parse an events.jsonl back into typed events."""
    with path.open(encoding="utf-8") as f:
        return [event_from_json(json.loads(line)) for line in f if line.strip()]

"""Training callbacks: how anything watches a run, or writes beside it, without a line in the loop.

The trainer calls a list of `Callback`s at fixed points (Keras's and Lightning's hooks): the run
begins, is set up (`on_train_start`), ends a step, logs, ends an epoch, writes a checkpoint, has
tested the model, writes an artifact, fails, ends. Each hook receives the run's `RunContext`: its
state (epoch, step, history), the network, the run folder and `write_artifact`, through which the
trainer itself writes the model and the report. The events the monitor, the runner, the CLI and
the run folder read come from one callback, `ReporterCallback`; a histogram or embedding writer is
a new callback, passed to `train(...)` or `run_graph(...)`.

In a distributed run every worker calls its callbacks; `RunContext.main` is the worker that tests
the model and writes the files (the others do not get `on_checkpoint`, `on_test_end` or
`on_artifact`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from torch import nn

from dragdl.engine.tasks.base import TaskKind
from dragdl.engine.tasks.settings import TrainSettings
from dragdl.engine.train.events import (
    ArtifactEvent,
    ErrorEvent,
    LogEvent,
    MetricEvent,
    ProgressEvent,
    StartEvent,
    Status,
    StatusEvent,
)
from dragdl.engine.train.reporter import Reporter
from dragdl.engine.train.state import TrainState


class RunContext:
    """What a callback sees of the run. `state` is the trainer's own (read it, do not change it)."""

    def __init__(
        self,
        out_dir: Path,
        model: nn.Module,
        task: TaskKind,
        config: TrainSettings,
        main: bool,
        callbacks: CallbackList,
    ) -> None:
        self.out_dir = out_dir
        self.model = model
        """The whole network (what model.safetensors holds), also when only its head trains."""
        self.task, self.config, self.main = task, config, main
        self.state = TrainState()
        self.start: StartEvent | None = None
        """What the run is (sizes, device, fast path, workers), from `on_train_start` on."""
        self._callbacks = callbacks

    @property
    def steps_per_epoch(self) -> int:
        return self.start.steps_per_epoch if self.start is not None else 0

    def message(self, level: Literal["info", "warning"], message: str) -> None:
        """Write a line to the training log: every callback's `on_message` gets it."""
        self._callbacks.on_message(self, level, message)

    def write_artifact(self, kind: str, name: str, write: Callable[[Path], None]) -> Path:
        """Write the file `name` of the run folder through `write(path)` (given a temporary path,
        so a reader never sees half a file) and tell every callback (`on_artifact`)."""
        path = self.out_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp")
        write(tmp)
        os.replace(tmp, path)
        self._callbacks.on_artifact(self, kind, path)
        return path


class Callback:
    """Hooks a run calls; each does nothing until a subclass overrides it."""

    def on_begin(self, ctx: RunContext) -> None:
        """Training begins: before the fast path is chosen and a checkpoint is read."""

    def on_train_start(self, ctx: RunContext) -> None:
        """The run is set up (`ctx.start`); a resumed run's `ctx.state` holds its earlier epochs."""

    def on_message(self, ctx: RunContext, level: Literal["info", "warning"], message: str) -> None:
        """A line for the training log (the fast path chosen, a resume, early stopping)."""

    def on_step_end(self, ctx: RunContext) -> None:
        """After every optimizer step (`ctx.state.step`): keep it cheap, it runs per batch."""

    def on_log(self, ctx: RunContext, values: dict[str, float]) -> None:
        """The training metrics of the steps since the last log point (about ten per epoch)."""

    def on_epoch_end(self, ctx: RunContext, values: dict[str, float]) -> None:
        """An epoch's metrics (train and val, learning rate, timings); `ctx.state.epoch` is its
        0-based index and `ctx.state.history` ends with `values`."""

    def on_checkpoint(self, ctx: RunContext, path: Path) -> None:
        """A checkpoint was written to `path` (after `on_epoch_end`, or mid-epoch)."""

    def on_test_end(self, ctx: RunContext, metrics: dict[str, float], details: dict[str, Any]) -> None:
        """The best weights were tested: `test_` metrics and the task kind's details (confusion
        matrix, residuals) that go into report.json."""

    def on_artifact(self, ctx: RunContext, kind: str, path: Path) -> None:
        """A file was written through `ctx.write_artifact` (the model, the report, a callback's)."""

    def on_error(self, ctx: RunContext, code: str, message: str, node_id: str | None) -> None:
        """The run failed; `on_train_end` with "failed" follows."""

    def on_train_end(self, ctx: RunContext, status: Status, message: str) -> None:
        """The run ended: succeeded, stopped (a checkpoint to resume from) or failed."""


def _overrides(callback: Callback, hook: str) -> bool:
    return getattr(type(callback), hook) is not getattr(Callback, hook)


class CallbackList(Callback):
    """Calls each callback in turn. The per-step hook goes only to the callbacks that define it."""

    def __init__(self, callbacks: Sequence[Callback]) -> None:
        self.callbacks = list(callbacks)
        self._stepping = [c for c in self.callbacks if _overrides(c, "on_step_end")]

    def on_begin(self, ctx: RunContext) -> None:
        for c in self.callbacks:
            c.on_begin(ctx)

    def on_train_start(self, ctx: RunContext) -> None:
        for c in self.callbacks:
            c.on_train_start(ctx)

    def on_message(self, ctx: RunContext, level: Literal["info", "warning"], message: str) -> None:
        for c in self.callbacks:
            c.on_message(ctx, level, message)

    def on_step_end(self, ctx: RunContext) -> None:
        for c in self._stepping:
            c.on_step_end(ctx)

    def on_log(self, ctx: RunContext, values: dict[str, float]) -> None:
        for c in self.callbacks:
            c.on_log(ctx, values)

    def on_epoch_end(self, ctx: RunContext, values: dict[str, float]) -> None:
        for c in self.callbacks:
            c.on_epoch_end(ctx, values)

    def on_checkpoint(self, ctx: RunContext, path: Path) -> None:
        for c in self.callbacks:
            c.on_checkpoint(ctx, path)

    def on_test_end(self, ctx: RunContext, metrics: dict[str, float], details: dict[str, Any]) -> None:
        for c in self.callbacks:
            c.on_test_end(ctx, metrics, details)

    def on_artifact(self, ctx: RunContext, kind: str, path: Path) -> None:
        for c in self.callbacks:
            c.on_artifact(ctx, kind, path)

    def on_error(self, ctx: RunContext, code: str, message: str, node_id: str | None) -> None:
        for c in self.callbacks:
            c.on_error(ctx, code, message, node_id)

    def on_train_end(self, ctx: RunContext, status: Status, message: str) -> None:
        for c in self.callbacks:
            c.on_train_end(ctx, status, message)


class ReporterCallback(Callback):
    """The run's events, for a `Reporter` (the run folder, the CLI, the database): what the monitor,
    the runner and the training log read."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter

    def on_begin(self, ctx: RunContext) -> None:
        self.reporter.emit(StatusEvent("running"))

    def on_train_start(self, ctx: RunContext) -> None:
        assert ctx.start is not None
        self.reporter.emit(ctx.start)
        # A monitor connecting to a resumed run sees the whole curve, not only the new epochs.
        per_epoch = ctx.steps_per_epoch
        for i, values in enumerate(ctx.state.history):
            self.reporter.emit(MetricEvent("epoch", i + 1, (i + 1) * per_epoch, values))

    def on_message(self, ctx: RunContext, level: Literal["info", "warning"], message: str) -> None:
        self.reporter.emit(LogEvent(level, message))

    def on_step_end(self, ctx: RunContext) -> None:
        s = ctx.state
        self.reporter.emit(ProgressEvent(s.epoch + 1, s.step, ctx.steps_per_epoch))

    def on_log(self, ctx: RunContext, values: dict[str, float]) -> None:
        s = ctx.state
        self.reporter.emit(MetricEvent("step", s.epoch + 1, s.global_step, values))

    def on_epoch_end(self, ctx: RunContext, values: dict[str, float]) -> None:
        s = ctx.state
        self.reporter.emit(MetricEvent("epoch", s.epoch + 1, s.global_step, values))

    def on_checkpoint(self, ctx: RunContext, path: Path) -> None:
        self.reporter.emit(ArtifactEvent("checkpoint", str(path)))

    def on_test_end(self, ctx: RunContext, metrics: dict[str, float], details: dict[str, Any]) -> None:
        s = ctx.state
        self.reporter.emit(MetricEvent("test", len(s.history), s.global_step, metrics))

    def on_artifact(self, ctx: RunContext, kind: str, path: Path) -> None:
        self.reporter.emit(ArtifactEvent(kind, str(path)))

    def on_error(self, ctx: RunContext, code: str, message: str, node_id: str | None) -> None:
        self.reporter.emit(ErrorEvent(code, message, node_id))

    def on_train_end(self, ctx: RunContext, status: Status, message: str) -> None:
        self.reporter.emit(StatusEvent(status, message))


class NoticeCallback(Callback):
    """Warnings the training log opens with, about what the run was given rather than how it
    trains (the rows a dataset left out); written once, by the main worker, not again on resume."""

    def __init__(self, notices: Sequence[str]) -> None:
        self.notices = tuple(notices)

    def on_train_start(self, ctx: RunContext) -> None:
        resumed = ctx.start is not None and ctx.start.resumed_from_epoch is not None
        if ctx.main and not resumed:
            for notice in self.notices:
                ctx.message("warning", notice)


__all__ = ["Callback", "CallbackList", "NoticeCallback", "ReporterCallback", "RunContext"]

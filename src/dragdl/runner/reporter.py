"""Training events into the database: `task_events` rows plus the task's progress, epoch and best metrics.

What is written:

- start, epoch and test metrics, logs and artifacts: always, one row each.
- progress and step metrics: at most one of each per `min_interval_s` (default 0.5 s), so a fast run
  does not write hundreds of rows per second; the curve keeps every epoch point.
- the trainer's status and error events: not written here. The task's status changes and its error
  are written by the worker and the scheduler together with the status column (`transitions.py`),
  so the event history has exactly one status event per transition.

Every write is guarded by the attempt's `worker_ref` (see `transitions.heartbeat`): once another
attempt owns the task, `lost` turns True and nothing more is written.

A database outage does not stop training: writes that fail on a transient error are kept, in order,
and written once the database answers again (tried again with capped exponential backoff as events
arrive); the worker calls `flush` with a deadline before it records the task's end, so no metric is
lost and none is written twice.

Resumed runs (no duplicates in the history). A resumed trainer first replays the epoch metrics of its
checkpoint's history, then continues. The database usually holds those epochs from the earlier
attempt, so the replay writes only the epochs it lacks: an attempt killed while its writes waited
for the database (a long SQLite lock) took them with it, and dropping the replay lost them for good
(epochs 115-361 once vanished from a task's history). What the earlier attempt recorded *after* its
checkpoint (the epoch it was in when it died, its step metrics past the checkpoint, a test result)
will be emitted again by the resumed run, so it is deleted when the resumed run starts. Afterwards every epoch
appears exactly once, and nothing recorded up to the checkpoint is lost. A live monitor learns of
the rewind from the `start` event (`resumed_from_epoch`, `resumed_from_step`) and drops the points
after it from its curves.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import TaskEvent
from dragdl.engine.train.events import (
    ArtifactEvent,
    ErrorEvent,
    Event,
    LogEvent,
    MetricEvent,
    ProgressEvent,
    StartEvent,
    StatusEvent,
)
from dragdl.engine.train.reporter import Reporter
from dragdl.paths import hide_server_paths
from dragdl.runner.failures import backoff_delays, is_transient_db_error, retry_db
from dragdl.runner.transitions import add_event, heartbeat

if TYPE_CHECKING:
    from dragdl.engine.tasks.base import TaskKind

log = logging.getLogger(__name__)

Write = Callable[[Session], bool]
"""One transaction of the reporter; False when the attempt no longer owns the task."""

WRITE_KEY = "write_key"
"""Each event row's key, unique per attempt and event: a write tried again looks for it first."""
RECENT_EVENTS = 16
"""Rows of the same kind looked through for that key (writes go in order, so it is among the newest)."""
NOT_SCORES = frozenset({"lr", "samples_per_s", "epoch_time_s", "peak_memory_mb"})
"""Epoch values that are settings or machine measurements, not model quality: no "best" for them."""


def merge_best(
    best: dict[str, Any], values: dict[str, float], task: TaskKind | None = None
) -> dict[str, Any]:
    """The best value of each score so far: the direction the task kind gives its metrics (lowest
    MAE and RMSE, highest R² and accuracy), lowest for losses, highest for everything else."""
    merged = dict(best)
    for key, value in values.items():
        if key in NOT_SCORES or not math.isfinite(value):
            continue
        old = merged.get(key)
        lower = _lower_is_better(key, task)
        if old is None or (value < old if lower else value > old):
            merged[key] = value
    return merged


def _lower_is_better(key: str, task: TaskKind | None) -> bool:
    base = key.removeprefix("val_").removeprefix("test_")
    if task is not None and base in task.metrics:
        return base not in task.higher_is_better
    return "loss" in key


def is_after(data: dict[str, Any], epoch: int, step: int) -> bool:
    """Whether a stored metric lies after a checkpoint taken in `epoch` (1-based) after global `step`."""
    scope = data.get("scope")
    if scope == "test":
        return True
    if scope == "step":
        return int(data.get("step", 0)) > step
    return int(data.get("epoch", 0)) >= epoch


class DBReporter:
    """A `Reporter` writing to the database; used inside the worker process, one per attempt."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        task_id: str,
        worker_ref: str,
        data_dir: Path,
        min_interval_s: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        task: TaskKind | None = None,
    ) -> None:
        self.sessions = sessions
        self.task = task
        """The graph's task kind: which way each metric is better in `best_metrics`."""
        self.task_id = task_id
        self.worker_ref = worker_ref
        self.data_dir = data_dir
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.lost = False
        self._last_write: dict[str, float] = {}
        self._replayed_below = 0
        """Epoch metrics below this epoch are the resumed trainer's replay of its history."""
        self._stored_epochs: set[int] = set()
        """The epochs whose metrics the database held when this run started (read by the start write,
        which goes before every replayed epoch's)."""
        self._epochs = 0
        self._steps_per_epoch = 0
        self._best: dict[str, Any] = {}
        self._pending: list[Write] = []
        self._written = 0
        """Events handed to `_write` so far: the sequence number in each one's key."""
        self._retry_at = -math.inf
        self._next_delay = backoff_delays()

    def emit(self, event: Event) -> None:
        if self.lost or isinstance(event, StatusEvent | ErrorEvent):
            return
        if isinstance(event, StartEvent):
            self._start(event)
        elif isinstance(event, ProgressEvent):
            if self._due("progress"):
                self._write(event.to_json(), epoch=event.epoch, progress=self._progress(event))
        elif isinstance(event, MetricEvent):
            self._metric(event)
        elif isinstance(event, ArtifactEvent):
            self._write({**event.to_json(), "path": self._relative(event.path)})
        elif isinstance(event, LogEvent):
            self._write(event.to_json())

    # -- events -----------------------------------------------------------------------------------

    def _start(self, event: StartEvent) -> None:
        self._epochs, self._steps_per_epoch = event.epochs, event.steps_per_epoch
        epoch = event.resumed_from_epoch or 1
        step = (epoch - 1) * event.steps_per_epoch + (event.resumed_from_step or 0)
        self._replayed_below = epoch if event.resumed_from_epoch is not None else 0
        key = self._next_key()
        tries = 0

        def write(db: Session) -> bool:
            nonlocal tries
            tries += 1
            if tries > 1 and self._stored(db, event.type, key):
                # Stored by the try whose answer was lost (stale rows went with it in that commit).
                owned = heartbeat(db, self.task_id, self.worker_ref)
                db.commit()
                return owned
            rows = db.execute(
                select(TaskEvent.id, TaskEvent.data).where(
                    TaskEvent.task_id == self.task_id, TaskEvent.kind == "metric"
                )
            ).all()
            stale = [row.id for row in rows if is_after(row.data, epoch, step)]
            if stale:
                db.execute(delete(TaskEvent).where(TaskEvent.id.in_(stale)))
            best: dict[str, Any] = {}
            stored: set[int] = set()
            for row in rows:
                if row.id not in stale and row.data.get("scope") == "epoch":
                    best = merge_best(best, row.data.get("values", {}), self.task)
                    stored.add(int(row.data.get("epoch", 0)))
            self._stored_epochs = stored
            # Epoch metrics of this run that arrived while this write waited are in `_best` already.
            self._best = merge_best(best, self._best, self.task)
            values = {"epoch": epoch, "progress": self._fraction(step), "best_metrics": self._best}
            if not heartbeat(db, self.task_id, self.worker_ref, **values):
                return False
            add_event(db, self.task_id, event.type, {**event.to_json(), WRITE_KEY: key})
            db.commit()
            return True

        self._submit(write)

    def _metric(self, event: MetricEvent) -> None:
        if event.scope == "step":
            if self._due("step"):
                self._write(event.to_json())
            return
        if event.scope == "epoch":
            if event.epoch < self._replayed_below:
                # Written only where the database lacks it (see the module docstring).
                self._best = merge_best(self._best, event.values, self.task)
                epoch = event.epoch
                self._write(event.to_json(), only_if=lambda: epoch not in self._stored_epochs)
                return
            self._best = merge_best(self._best, event.values, self.task)
            progress = self._fraction(event.epoch * self._steps_per_epoch)
            self._write(event.to_json(), epoch=event.epoch, progress=progress, best_metrics=self._best)
            return
        self._best = {**self._best, **event.values}
        self._write(event.to_json(), best_metrics=self._best)

    # -- helpers ----------------------------------------------------------------------------------

    def _due(self, kind: str) -> bool:
        now = self.clock()
        if now - self._last_write.get(kind, -math.inf) < self.min_interval_s:
            return False
        self._last_write[kind] = now
        return True

    def _fraction(self, steps_done: int) -> float:
        total = self._epochs * self._steps_per_epoch
        return min(1.0, steps_done / total) if total else 0.0

    def _progress(self, event: ProgressEvent) -> float:
        return self._fraction((event.epoch - 1) * event.steps_per_epoch + event.step)

    def _relative(self, path: str) -> str:
        # Clients see paths inside the data dir, not the server's file system layout.
        try:
            return Path(path).resolve().relative_to(self.data_dir.resolve()).as_posix()
        except ValueError:
            return Path(path).name

    def _write(
        self, data: dict[str, Any], only_if: Callable[[], bool] | None = None, **task_values: Any
    ) -> None:
        # A commit whose answer the connection lost may have been applied all the same: a write
        # tried again first looks for its own row (by a key unique to this attempt and event), so
        # an outage never records an event twice.
        key = self._next_key()
        row = {**data, WRITE_KEY: key}
        tries = 0

        def write(db: Session) -> bool:
            nonlocal tries
            tries += 1
            if only_if is not None and not only_if():
                return True
            if not heartbeat(db, self.task_id, self.worker_ref, **task_values):
                return False
            if tries == 1 or not self._stored(db, str(data["type"]), key):
                add_event(db, self.task_id, str(data["type"]), row)
            db.commit()
            return True

        self._submit(write)

    def _next_key(self) -> str:
        """The `WRITE_KEY` of the next event row: unique per attempt and event."""
        self._written += 1
        return f"{self.worker_ref}:{self._written}"

    def _stored(self, db: Session, kind: str, key: str) -> bool:
        recent = db.scalars(
            select(TaskEvent.data)
            .where(TaskEvent.task_id == self.task_id, TaskEvent.kind == kind)
            .order_by(TaskEvent.id.desc())
            .limit(RECENT_EVENTS)
        )
        return any(data.get(WRITE_KEY) == key for data in recent)

    # -- riding out a database outage ---------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Writes waiting for the database."""
        return len(self._pending)

    def _submit(self, write: Write) -> None:
        self._pending.append(write)
        if self.clock() >= self._retry_at:
            self._drain(deadline_s=0.0)

    def flush(self, deadline_s: float) -> None:
        """Write everything pending, trying through transient errors for up to `deadline_s`; the
        last error is raised when the database is still unavailable then."""
        self._drain(deadline_s)

    def _drain(self, deadline_s: float) -> None:
        while self._pending and not self.lost:
            try:
                owned = retry_db(
                    self.sessions, self._pending[0], "recording training events", deadline_s=deadline_s
                )
            except Exception as exc:
                if deadline_s > 0 or not is_transient_db_error(exc):
                    raise
                delay = self._next_delay()
                self._retry_at = self.clock() + delay
                log.warning(
                    "task %s: the database is unavailable (%s); %d events wait, next try in %.1f s",
                    self.task_id,
                    str(exc).splitlines()[0],
                    len(self._pending),
                    delay,
                )
                return
            self._pending.pop(0)
            self._next_delay, self._retry_at = backoff_delays(), -math.inf
            if not owned:
                self.lost = True
                self._pending.clear()


class PathHidingReporter:
    """Hands events on with server paths taken out of their messages (`hide_server_paths`): the task
    of a user who is not an administrator shows them its log, status and error, not the server's
    file system."""

    def __init__(self, inner: Reporter, data_dir: Path) -> None:
        self.inner = inner
        self.data_dir = data_dir

    def emit(self, event: Event) -> None:
        if isinstance(event, LogEvent | ErrorEvent | StatusEvent):
            event = dataclasses.replace(event, message=hide_server_paths(event.message, self.data_dir))
        self.inner.emit(event)

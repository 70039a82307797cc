"""The database reporter: throttling, task columns, fencing, and a resumed run's history without repeats."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task, TaskEvent, TaskStatus
from dragdl.db.session import make_engine, make_session_factory
from dragdl.engine.train.events import (
    ErrorEvent,
    LogEvent,
    MetricEvent,
    ProgressEvent,
    StartEvent,
    StatusEvent,
)
from dragdl.runner.base import WorkerConfig
from dragdl.runner.reporter import DBReporter, merge_best

from .conftest import MakeTask
from .support import sqlite_write_lock

SPE = 10  # steps per epoch


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def running_task(make_task: MakeTask, make_user: Any, ref: str) -> Task:
    return make_task(make_user("alice"), status=TaskStatus.RUNNING, attempts=1, worker_ref=ref)


def reporter(
    sessions: sessionmaker[Session], config: WorkerConfig, task: Task, ref: str, clock: Clock
) -> DBReporter:
    return DBReporter(sessions, task.id, ref, config.data_dir, clock=clock)


def start(epochs: int = 3, epoch: int | None = None, step: int | None = None) -> StartEvent:
    return StartEvent(epochs, SPE, 100, 10, 10, "cpu", 5, 5, resumed_from_epoch=epoch, resumed_from_step=step)


def epoch_metric(epoch: int, loss: float) -> MetricEvent:
    return MetricEvent("epoch", epoch, epoch * SPE, {"loss": loss, "val_accuracy": 1 - loss, "lr": 0.1})


def events(sessions: sessionmaker[Session], task: Task, kind: str | None = None) -> list[dict[str, Any]]:
    with sessions() as db:
        query = select(TaskEvent).where(TaskEvent.task_id == task.id).order_by(TaskEvent.id)
        if kind is not None:
            query = query.where(TaskEvent.kind == kind)
        return [row.data for row in db.scalars(query)]


def load(sessions: sessionmaker[Session], task: Task) -> Task:
    with sessions() as db:
        row = db.get(Task, task.id)
        assert row is not None
        return row


def test_progress_and_step_metrics_are_throttled_but_epochs_are_not(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = running_task(make_task, make_user, "ref-1")
    clock = Clock()
    rep = reporter(sessions, config, task, "ref-1", clock)
    rep.emit(start())
    for step in range(1, SPE + 1):
        rep.emit(ProgressEvent(1, step, SPE))
        rep.emit(MetricEvent("step", 1, step, {"loss": 1.0}))
    rep.emit(epoch_metric(1, 0.5))
    clock.now += 0.6
    rep.emit(ProgressEvent(2, 3, SPE))
    rep.emit(StatusEvent("running"))  # status and errors are the worker's to write, with the status column
    rep.emit(ErrorEvent("x", "y"))
    rep.emit(LogEvent("info", "hello"))
    kinds = [e["type"] for e in events(sessions, task)]
    assert kinds == ["start", "progress", "metric", "metric", "progress", "log"]
    row = load(sessions, task)
    assert row.epoch == 2 and row.progress == 13 / 30
    assert row.best_metrics == {"loss": 0.5, "val_accuracy": 0.5}
    assert row.heartbeat_at is not None


def test_a_resumed_run_keeps_each_epoch_once(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = running_task(make_task, make_user, "ref-1")
    clock = Clock()
    first = reporter(sessions, config, task, "ref-1", clock)
    first.emit(start())
    for epoch, loss in ((1, 0.9), (2, 0.7)):
        clock.now += 1
        first.emit(MetricEvent("step", epoch, epoch * SPE - 5, {"loss": loss}))
        first.emit(epoch_metric(epoch, loss))
    clock.now += 1
    first.emit(
        MetricEvent("step", 3, 2 * SPE + 4, {"loss": 0.1})
    )  # after the last checkpoint (end of epoch 2)
    first.emit(epoch_metric(3, 0.1))  # recorded, but the worker died before checkpointing epoch 3
    kept = [e for e in events(sessions, task, "metric") if e["scope"] == "epoch"][:2]
    # Attempt 2 resumes from the checkpoint at the end of epoch 2, in epoch 3.
    with sessions() as db:
        db.execute(update(Task).where(Task.id == task.id).values(worker_ref="ref-2", attempts=2))
        db.commit()
    second = reporter(sessions, config, task, "ref-2", clock)
    second.emit(start(epoch=3, step=0))
    assert load(sessions, task).best_metrics["loss"] == 0.7  # epoch 3's 0.1 is gone with it
    second.emit(epoch_metric(1, 0.9))  # the trainer replays its history first
    second.emit(epoch_metric(2, 0.7))
    second.emit(epoch_metric(3, 0.2))
    second.emit(MetricEvent("test", 3, 3 * SPE, {"test_accuracy": 0.8}))
    metrics = events(sessions, task, "metric")
    assert [(m["scope"], m["epoch"]) for m in metrics] == [
        ("step", 1),
        ("epoch", 1),
        ("step", 2),
        ("epoch", 2),
        ("epoch", 3),
        ("test", 3),
    ]
    assert [m for m in metrics if m["scope"] == "epoch"][:2] == kept  # nothing before the checkpoint is lost
    assert metrics[4]["values"]["loss"] == 0.2
    row = load(sessions, task)
    assert row.best_metrics == {"loss": 0.2, "val_accuracy": 0.8, "test_accuracy": 0.8}
    assert [e["resumed_from_epoch"] for e in events(sessions, task, "start")] == [None, 3]


def test_a_resume_without_checkpoint_starts_the_history_over(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = running_task(make_task, make_user, "ref-1")
    first = reporter(sessions, config, task, "ref-1", Clock())
    first.emit(start())
    first.emit(MetricEvent("step", 1, 3, {"loss": 1.0}))
    reporter(sessions, config, task, "ref-1", Clock()).emit(start())
    assert events(sessions, task, "metric") == []


def test_an_attempt_that_lost_the_task_writes_nothing_more(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = running_task(make_task, make_user, "ref-1")
    rep = reporter(sessions, config, task, "ref-1", Clock())
    rep.emit(LogEvent("info", "mine"))
    with sessions() as db:
        db.execute(update(Task).where(Task.id == task.id).values(worker_ref="ref-2"))
        db.commit()
    rep.emit(LogEvent("info", "not mine"))
    rep.emit(epoch_metric(1, 0.5))
    assert rep.lost
    assert [e["message"] for e in events(sessions, task)] == ["mine"]


def test_artifact_paths_are_shown_relative_to_the_data_dir(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    from dragdl.engine.train.events import ArtifactEvent

    task = running_task(make_task, make_user, "ref-1")
    path = config.data_dir / "artifacts" / task.id / "checkpoints" / "ckpt-0001-0000010.pt"
    reporter(sessions, config, task, "ref-1", Clock()).emit(ArtifactEvent("checkpoint", str(path)))
    assert events(sessions, task)[0]["path"] == f"artifacts/{task.id}/checkpoints/ckpt-0001-0000010.pt"


def test_best_metrics_take_the_lowest_loss_and_the_highest_score() -> None:
    best = merge_best({}, {"loss": 0.5, "accuracy": 0.7, "lr": 0.1, "epoch_time_s": 3.0})
    best = merge_best(best, {"loss": 0.6, "accuracy": 0.8, "val_loss": float("nan")})
    assert best == {"loss": 0.5, "accuracy": 0.8}


def test_a_locked_database_delays_the_writes_but_loses_none(
    config: WorkerConfig, sessions: sessionmaker[Session], make_task: MakeTask, make_user: Any
) -> None:
    # The worker's own engine gives up on the lock after 0.2 s (the server's default is 30 s).
    engine = make_engine(f"{config.database_url}?timeout=0.2")
    busy = make_session_factory(engine)
    task = running_task(make_task, make_user, "dragdl-t-1")
    clock = Clock()
    db_reporter = DBReporter(busy, task.id, "dragdl-t-1", config.data_dir, clock=clock)
    db_reporter.emit(start())
    db_reporter.emit(epoch_metric(1, 0.9))
    with sqlite_write_lock(Path(config.database_url.removeprefix("sqlite:///"))):
        db_reporter.emit(epoch_metric(2, 0.5))  # fails after the busy timeout: kept, not raised
        clock.now += 60
        db_reporter.emit(LogEvent("info", "still training"))
        assert db_reporter.pending == 2
    db_reporter.emit(epoch_metric(3, 0.7))  # before the backoff is over: waits behind the others
    assert db_reporter.pending == 3
    db_reporter.flush(deadline_s=10)
    engine.dispose()
    assert db_reporter.pending == 0 and not db_reporter.lost
    assert [e["epoch"] for e in events(sessions, task, "metric")] == [1, 2, 3]
    assert [e["message"] for e in events(sessions, task, "log")] == ["still training"]
    row = load(sessions, task)
    assert row.epoch == 3 and row.best_metrics["loss"] == 0.5


def test_best_metrics_follow_the_task_kind() -> None:
    from dragdl.engine.tasks.registry import get_task_kind

    regression = get_task_kind("regression")
    best = merge_best({}, {"val_loss": 9.0, "val_mae": 2.0, "val_rmse": 3.0, "val_r2": 0.1}, regression)
    best = merge_best(best, {"val_loss": 8.0, "val_mae": 2.5, "val_rmse": 2.5, "val_r2": 0.3}, regression)
    best = merge_best(best, {"val_loss": 8.5, "val_mae": 1.5, "val_rmse": 2.8, "val_r2": 0.2}, regression)
    assert best == {"val_loss": 8.0, "val_mae": 1.5, "val_rmse": 2.5, "val_r2": 0.3}
    classification = get_task_kind("classification")
    best = merge_best({}, {"val_loss": 1.0, "val_accuracy": 0.5}, classification)
    best = merge_best(best, {"val_loss": 2.0, "val_accuracy": 0.7}, classification)
    assert best == {"val_loss": 1.0, "val_accuracy": 0.7}


class AnswerLost:
    """Sessions whose commit, once armed, is applied by the database but answered with a dropped
    connection: what a client sees when the network fails between COMMIT and its reply."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        self.armed = False

    def __call__(self) -> Session:
        session = self.sessions()
        commit = session.commit

        def commit_then_drop() -> None:
            commit()
            if self.armed:
                self.armed = False
                raise OperationalError("COMMIT", {}, ConnectionError("server closed the connection"))

        session.commit = commit_then_drop  # type: ignore[method-assign]
        return session


def test_a_write_whose_commit_answer_was_lost_is_not_recorded_twice(
    config: WorkerConfig, sessions: sessionmaker[Session], make_task: MakeTask, make_user: Any
) -> None:
    task = running_task(make_task, make_user, "dragdl-t-1")
    lossy = AnswerLost(sessions)
    db_reporter = DBReporter(lossy, task.id, "dragdl-t-1", config.data_dir, clock=Clock())  # type: ignore[arg-type]
    db_reporter.emit(start())
    db_reporter.emit(epoch_metric(1, 0.9))
    lossy.armed = True
    db_reporter.emit(epoch_metric(2, 0.5))  # stored, but the reporter was told it failed: tried again
    db_reporter.emit(LogEvent("info", "after the drop"))
    db_reporter.flush(deadline_s=10)
    assert db_reporter.pending == 0 and not lossy.armed
    assert [e["epoch"] for e in events(sessions, task, "metric")] == [1, 2]
    assert [e["message"] for e in events(sessions, task, "log")] == ["after the drop"]


def test_a_start_whose_commit_answer_was_lost_is_recorded_once(
    config: WorkerConfig, sessions: sessionmaker[Session], make_task: MakeTask, make_user: Any
) -> None:
    task = running_task(make_task, make_user, "dragdl-t-1")
    lossy = AnswerLost(sessions)
    db_reporter = DBReporter(lossy, task.id, "dragdl-t-1", config.data_dir, clock=Clock())  # type: ignore[arg-type]
    lossy.armed = True
    db_reporter.emit(start())
    db_reporter.emit(epoch_metric(1, 0.9))
    db_reporter.flush(deadline_s=10)
    assert len(events(sessions, task, "start")) == 1
    assert [e["epoch"] for e in events(sessions, task, "metric")] == [1]


@pytest.mark.parametrize("config", ["sqlite", "postgresql"], indirect=True)
def test_a_resumed_run_writes_the_replayed_epochs_a_killed_attempt_never_wrote(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = running_task(make_task, make_user, "ref-1")
    clock = Clock()
    first = reporter(sessions, config, task, "ref-1", clock)
    first.emit(start(epochs=6))
    first.emit(epoch_metric(1, 0.9))
    # Epochs 2 and 3 were trained and checkpointed, but their rows waited for the database in the
    # first attempt's memory when it was killed: they never reached the database.
    with sessions() as db:
        db.execute(update(Task).where(Task.id == task.id).values(worker_ref="ref-2", attempts=2))
        db.commit()
    second = reporter(sessions, config, task, "ref-2", clock)
    second.emit(start(epochs=6, epoch=4, step=0))
    for epoch, loss in ((1, 0.9), (2, 0.7), (3, 0.5)):  # the trainer replays its checkpoint's history
        second.emit(epoch_metric(epoch, loss))
    second.emit(epoch_metric(4, 0.4))
    epochs = [d["epoch"] for d in events(sessions, task, "metric") if d["scope"] == "epoch"]
    assert sorted(epochs) == [1, 2, 3, 4]  # each once: epoch 1 was stored, 2 and 3 are filled in
    assert load(sessions, task).best_metrics["loss"] == 0.4

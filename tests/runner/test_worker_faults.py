"""One attempt meets the machinery failing under it: a locked database, a full disk, a deleted folder."""

from __future__ import annotations

import errno
import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task, TaskEvent, TaskStatus
from dragdl.runner.base import WorkerConfig
from dragdl.runner.failures import classify
from dragdl.runner.suspend import request_suspend

from .conftest import MakeTask
from .support import digits_graph, sqlite_write_lock, wait_for
from .test_worker import launch, load, run


def epochs_in_files(out_dir: Path) -> list[int]:
    """Epoch metrics the attempt wrote to its events.jsonl (which does not need the database)."""
    path = out_dir / "events.jsonl"
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e["epoch"] for e in lines if e["type"] == "metric" and e["scope"] == "epoch"]


def epochs_in_db(sessions: sessionmaker[Session], task: Task) -> list[int]:
    with sessions() as db:
        rows = db.scalars(
            select(TaskEvent.data).where(TaskEvent.task_id == task.id, TaskEvent.kind == "metric")
        )
        return sorted(d["epoch"] for d in rows if d["scope"] == "epoch")


def messages(sessions: sessionmaker[Session], task: Task, kind: str) -> list[str]:
    with sessions() as db:
        rows = db.scalars(
            select(TaskEvent.data)
            .where(TaskEvent.task_id == task.id, TaskEvent.kind == kind)
            .order_by(TaskEvent.id)
        )
        return [str(d.get("message", "")) for d in rows]


class Beside(threading.Thread):
    """Runs `act` next to the attempt; its failure fails the test."""

    def __init__(self, act: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self.act = act
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.act()
        except BaseException as exc:  # handed to the test thread by check()
            self.error = exc

    def check(self) -> None:
        self.join(timeout=60)
        assert not self.is_alive(), "the helper thread did not finish"
        if self.error is not None:
            raise self.error


def test_a_database_locked_past_its_busy_timeout_does_not_fail_the_task(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    # The worker waits 0.3 s for a lock, then its write fails with "database is locked".
    worker_config = WorkerConfig(f"{config.database_url}?timeout=0.3", config.data_dir)
    task = make_task(make_user("alice"), "locked", digits_graph(epochs=4, batch_size=8))
    spec = launch(sessions, worker_config, task)
    out_dir = config.artifacts_dir / task.id

    def lock_for_an_epoch() -> None:
        wait_for(lambda: epochs_in_files(out_dir), 120, "the first epoch", every_s=0.02)
        with sqlite_write_lock(Path(config.database_url.removeprefix("sqlite:///"))):
            locked_at = len(epochs_in_files(out_dir))
            # Training goes on while every database write fails: a whole epoch ends under the lock.
            wait_for(lambda: len(epochs_in_files(out_dir)) > locked_at, 120, "an epoch under the lock", 0.02)

    helper = Beside(lock_for_an_epoch)
    helper.start()
    assert run(spec) == "SUCCEEDED"
    helper.check()
    row = load(sessions, task.id)
    assert row.status == TaskStatus.SUCCEEDED and row.attempts == 1 and row.error is None
    assert epochs_in_db(sessions, task) == [1, 2, 3, 4]


def test_an_infrastructure_error_retries_from_the_checkpoint(
    sessions: sessionmaker[Session],
    config: WorkerConfig,
    make_task: MakeTask,
    make_user: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dragdl.engine.train import checkpoint

    save = checkpoint.save_checkpoint
    calls = {"n": 0}

    def disk_full_once(*args: Any, **kwargs: Any) -> Path:
        calls["n"] += 1
        if calls["n"] == 2:  # the second checkpoint: one epoch is safe on disk already
            raise OSError(errno.ENOSPC, "No space left on device")
        return save(*args, **kwargs)

    monkeypatch.setattr(checkpoint, "save_checkpoint", disk_full_once)
    task = make_task(make_user("alice"), "disk", digits_graph(epochs=3))
    assert run(launch(sessions, config, task)) == "QUEUED"
    row = load(sessions, task.id)
    assert row.status == TaskStatus.QUEUED and row.resume and row.error is None
    (requeued,) = [m for m in messages(sessions, task, "status") if "retrying" in m]
    assert "infrastructure error (OSError: [Errno 28] No space left on device)" in requeued
    assert "attempt 2 of 3" in requeued
    assert run(launch(sessions, config, row)) == "SUCCEEDED"
    assert load(sessions, task.id).attempts == 2 and epochs_in_db(sessions, task) == [1, 2, 3]


def test_errors_are_classified_as_the_graphs_or_the_infrastructures() -> None:
    from sqlalchemy.exc import OperationalError

    from dragdl.engine.data.base import DatasetError
    from dragdl.engine.graph.expr import ExprError

    locked = OperationalError("UPDATE tasks", {}, Exception("database is locked"))
    assert classify(locked) == "infrastructure"
    assert classify(OSError(errno.ENOSPC, "No space left on device")) == "infrastructure"
    assert classify(DatasetError("cannot decode image a/5.png")) == "graph"
    assert classify(ExprError("unknown name y")) == "graph"
    assert classify(OSError("no space left on device")) == "graph"  # no errno: a user's file
    assert classify(RuntimeError("mat1 and mat2 shapes cannot be multiplied")) == "graph"


def test_a_folder_deleted_during_training_fails_the_task_saying_so(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = make_task(make_user("alice"), "deleted", digits_graph(epochs=40, batch_size=8))
    spec = launch(sessions, config, task)
    out_dir = config.artifacts_dir / task.id

    def delete_after_first_checkpoint() -> None:
        wait_for(lambda: list(out_dir.glob("checkpoints/ckpt-*.pt")), 120, "a checkpoint", every_s=0.02)
        # A checkpoint being written meanwhile can make a folder non-empty again: delete what is there.
        shutil.rmtree(out_dir, ignore_errors=True)
        assert not (out_dir / "events.jsonl").exists()

    helper = Beside(delete_after_first_checkpoint)
    helper.start()
    assert run(spec) == "FAILED"
    helper.check()
    row = load(sessions, task.id)
    assert row.attempts == 1 and row.error is not None
    assert row.error["code"] == "folder_deleted"
    assert row.error["message"].startswith("the task's folder was deleted during training")


def test_a_suspend_request_checkpoints_mid_epoch_and_hands_the_task_back(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = make_task(make_user("alice"), "suspended", digits_graph(epochs=2, batch_size=8))
    spec = launch(sessions, config, task)
    request_suspend(config.data_dir, spec.worker_ref)  # what the scheduler does on SIGTERM
    assert run(spec) == "QUEUED"
    row = load(sessions, task.id)
    assert row.status == TaskStatus.QUEUED and row.resume and row.error is None
    assert row.max_attempts == 4  # a shutdown does not use up a retry
    assert "server is shutting down" in messages(sessions, task, "status")[-1]
    assert run(launch(sessions, config, row)) == "SUCCEEDED"
    with sessions() as db:
        starts = list(
            db.scalars(select(TaskEvent.data).where(TaskEvent.task_id == task.id, TaskEvent.kind == "start"))
        )
    assert len(starts) == 2 and starts[1]["resumed_from_epoch"] == 1 and starts[1]["resumed_from_step"] > 0
    assert epochs_in_db(sessions, task) == [1, 2]

"""The scheduler through database outages and shutdown: the fake backend, a really locked SQLite."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task, TaskStatus, utcnow
from dragdl.db.session import make_engine, make_session_factory
from dragdl.runner.base import WorkerConfig
from dragdl.runner.suspend import suspend_requested

from .conftest import MakeTask
from .support import sqlite_write_lock, wait_for
from .test_scheduler import FakeBackend, scheduler, status_of, statuses, statuses_messages


def test_an_ended_attempt_stays_tracked_until_its_end_is_committed(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    engine = make_engine(f"{config.database_url}?timeout=0.2")  # gives up on a lock after 0.2 s
    busy = make_session_factory(engine)
    task = make_task(make_user("alice"))
    backend = FakeBackend()
    runner = scheduler(backend, busy, config)
    runner.tick()
    backend.launched[0].ended = ("died", "worker process died: SIGKILL")
    with sqlite_write_lock(Path(config.database_url.removeprefix("sqlite:///"))):
        with pytest.raises(OperationalError, match="database is locked"):
            runner.tick()
        assert runner.running() == [task.id]  # not forgotten while its end is unwritten
        assert status_of(sessions, task).status == TaskStatus.RUNNING
    runner.tick()  # the database answers again: re-queued, and attempt 2 starts
    engine.dispose()
    row = status_of(sessions, task)
    assert row.status == TaskStatus.RUNNING and row.attempts == 2 and row.resume
    assert statuses(sessions, task) == ["RUNNING", "QUEUED", "RUNNING"]
    assert [h.spec.worker_ref for h in backend.launched] == [f"dragdl-{task.id}-1", f"dragdl-{task.id}-2"]


def test_a_running_task_without_a_live_worker_is_requeued_without_a_restart(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    backend = FakeBackend()
    runner = scheduler(backend, sessions, config, heartbeat_timeout_s=0.5)
    runner.tick()
    # An attempt this scheduler lost track of (its worker is gone): RUNNING with nobody behind it.
    running = {"status": TaskStatus.RUNNING, "attempts": 1, "heartbeat_at": utcnow(), "worker_pid": 123}
    orphan = make_task(make_user("alice"), "orphan", worker_ref="dragdl-orphan-1", **running)

    def relaunched() -> bool:
        runner.tick()
        return orphan.id in backend.names()

    wait_for(relaunched, 10, "the orphaned task to be started again", every_s=0.05)
    row = status_of(sessions, orphan)
    assert row.status == TaskStatus.RUNNING and row.attempts == 2 and row.resume
    assert "worker was lost while it ran" in statuses_messages(sessions, orphan)[-2]


def test_shutdown_asks_each_running_worker_to_checkpoint(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    alice = make_user("alice", quota=5)
    tasks = [make_task(alice, f"t{i}") for i in range(2)]
    backend = FakeBackend()
    runner = scheduler(backend, sessions, config, stop_timeout_s=0.0)
    runner.tick()
    refs = [h.spec.worker_ref for h in backend.launched]
    assert len(refs) == len(tasks)
    assert not any(suspend_requested(config.data_dir, ref) for ref in refs)
    runner.suspend_running()
    assert all(suspend_requested(config.data_dir, ref) for ref in refs)
    runner.connect()  # the next start clears the old requests
    assert not any(suspend_requested(config.data_dir, ref) for ref in refs)


def test_a_locked_database_does_not_make_a_healthy_worker_look_lost(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    engine = make_engine(f"{config.database_url}?timeout=0.2")  # gives up on a lock after 0.2 s
    busy = make_session_factory(engine)
    task = make_task(make_user("alice"))
    backend = FakeBackend()
    runner = scheduler(backend, busy, config, heartbeat_timeout_s=0.5)
    runner.tick()
    worker = backend.launched[0]

    def beat(age_s: float) -> None:
        with sessions() as db:
            moment = utcnow() - timedelta(seconds=age_s)
            db.execute(update(Task).where(Task.id == task.id).values(heartbeat_at=moment, worker_pid=123))
            db.commit()

    # The worker's last beat is older than the timeout because the file has been locked that long.
    beat(age_s=5.0)
    with sqlite_write_lock(Path(config.database_url.removeprefix("sqlite:///"))):
        runner.tick()
        assert not worker.killed, "killed a worker whose heartbeat the database refused"
    runner.tick()  # the database answers again: the worker gets the whole timeout to beat again
    assert not worker.killed
    beat(age_s=0.0)
    runner.tick()
    assert not worker.killed and status_of(sessions, task).attempts == 1
    # A worker that stays silent while the database takes writes is lost, as before.
    beat(age_s=5.0)

    def killed() -> bool:
        runner.tick()
        return worker.killed

    wait_for(killed, 10, "the silent worker to be killed", every_s=0.05)
    engine.dispose()

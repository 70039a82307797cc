"""The scheduler through database outages, shutdown and workers that cannot be started: the fake
backend, a really locked SQLite."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task, TaskStatus, utcnow
from dragdl.db.session import make_engine, make_session_factory
from dragdl.runner.base import LaunchSpec, Resources, WorkerConfig
from dragdl.runner.suspend import suspend_requested

from .conftest import MakeTask
from .support import sqlite_write_lock, wait_for
from .test_scheduler import FakeBackend, FakeHandle, scheduler, status_of, statuses, statuses_messages


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


@dataclass
class RefusingBackend(FakeBackend):
    """Refuses to start the workers of the tasks in `refused` (the machine's fault: their owner's
    disk quota is used up), after handing out a warm worker it then expects back."""

    refused: set[str] = field(default_factory=set)
    warm_claimed: list[str] = field(default_factory=list)
    warm_released: list[str] = field(default_factory=list)

    def claim_warm(self, node_id: str | None, need: Resources) -> str | None:
        name = f"warm-{len(self.warm_claimed) + 1}"
        self.warm_claimed.append(name)
        return name

    def release_warm(self, name: str) -> None:
        self.warm_released.append(name)

    def launch(self, spec: LaunchSpec) -> FakeHandle:
        if spec.task_id in self.refused:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        return super().launch(spec)


def test_a_worker_that_cannot_be_started_requeues_its_task_and_the_others_still_start(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    refused = make_task(make_user("alice"), "refused")
    other = make_task(make_user("bob"), "other")  # later in line
    backend = RefusingBackend(refused={refused.id})
    runner = scheduler(backend, sessions, config)
    budget = status_of(sessions, refused).max_attempts
    runner.tick()
    # Not lost: waiting again, saying why, with the attempt given back; nothing of it is kept.
    row = status_of(sessions, refused)
    assert row.status == TaskStatus.QUEUED and row.resume
    assert row.max_attempts - budget == row.attempts == 1  # the refused start used up no retry
    message = statuses_messages(sessions, refused)[-1]
    assert message.startswith("the worker could not be started (OSError: [Errno 122] Disk quota exceeded)")
    assert "workers start again in 2 s" in message
    assert runner.running() == [] and backend.launched == []
    assert backend.warm_released == backend.warm_claimed == ["warm-1"]  # the warm worker is given back
    # Starts pause for the machine (a full disk refuses every start); once the pause is over the
    # task behind gets its turn, instead of the refused one being tried first forever.
    assert status_of(sessions, other).status == TaskStatus.QUEUED

    def other_started() -> bool:
        runner.tick()
        return other.id in backend.names()

    wait_for(other_started, 30, "bob's task to start after the pause", every_s=0.1)
    assert runner.running() == [other.id]
    assert status_of(sessions, refused).status == TaskStatus.QUEUED
    # The refused task is tried again (after the next pause) and starts once the machine lets it.
    backend.refused.clear()

    def refused_started() -> bool:
        runner.tick()
        return refused.id in backend.names()

    wait_for(refused_started, 30, "alice's task to start once workers can start", every_s=0.1)
    row = status_of(sessions, refused)
    refusals = [m for m in statuses_messages(sessions, refused) if m.startswith("the worker could not")]
    assert row.status == TaskStatus.RUNNING and row.attempts == len(refusals) + 1
    assert row.max_attempts - budget == len(refusals)  # no refusal used up a retry
    assert sorted(runner.running()) == sorted([refused.id, other.id])
    assert len(backend.warm_released) == len(backend.warm_claimed) - 2  # the two started kept theirs

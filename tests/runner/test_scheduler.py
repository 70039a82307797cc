"""The scheduler's policy against a fake backend: order, quotas, capacity, stops, crashes, restarts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task, TaskEvent, TaskStatus, User, utcnow
from dragdl.engine.data.base import DataContext
from dragdl.runner.base import LaunchSpec, Outcome, Resources, WorkerConfig
from dragdl.runner.placement import Node
from dragdl.runner.scheduler import Scheduler
from dragdl.runner.transitions import finish

from .conftest import MakeTask


@dataclass(eq=False)
class FakeHandle:
    spec: LaunchSpec
    ended: tuple[Outcome, str] | None = None
    killed: bool = False


@dataclass
class FakeBackend:
    """Records launches; a test ends a worker by setting `handle.ended`."""

    total: Resources = field(default_factory=lambda: Resources(8, 0))
    """One node with these resources, unless `cluster` lists the nodes."""
    launched: list[FakeHandle] = field(default_factory=list)
    alive: dict[str, FakeHandle] = field(default_factory=dict)
    cluster: list[Node] | None = None

    def connect(self) -> None:
        pass

    def nodes(self) -> list[Node]:
        return list(self.cluster) if self.cluster is not None else [Node("node-1", "127.0.0.1", self.total)]

    def claim_warm(self, node_id: str | None, need: Resources) -> str | None:
        return None

    def release_warm(self, name: str) -> None:
        pass

    def reap_idle_warm(self, running_refs: set[str]) -> int:
        return 0

    def launch(self, spec: LaunchSpec) -> FakeHandle:
        handle = FakeHandle(spec)
        self.launched.append(handle)
        return handle

    def find(self, worker_ref: str) -> FakeHandle | None:
        return self.alive.get(worker_ref)

    def poll(self, handles: list[Any]) -> list[tuple[Any, Outcome, str]]:
        return [(h, *h.ended) for h in handles if h.ended is not None]

    def kill(self, handle: Any) -> None:
        handle.killed = True
        if handle.ended is None:
            handle.ended = ("died", "killed")

    def wait_ended(self, handle: Any, timeout_s: float) -> bool:
        return True

    def close(self) -> None:
        pass

    def stops_workers_on_close(self) -> bool:
        return True

    def names(self) -> list[str]:
        return [h.spec.task_id for h in self.launched]


def scheduler(
    backend: FakeBackend, sessions: sessionmaker[Session], config: WorkerConfig, **options: Any
) -> Scheduler:
    options.setdefault("max_running_per_user", 2)
    options.setdefault("stop_timeout_s", 30.0)
    runner = Scheduler(backend, sessions, config, lambda db, user: DataContext(config.data_dir), **options)
    runner.connect()
    return runner


def status_of(sessions: sessionmaker[Session], task: Task) -> Task:
    with sessions() as db:
        row = db.get(Task, task.id)
        assert row is not None
        return row


def statuses(sessions: sessionmaker[Session], task: Task) -> list[str]:
    with sessions() as db:
        rows = db.scalars(
            select(TaskEvent)
            .where(TaskEvent.task_id == task.id, TaskEvent.kind == "status")
            .order_by(TaskEvent.id)
        )
        return [row.data["status"] for row in rows]


def end_by_worker(sessions: sessionmaker[Session], handle: FakeHandle, status: TaskStatus) -> None:
    """What a worker does at its end: write its final status, then return."""
    with sessions() as db:
        assert finish(db, handle.spec.task_id, status, "done", worker_ref=handle.spec.worker_ref)
    handle.ended = ("returned", status.value)


def test_priority_first_then_submission_order_within_each_users_quota(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    alice, bob = make_user("alice"), make_user("bob", quota=1)
    a1, a2 = make_task(alice, "a1"), make_task(alice, "a2")
    urgent = make_task(alice, "urgent", priority=5)
    b1, b2 = make_task(bob, "b1"), make_task(bob, "b2")
    backend = FakeBackend()
    runner = scheduler(backend, sessions, config)
    runner.tick()
    # alice's quota (server default 2) is used by `urgent` and a1; a2 waits, bob's b1 still starts.
    assert backend.names() == [urgent.id, a1.id, b1.id]
    assert status_of(sessions, a2).status == TaskStatus.QUEUED
    assert status_of(sessions, b2).status == TaskStatus.QUEUED
    started = status_of(sessions, a1)
    assert started.status == TaskStatus.RUNNING and started.attempts == 1
    assert started.worker_ref == backend.launched[1].spec.worker_ref == f"dragdl-{a1.id}-1"
    assert statuses(sessions, a1) == ["RUNNING"]
    end_by_worker(sessions, backend.launched[1], TaskStatus.SUCCEEDED)
    runner.tick()
    assert backend.names()[3:] == [a2.id]
    assert status_of(sessions, a1).status == TaskStatus.SUCCEEDED


def test_priority_reorders_only_the_users_own_tasks_never_jumps_other_users(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    alice, bob = make_user("alice", quota=10), make_user("bob", quota=10)
    b1 = make_task(bob, "b1")
    a1 = make_task(alice, "a1")
    b2 = make_task(bob, "b2")
    pushy = make_task(alice, "pushy", priority=100)
    backend = FakeBackend(Resources(1, 0))  # one task at a time: the order is the launch order
    runner = scheduler(backend, sessions, config)
    for _ in range(4):
        runner.tick()
        end_by_worker(sessions, backend.launched[-1], TaskStatus.SUCCEEDED)
    # FIFO across users; alice's priority 100 only puts `pushy` before her own a1, in a1's place.
    assert backend.names() == [b1.id, pushy.id, b2.id, a1.id]


def test_capacity_is_shared_in_order_and_a_task_no_node_holds_waits_with_its_reason(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    alice = make_user("alice", quota=10)
    huge = make_task(alice, "huge", resources={"cpus": 3.0, "gpus": 0.0})
    first = make_task(alice, "first", resources={"cpus": 1.5, "gpus": None})
    second = make_task(alice, "second", resources={"cpus": 1.0, "gpus": 0.0})
    small = make_task(alice, "small", resources={"cpus": 0.5, "gpus": 0.0})
    backend = FakeBackend(Resources(2, 0))
    runner = scheduler(backend, sessions, config)
    runner.tick()
    # `huge` fits no node: it stays QUEUED, saying why, and does not hold up the tasks behind it.
    waiting = status_of(sessions, huge)
    assert waiting.status == TaskStatus.QUEUED and waiting.queued_reason is not None
    assert waiting.queued_reason["code"] == "no_node_fits"
    assert waiting.queued_reason["details"]["cpus"] == 3.0
    assert waiting.queued_reason["details"]["node_cpus"] == 2.0
    assert "3 CPUs" in waiting.queued_reason["message"] and "has 2 CPUs" in waiting.queued_reason["message"]
    # `second` does not fit next to `first`; `small` would, but must not overtake it.
    assert backend.names() == [first.id]
    assert backend.launched[0].spec.resources == Resources(1.5, 0.0)  # gpus null on a CPU-only cluster: 0
    assert backend.launched[0].spec.node_id == "node-1"
    assert status_of(sessions, first).resources == {"cpus": 1.5, "gpus": 0.0}
    assert status_of(sessions, first).queued_reason is None
    assert status_of(sessions, second).queued_reason == {
        "code": "no_free_node",
        "message": status_of(sessions, second).queued_reason["message"],  # type: ignore[index]
        "details": {"cpus": 1.0, "gpus": 0.0},
    }
    assert status_of(sessions, small).status == TaskStatus.QUEUED
    end_by_worker(sessions, backend.launched[0], TaskStatus.SUCCEEDED)
    runner.tick()
    assert backend.names()[1:] == [second.id, small.id]
    assert status_of(sessions, second).queued_reason is None
    # A node large enough joins: the waiting task starts on it at the next pass.
    backend.cluster = [*backend.nodes(), Node("node-big", "10.0.0.2", Resources(4, 0))]
    runner.tick()
    assert backend.names()[3:] == [huge.id]
    assert backend.launched[3].spec.node_id == "node-big"
    started = status_of(sessions, huge)
    assert started.status == TaskStatus.RUNNING and started.worker_node == "node-big"
    assert started.queued_reason is None


def test_a_crashed_worker_is_retried_from_its_checkpoint_until_attempts_run_out(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    task = make_task(make_user("alice"), max_attempts=2)
    backend = FakeBackend()
    runner = scheduler(backend, sessions, config)
    runner.tick()
    backend.launched[0].ended = ("died", "worker process died: SIGKILL")
    runner.tick()  # settles the crash and starts attempt 2 at once
    row = status_of(sessions, task)
    assert row.status == TaskStatus.RUNNING and row.resume and row.attempts == 2
    assert backend.launched[1].spec.worker_ref == f"dragdl-{task.id}-2"
    backend.launched[1].ended = ("died", "worker process died: SIGKILL")
    runner.tick()
    row = status_of(sessions, task)
    assert row.status == TaskStatus.FAILED and row.error is not None
    assert row.error["code"] == "worker_lost" and "2 times" in row.error["message"]
    assert statuses(sessions, task) == ["RUNNING", "QUEUED", "RUNNING", "FAILED"]


def test_a_worker_that_does_not_stop_in_time_is_killed_and_marked_stopped(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    task = make_task(make_user("alice"))
    backend = FakeBackend()
    runner = scheduler(backend, sessions, config, stop_timeout_s=0.0)
    runner.tick()
    with sessions() as db:
        db.execute(Task.__table__.update().where(Task.id == task.id).values(stop_requested=True))
        db.commit()
    runner.tick()  # sees the request
    runner.tick()  # the timeout (0 s) has passed: kill
    assert backend.launched[0].killed
    runner.tick()  # settles the killed worker
    row = status_of(sessions, task)
    assert row.status == TaskStatus.STOPPED and "did not checkpoint" in statuses_messages(sessions, task)[-1]


def test_a_worker_whose_end_ray_never_reports_is_settled_by_its_lost_node_or_its_kill(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    """Ray does not always report a worker's end (a removed node's calls can hang): the scheduler
    judges it by the cluster's node list and by how long ago it killed the worker."""
    alice = make_user("alice", quota=10)
    moving = make_task(alice, "moving", resources={"cpus": 2.0, "gpus": 0.0})
    backend = FakeBackend(cluster=[Node("doomed", "10.0.0.2", Resources(2, 0))])
    backend.kill = lambda handle: setattr(handle, "killed", True)  # type: ignore[method-assign]
    runner = scheduler(backend, sessions, config, stop_timeout_s=0.0)
    runner.tick()
    assert status_of(sessions, moving).worker_node == "doomed"
    backend.cluster = [Node("head", "10.0.0.1", Resources(1, 0))]  # its node left; no end reported
    runner.tick()
    row = status_of(sessions, moving)
    assert row.status == TaskStatus.QUEUED and row.resume and row.attempts == 1  # no retry used up
    assert "left the cluster" in statuses_messages(sessions, moving)[-1]

    stopped = make_task(alice, "stopped", resources={"cpus": 1.0, "gpus": 0.0})
    runner.tick()
    assert backend.launched[-1].spec.task_id == stopped.id
    with sessions() as db:
        db.execute(Task.__table__.update().where(Task.id == stopped.id).values(stop_requested=True))
        db.commit()
    runner.tick()  # sees the request
    runner.tick()  # the timeout (0 s) has passed: kill, which Ray never confirms
    assert backend.launched[-1].killed
    runner.tick()  # the kill is stop_timeout_s (0 s) old: settled all the same
    assert status_of(sessions, stopped).status == TaskStatus.STOPPED
    assert runner.running() == []


def statuses_messages(sessions: sessionmaker[Session], task: Task) -> list[str]:
    with sessions() as db:
        rows = db.scalars(
            select(TaskEvent)
            .where(TaskEvent.task_id == task.id, TaskEvent.kind == "status")
            .order_by(TaskEvent.id)
        )
        return [row.data.get("message", "") for row in rows]


def test_a_worker_that_wrote_its_own_end_is_left_as_it_is(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    task = make_task(make_user("alice"))
    backend = FakeBackend()
    runner = scheduler(backend, sessions, config)
    runner.tick()
    end_by_worker(sessions, backend.launched[0], TaskStatus.STOPPED)
    runner.tick()
    assert status_of(sessions, task).status == TaskStatus.STOPPED
    assert statuses(sessions, task) == ["RUNNING", "STOPPED"]
    assert runner.running() == []


@pytest.mark.parametrize("stale", [False, True])
def test_restart_adopts_live_workers_and_requeues_orphans(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask, stale: bool
) -> None:
    alice = make_user("alice", quota=10)
    beat = utcnow() - (timedelta(minutes=10) if stale else timedelta(seconds=1))
    running = {"status": TaskStatus.RUNNING, "attempts": 1, "heartbeat_at": beat, "worker_pid": 123}
    live = make_task(alice, "live", worker_ref="dragdl-live-1", **running)
    orphan = make_task(alice, "orphan", worker_ref="dragdl-orphan-1", **running)
    stopping = make_task(alice, "stopping", worker_ref="dragdl-stopping-1", stop_requested=True, **running)
    backend = FakeBackend()
    spec = LaunchSpec(live.id, "dragdl-live-1", Resources(1, 0), config, DataContext(config.data_dir))
    backend.alive["dragdl-live-1"] = survivor = FakeHandle(spec)
    runner = scheduler(backend, sessions, config, poll_s=0)
    assert status_of(sessions, stopping).status == TaskStatus.STOPPED
    requeued = status_of(sessions, orphan)
    assert requeued.status == TaskStatus.QUEUED and requeued.resume and requeued.max_attempts == 4
    if stale:  # alive but silent for 10 minutes: killed and re-queued like an orphan
        assert survivor.killed and status_of(sessions, live).status == TaskStatus.QUEUED
        return
    assert runner.running() == [live.id] and not survivor.killed
    runner.tick()
    assert backend.names() == [orphan.id]  # the orphan starts again (attempt 2, resuming)
    end_by_worker(sessions, survivor, TaskStatus.SUCCEEDED)  # the adopted worker ends by itself
    runner.tick()
    assert status_of(sessions, live).status == TaskStatus.SUCCEEDED and runner.running() == [orphan.id]


def test_kill_ends_a_running_worker_as_stopped(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    task = make_task(make_user("alice"))
    backend = FakeBackend()
    runner = scheduler(backend, sessions, config)
    runner.tick()
    assert runner.kill(task.id) and backend.launched[0].killed
    runner.tick()
    assert status_of(sessions, task).status == TaskStatus.STOPPED
    assert runner.kill("no-such-task")


def test_users_without_a_quota_use_the_server_default(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    carol: User = make_user("carol")
    tasks = [make_task(carol, f"c{i}") for i in range(3)]
    backend = FakeBackend()
    scheduler(backend, sessions, config, max_running_per_user=1).tick()
    assert backend.names() == [tasks[0].id]

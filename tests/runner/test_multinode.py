"""The scheduler on a real Ray cluster of several nodes on this machine (Ray's cluster utilities: a
head and worker nodes, each a raylet with its own declared CPUs): a task runs on a node that holds
it, a task larger than every node waits saying why and starts when a large enough node joins, and a
task whose node is lost resumes from its checkpoint on another node.

The scheduler joins the cluster by its address, as a server with `DRAGDL_RAY_ADDRESS` does, and runs
its own thread; the workers are real processes under the nodes' raylets, writing to SQLite.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task, TaskEvent, TaskStatus
from dragdl.engine.data.base import DataContext
from dragdl.runner.base import WorkerConfig
from dragdl.runner.ray_runner import RayBackend
from dragdl.runner.scheduler import Scheduler

from .conftest import MakeTask
from .support import descendants, digits_graph, slow_graph, wait_for

pytestmark = pytest.mark.slow

NODE_ARGS: dict[str, Any] = {"object_store_memory": 100 * 1024**2}
FAST_NODE_DEATH = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}
"""The head notices a lost node in about 2 s instead of Ray's default 15 s or more."""
FINAL = (TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.STOPPED)


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A head node with 1 CPU; tests add worker nodes. Shut down with all its processes at the end.

    Ray's cluster utilities write the head's address to /tmp/ray/ray_current_cluster, where every
    `ray.init()` without an address on this machine would find it and join this cluster instead of
    starting its own (other test sessions running at the same time included); the scheduler is
    given the address instead, and the file is neither written nor removed.
    """
    import ray
    import ray._common.utils
    import ray._private.utils
    from ray.cluster_utils import Cluster

    monkeypatch.setattr(ray._private.utils, "write_ray_address", lambda *args, **kwargs: None)
    monkeypatch.setattr(ray._common.utils, "reset_ray_address", lambda *args, **kwargs: None)
    if ray.is_initialized():  # another module's local Ray: its next module starts it again
        ray.shutdown()
    head_args = {**NODE_ARGS, "num_cpus": 1, "_system_config": FAST_NODE_DEATH}
    made = Cluster(initialize_head=True, connect=False, head_node_args=head_args)
    try:
        yield made
    finally:
        if ray.is_initialized():
            ray.shutdown()
        made.shutdown()


@pytest.fixture
def run_scheduler(
    cluster: Any, sessions: sessionmaker[Session], config: WorkerConfig
) -> Iterator[Callable[[], Scheduler]]:
    runners: list[Scheduler] = []

    def start() -> Scheduler:
        runner = Scheduler(
            RayBackend(cluster.address, data_dir=config.data_dir),
            sessions,
            config,
            lambda db, user: DataContext(config.data_dir),
            max_running_per_user=10,
            stop_timeout_s=20.0,
            heartbeat_timeout_s=60.0,
            poll_s=0.2,
            eager=True,
        )
        runner.start()
        runners.append(runner)
        wait_for(runner.nodes, 60, "the scheduler to join the cluster")
        return runner

    yield start
    for runner in runners:
        runner.shutdown()


def add_node(cluster: Any, cpus: int) -> Any:
    return cluster.add_node(**NODE_ARGS, num_cpus=cpus)


def raylet_pid(node: Any) -> int:
    from ray._private import ray_constants

    pid: int = node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid
    return pid


def row(sessions: sessionmaker[Session], task: Task) -> Task:
    with sessions() as db:
        found = db.get(Task, task.id)
        assert found is not None
        return found


def wait_row(
    sessions: sessionmaker[Session],
    task: Task,
    check: Callable[[Task], bool],
    what: str,
    timeout_s: float = 120,
) -> Task:
    def reached() -> Task | None:
        current = row(sessions, task)
        return current if check(current) else None

    return wait_for(reached, timeout_s, what)


def wait_final(sessions: sessionmaker[Session], task: Task, timeout_s: float = 400) -> Task:
    return wait_row(sessions, task, lambda t: t.status in FINAL, f"task {task.name} to end", timeout_s)


def events(sessions: sessionmaker[Session], task: Task, kind: str) -> list[dict[str, Any]]:
    with sessions() as db:
        query = select(TaskEvent).where(TaskEvent.task_id == task.id, TaskEvent.kind == kind)
        rows = db.scalars(query.order_by(TaskEvent.id))
        return [dict(r.data) for r in rows]


def test_each_task_runs_on_a_node_that_holds_it_and_a_task_larger_than_every_node_waits_for_one(
    cluster: Any,
    run_scheduler: Callable[[], Scheduler],
    sessions: sessionmaker[Session],
    make_user: Any,
    make_task: MakeTask,
) -> None:
    second = add_node(cluster, cpus=2)
    alice = make_user("alice")
    # 3 CPUs in the cluster in all, but at most 2 on one node: `wide` fits the sum, no node.
    wide = make_task(alice, "wide", graph=digits_graph(epochs=1), resources={"cpus": 3.0, "gpus": 0.0})
    pair = make_task(
        alice, "pair", graph=slow_graph(epochs=1, batch_size=8), resources={"cpus": 2.0, "gpus": 0.0}
    )
    runner = run_scheduler()
    assert {node.id for node in runner.nodes() or []} == {cluster.head_node.node_id, second.node_id}

    running = wait_row(sessions, pair, lambda t: t.worker_pid is not None, "`pair` to run")
    assert running.worker_node == second.node_id
    # The worker process is really under the second node's raylet, not the head's.
    assert running.worker_pid in descendants(raylet_pid(second))
    assert running.worker_pid not in descendants(raylet_pid(cluster.head_node))

    waiting = wait_row(sessions, wide, lambda t: t.queued_reason is not None, "`wide` to say why it waits")
    assert waiting.status == TaskStatus.QUEUED
    assert waiting.queued_reason is not None and waiting.queued_reason["code"] == "no_node_fits"
    assert waiting.queued_reason["details"]["node_cpus"] == 2.0
    assert "3 CPUs" in waiting.queued_reason["message"]

    done = wait_final(sessions, pair)
    assert done.status == TaskStatus.SUCCEEDED, done.error
    assert row(sessions, wide).status == TaskStatus.QUEUED  # a free node of 2 CPUs still cannot hold it

    # A node of 3 CPUs joins: `wide` starts on it without anything else happening.
    large = add_node(cluster, cpus=3)
    started = wait_row(sessions, wide, lambda t: t.status != TaskStatus.QUEUED, "`wide` to start", 60)
    assert started.worker_node == large.node_id and started.queued_reason is None
    done = wait_final(sessions, wide)
    assert done.status == TaskStatus.SUCCEEDED, done.error


def test_a_task_on_a_lost_node_resumes_from_its_checkpoint_when_a_node_that_holds_it_joins(
    cluster: Any,
    run_scheduler: Callable[[], Scheduler],
    sessions: sessionmaker[Session],
    make_user: Any,
    make_task: MakeTask,
) -> None:
    doomed = add_node(cluster, cpus=2)
    task = make_task(
        make_user("alice"),
        "moving",
        graph=slow_graph(epochs=3, batch_size=4),
        resources={"cpus": 2.0, "gpus": 0.0},
    )
    run_scheduler()
    wait_row(
        sessions,
        task,
        lambda t: t.status == TaskStatus.RUNNING and t.epoch >= 2,
        "epoch 1 checkpointed and epoch 2 under way",
    )
    assert row(sessions, task).worker_node == doomed.node_id

    cluster.remove_node(doomed, allow_graceful=False)
    # The only node left (the head, 1 CPU) cannot hold it: back in the queue, saying so. The node's
    # loss is seen within seconds; in some runs under pytest's output capture Ray does not report
    # the worker's end, and the heartbeat timeout (60 s here) re-queues it instead.
    requeued = wait_row(
        sessions,
        task,
        lambda t: t.status == TaskStatus.QUEUED and t.queued_reason is not None,
        "the task to be re-queued after its node was lost",
        150,
    )
    assert requeued.queued_reason is not None and requeued.queued_reason["code"] == "no_node_fits"
    assert requeued.resume and requeued.max_attempts == 4  # the lost node did not use up a retry
    said = [e.get("message", "") for e in events(sessions, task, "status")]
    assert any("left the cluster" in m or "was lost while it ran" in m for m in said), said

    replacement = add_node(cluster, cpus=2)
    done = wait_final(sessions, task)
    assert done.status == TaskStatus.SUCCEEDED, done.error
    assert done.worker_node == replacement.node_id
    # A worker may also be lost while the new node settles in (under load, Ray can refuse the first
    # actor on a node that just joined); such a loss is a retry of its own. What matters is that the
    # attempts after the lost node all resumed from the checkpoint of epoch 1 or later.
    starts = events(sessions, task, "start")
    statuses = [e.get("message") for e in events(sessions, task, "status")]
    assert done.attempts == len(starts) >= 2, statuses
    resumed = [start["resumed_from_epoch"] for start in starts[1:]]
    assert all(epoch is not None and epoch >= 2 for epoch in resumed), (resumed, statuses)


def test_a_two_worker_run_spans_both_nodes_and_survives_a_killed_worker(
    cluster: Any,
    run_scheduler: Callable[[], Scheduler],
    sessions: sessionmaker[Session],
    make_user: Any,
    make_task: MakeTask,
) -> None:
    second = add_node(cluster, cpus=1)
    # Two workers of 1 CPU on two nodes of 1 CPU: one on each, joined by gloo over the network.
    graph = slow_graph(epochs=5, batch_size=8, workers=2, cpus_per_worker=1.0)
    task = make_task(make_user("alice"), "ddp", graph=graph)
    run_scheduler()
    wait_row(
        sessions,
        task,
        lambda t: t.status == TaskStatus.RUNNING and t.epoch >= 2,
        "epoch 1 checkpointed and epoch 2 under way",
        180,
    )
    (first,) = events(sessions, task, "start")
    workers = first["workers"]
    assert [w["rank"] for w in workers] == [0, 1]
    assert {w["node_id"] for w in workers} == {cluster.head_node.node_id, second.node_id}

    os.kill(workers[1]["pid"], signal.SIGKILL)  # mid-epoch: Ray Train starts the workers again
    done = wait_final(sessions, task)
    assert done.status == TaskStatus.SUCCEEDED, done.error
    starts = events(sessions, task, "start")
    assert len(starts) >= 2
    resumed = starts[-1]["resumed_from_epoch"]
    assert resumed is not None and resumed >= 2, starts[-1]
    assert done.attempts == 1  # within the task's attempt: Ray Train's failure budget, not a retry
    logs = [e.get("message", "") for e in events(sessions, task, "log")]
    assert any("Ray Train started the workers again (restart 1 of the 3" in m for m in logs), logs
    epochs = [e for e in events(sessions, task, "metric") if e.get("scope") == "epoch"]
    assert sorted({e["epoch"] for e in epochs}) == [1, 2, 3, 4, 5]


def test_a_sweeps_parallel_trials_run_on_both_nodes_at_once(
    cluster: Any,
    run_scheduler: Callable[[], Scheduler],
    sessions: sessionmaker[Session],
    make_user: Any,
) -> None:
    from dragdl.db.models import Sweep, SweepStatus, SweepTrial
    from dragdl.runner.sweep_driver import SweepDriver

    second = add_node(cluster, cpus=1)
    graph = slow_graph(epochs=2, batch_size=8)
    graph["search"] = {"train": {"lr": {"type": "float", "low": 1e-3, "high": 1e-2, "log": True}}}
    alice = make_user("alice")
    with sessions() as db:
        sweep = Sweep(
            owner_id=alice.id,
            name="lr",
            base_graph=graph,
            status=SweepStatus.RUNNING,
            trials=4,
            parallel=2,
            objective="val_accuracy",
            direction="maximize",
            sampler="random",
            pruner="none",
            seed=0,
            resources={"cpus": 1.0, "gpus": 0.0},
        )
        db.add(sweep)
        db.commit()
        sweep_id = sweep.id
    runner = run_scheduler()
    driver = SweepDriver(sessions, runner.wake, poll_s=0.2)
    driver.start()
    try:
        # Two trials of 1 CPU on two nodes of 1 CPU: both run at the same time, one on each node.
        def both_running() -> set[str] | None:
            with sessions() as db:
                rows = db.scalars(select(Task).where(Task.status == TaskStatus.RUNNING))
                nodes = {t.worker_node for t in rows if t.worker_node and t.epoch >= 1}
            return nodes if len(nodes) == 2 else None

        nodes = wait_for(both_running, 180, "two trials running at once")
        assert nodes == {cluster.head_node.node_id, second.node_id}

        def finished() -> Sweep | None:
            with sessions() as db:
                found = db.get(Sweep, sweep_id)
                return found if found is not None and found.status != SweepStatus.RUNNING else None

        done = wait_for(finished, 400, "the sweep to finish")
        assert done.status == SweepStatus.SUCCEEDED, done.error
        with sessions() as db:
            trials = list(db.scalars(select(SweepTrial).where(SweepTrial.sweep_id == sweep_id)))
            ran_on = {db.get(Task, t.task_id).worker_node for t in trials if t.task_id}  # type: ignore[union-attr]
        assert [t.state for t in trials] == ["COMPLETE"] * 4
        assert ran_on == nodes
    finally:
        driver.shutdown()

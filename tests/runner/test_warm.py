"""Warm workers on a real local Ray: once a node has run a task, a worker waits there with the
training code imported; the next task runs in it (its worker_ref is the warm actor's name) and a new
one takes its place; idle ones end with the backend, and a previous server's are reaped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task, TaskEvent, TaskStatus
from dragdl.engine.data.base import DataContext
from dragdl.runner.base import Resources, WorkerConfig
from dragdl.runner.ray_runner import NAMESPACE, WARM_PREFIX, RayBackend
from dragdl.runner.scheduler import Scheduler

from .conftest import MakeTask
from .support import digits_graph, kill_task_workers, start_shared_ray, wait_for

FINAL = (TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.STOPPED)


@pytest.fixture
def ray_cluster(request: pytest.FixtureRequest) -> Iterator[None]:
    if start_shared_ray():
        import ray

        request.config.add_cleanup(ray.shutdown)
    yield
    kill_task_workers()


def warm_names() -> set[str]:
    import ray

    return {
        str(entry["name"])
        for entry in ray.util.list_named_actors(all_namespaces=True)
        if entry.get("namespace") == NAMESPACE and str(entry["name"]).startswith(WARM_PREFIX)
    }


def ready(name: str) -> None:
    """Wait until the warm actor has imported the training code (its constructor returned)."""
    import ray

    actor = ray.get_actor(name, namespace=NAMESPACE)
    ray.get(actor.__ray_ready__.remote(), timeout=180)


def final(sessions: sessionmaker[Session], task: Task) -> Task:
    def ended() -> Task | None:
        with sessions() as db:
            row = db.get(Task, task.id)
            return row if row is not None and row.status in FINAL else None

    return wait_for(ended, 240, f"task {task.name} to end")


def status_messages(sessions: sessionmaker[Session], task: Task) -> list[str]:
    with sessions() as db:
        rows = db.scalars(select(TaskEvent).where(TaskEvent.task_id == task.id, TaskEvent.kind == "status"))
        return [str(r.data.get("message", "")) for r in rows]


def test_the_second_task_on_a_node_runs_in_a_warm_worker_and_the_pool_is_refilled(
    ray_cluster: None,
    sessions: sessionmaker[Session],
    config: WorkerConfig,
    make_user: Any,
    make_task: MakeTask,
) -> None:
    backend = RayBackend(None, data_dir=config.data_dir, warm_per_node=1)
    runner = Scheduler(
        backend,
        sessions,
        config,
        lambda db, user: DataContext(config.data_dir),
        max_running_per_user=1,
        stop_timeout_s=20.0,
        poll_s=0.2,
        eager=True,
    )
    runner.start()
    try:
        assert warm_names() == set()
        alice = make_user("alice")
        first = final(sessions, make_task(alice, "first", graph=digits_graph(epochs=1)))
        assert first.status == TaskStatus.SUCCEEDED, first.error
        assert first.worker_ref is not None and not first.worker_ref.startswith(WARM_PREFIX)

        # The first task on the node started one warm worker for the next.
        [waiting] = wait_for(lambda: warm_names() or None, 60, "a warm worker")
        ready(waiting)
        second = final(sessions, make_task(alice, "second", graph=digits_graph(epochs=1)))
        assert second.status == TaskStatus.SUCCEEDED, second.error
        assert second.worker_ref == waiting
        assert any("in a warm worker" in message for message in status_messages(sessions, second))
        # Its actor ended with the attempt, and a new one waits in its place.
        wait_for(lambda: (waiting not in warm_names() and len(warm_names()) == 1) or None, 60, "a refill")
    finally:
        runner.shutdown()
    assert warm_names() == set()  # idle warm workers end with the backend


def test_a_previous_servers_idle_warm_workers_are_reaped_and_running_ones_kept(
    ray_cluster: None, config: WorkerConfig
) -> None:
    import ray

    gone = RayBackend(None, data_dir=config.data_dir, warm_per_node=2)
    gone.connect()
    node = str(ray.get_runtime_context().get_node_id())
    assert gone.claim_warm(node, Resources(1, 0)) is None  # none yet: two are started
    left = wait_for(lambda: warm_names() if len(warm_names()) == 2 else None, 60, "two warm workers")
    running, idle = sorted(left)
    # A server started after `gone` was killed: one of them runs an adopted attempt, one idles.
    fresh = RayBackend(None, data_dir=config.data_dir)
    fresh.connect()
    assert fresh.reap_idle_warm({running}) == 1
    wait_for(lambda: (idle not in warm_names()) or None, 30, "the idle one to be killed")
    assert running in warm_names()
    # A task with GPUs never takes a warm worker (Ray gives GPUs to an actor when it is created).
    assert gone.claim_warm(node, Resources(1, 1)) is None

"""Placement on a cluster of several nodes, against a fake backend: a task starts only where one node
holds it, waits with its reason otherwise, and a task whose node left is re-queued."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import TaskStatus
from dragdl.runner.base import Resources, WorkerConfig
from dragdl.runner.placement import Node, choose_node

from .conftest import MakeTask
from .test_scheduler import FakeBackend, end_by_worker, scheduler, status_of, statuses

SMALL = Node("node-small", "10.0.0.1", Resources(1, 0))
MEDIUM = Node("node-medium", "10.0.0.2", Resources(2, 0))
GPU = Node("node-gpu", "10.0.0.3", Resources(2, 1))


def test_a_task_larger_than_every_node_waits_even_when_the_cluster_in_all_could_hold_it(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    wide = make_task(make_user("alice"), "wide", resources={"cpus": 3.0, "gpus": 0.0})
    backend = FakeBackend(cluster=[SMALL, MEDIUM])  # 3 CPUs in all, at most 2 on one node
    runner = scheduler(backend, sessions, config)
    assert runner.capacity() == Resources(3, 0)
    runner.tick()
    assert backend.launched == []
    row = status_of(sessions, wide)
    assert row.status == TaskStatus.QUEUED and row.queued_reason is not None
    assert row.queued_reason["code"] == "no_node_fits"
    assert row.queued_reason["details"] == {
        "cpus": 3.0,
        "gpus": 0.0,
        "nodes": 2.0,
        "node_cpus": 2.0,
        "node_gpus": 0.0,
    }


def test_each_task_goes_to_a_node_with_room_and_the_tightest_fit_first(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    alice = make_user("alice", quota=10)
    one = make_task(alice, "one", resources={"cpus": 1.0, "gpus": 0.0})
    two = make_task(alice, "two", resources={"cpus": 2.0, "gpus": 0.0})
    gpu = make_task(alice, "gpu", resources={"cpus": 1.0, "gpus": 1.0})
    backend = FakeBackend(cluster=[SMALL, MEDIUM, GPU])
    runner = scheduler(backend, sessions, config)
    runner.tick()
    placed = {h.spec.task_id: h.spec.node_id for h in backend.launched}
    # `one` takes the 1-CPU node (the tightest fit), leaving the 2-CPU nodes for `two` and `gpu`.
    assert placed == {one.id: SMALL.id, two.id: MEDIUM.id, gpu.id: GPU.id}
    assert status_of(sessions, two).worker_node == MEDIUM.id
    assert "on node node-med" in next(e for e in _messages(sessions, two) if "starting" in e)


def _messages(sessions: sessionmaker[Session], task: Any) -> list[str]:
    from sqlalchemy import select

    from dragdl.db.models import TaskEvent

    with sessions() as db:
        rows = db.scalars(select(TaskEvent).where(TaskEvent.task_id == task.id, TaskEvent.kind == "status"))
        return [str(row.data.get("message", "")) for row in rows]


def test_a_waiting_task_keeps_the_nodes_that_could_hold_it_but_not_the_others(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    alice = make_user("alice", quota=10)
    busy = make_task(alice, "busy", resources={"cpus": 1.0, "gpus": 0.0})
    backend = FakeBackend(cluster=[SMALL, MEDIUM])
    runner = scheduler(backend, sessions, config)
    runner.tick()
    assert backend.launched[0].spec.node_id == SMALL.id
    # The medium node gets a task of 1 CPU, then a task of 2 waits for it; a later 1-CPU task may
    # not take its freed room, but runs on the small node once that is free.
    filler = make_task(alice, "filler", resources={"cpus": 1.0, "gpus": 0.0})
    runner.tick()
    assert backend.launched[1].spec.node_id == MEDIUM.id
    big = make_task(alice, "big", resources={"cpus": 2.0, "gpus": 0.0})
    late = make_task(alice, "late", resources={"cpus": 1.0, "gpus": 0.0})
    runner.tick()
    assert backend.names() == [busy.id, filler.id]
    assert status_of(sessions, big).queued_reason["code"] == "no_free_node"  # type: ignore[index]
    end_by_worker(sessions, backend.launched[0], TaskStatus.SUCCEEDED)  # the small node is free
    runner.tick()
    assert backend.names()[2:] == [late.id] and backend.launched[2].spec.node_id == SMALL.id
    end_by_worker(sessions, backend.launched[1], TaskStatus.SUCCEEDED)  # the medium node is free
    runner.tick()
    assert backend.names()[3:] == [big.id] and backend.launched[3].spec.node_id == MEDIUM.id


def test_a_user_at_the_running_limit_is_told_so(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    alice = make_user("alice", quota=1)
    make_task(alice, "first")
    second = make_task(alice, "second")
    runner = scheduler(FakeBackend(), sessions, config)
    runner.tick()
    reason = status_of(sessions, second).queued_reason
    assert reason is not None and reason["code"] == "running_limit" and reason["details"] == {"limit": 1.0}


def test_a_task_whose_node_left_is_requeued_and_resumes_elsewhere_without_using_a_retry(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    task = make_task(make_user("alice"), resources={"cpus": 1.0, "gpus": 0.0}, max_attempts=3)
    backend = FakeBackend(cluster=[SMALL])
    runner = scheduler(backend, sessions, config)
    runner.tick()
    assert backend.launched[0].spec.node_id == SMALL.id
    # The node goes away with its worker; another node has joined meanwhile.
    backend.cluster = [MEDIUM]
    backend.launched[0].ended = ("died", "worker process died: node died")
    runner.tick()
    row = status_of(sessions, task)
    assert row.status == TaskStatus.RUNNING and row.resume and row.attempts == 2
    assert row.max_attempts == 4  # the lost node spared the attempt
    assert backend.launched[1].spec.node_id == MEDIUM.id
    assert statuses(sessions, task) == ["RUNNING", "QUEUED", "RUNNING"]
    assert any("node-sma" in m and "left the cluster" in m for m in _messages(sessions, task))


def test_a_worker_that_died_on_a_live_node_uses_a_retry_as_before(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    task = make_task(make_user("alice"), max_attempts=3)
    backend = FakeBackend(cluster=[SMALL])
    runner = scheduler(backend, sessions, config)
    runner.tick()
    backend.launched[0].ended = ("died", "worker process died: SIGKILL")
    runner.tick()
    row = status_of(sessions, task)
    assert row.attempts == 2 and row.max_attempts == 3
    assert any("worker lost" in m for m in _messages(sessions, task))


def test_choose_node_prefers_the_least_room_left_and_skips_kept_nodes() -> None:
    need = Resources(1, 0)
    nodes = [MEDIUM, SMALL, GPU]
    assert choose_node(need, nodes, {}, set()) == SMALL
    assert choose_node(need, nodes, {SMALL.id: Resources(1, 0)}, set()) == MEDIUM  # GPU node kept free
    assert choose_node(need, nodes, {}, {SMALL.id, MEDIUM.id}) == GPU
    assert choose_node(Resources(1, 1), nodes, {}, set()) == GPU
    assert choose_node(Resources(3, 0), nodes, {}, set()) is None


@dataclass
class SilentClusterBackend(FakeBackend):
    """A cluster whose control store stops answering for node lists."""

    answering: bool = True

    def nodes(self) -> list[Node]:
        if not self.answering:
            raise ConnectionError("the cluster's control store did not answer")
        return super().nodes()


def test_a_pass_goes_on_with_the_last_nodes_read_when_the_cluster_does_not_answer(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    backend = SilentClusterBackend(cluster=[MEDIUM])
    runner = scheduler(backend, sessions, config)
    backend.answering = False
    task = make_task(make_user("alice"))
    runner.tick()
    assert backend.names() == [task.id] and backend.launched[0].spec.node_id == MEDIUM.id


def ddp_graph(workers: int, cpus: float = 1.0) -> dict[str, Any]:
    from tests.graphs import chain

    train = {"epochs": 1, "device": "cpu", "workers": workers, "cpus_per_worker": cpus}
    return chain(
        "DDP",
        [
            ("data", "dataset.builtin", {"name": "digits"}),
            ("flatten", "layer.Flatten", {}),
            ("dense", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", train),
        ],
    )


def test_a_distributed_run_needs_room_for_each_worker_on_some_node_not_one_node_for_all(
    sessions: sessionmaker[Session], config: WorkerConfig, make_user: Any, make_task: MakeTask
) -> None:
    alice = make_user("alice", quota=10)
    # 3 workers of 1 CPU: no node holds all three, the small and medium nodes together do.
    spread = make_task(alice, "spread", graph=ddp_graph(3))
    # 2 workers of 2 CPUs: each fits the medium or GPU node, but both are taken by now.
    later = make_task(alice, "later", graph=ddp_graph(2, cpus=2.0))
    # 4 workers of 3 CPUs: no node holds even one.
    never = make_task(alice, "never", graph=ddp_graph(4, cpus=3.0))
    backend = FakeBackend(cluster=[SMALL, MEDIUM, GPU])
    runner = scheduler(backend, sessions, config)
    runner.tick()
    (handle,) = backend.launched
    assert handle.spec.task_id == spread.id
    # Its own process only drives the workers (Ray Train starts them): it holds nothing.
    assert handle.spec.resources == Resources(0, 0)
    started = next(m for m in _messages(sessions, spread) if "starting" in m)
    assert "workers with room on node(s) node-sma (1 CPU), node-med (2 CPUs)" in started

    waiting = status_of(sessions, later)
    assert waiting.queued_reason is not None and waiting.queued_reason["code"] == "no_room_for_workers"
    too_big = status_of(sessions, never)
    assert too_big.queued_reason is not None and too_big.queued_reason["code"] == "workers_do_not_fit"
    assert too_big.queued_reason["details"]["room"] == 0.0
    assert "4 workers of 3 CPUs" in too_big.queued_reason["message"]


def test_choose_nodes_packs_workers_onto_the_tightest_nodes_and_counts_what_each_holds() -> None:
    from dragdl.runner.placement import Workers, can_ever_hold_workers, choose_nodes

    nodes = [SMALL, MEDIUM, GPU]
    two = Workers(2, Resources(1, 0))
    assert [n.id for n in choose_nodes(two, nodes, {}, set()) or []] == [SMALL.id, MEDIUM.id]
    busy = {MEDIUM.id: Resources(2, 0)}
    assert [n.id for n in choose_nodes(two, nodes, busy, set()) or []] == [SMALL.id, GPU.id]
    assert choose_nodes(Workers(6, Resources(1, 0)), nodes, {}, set()) is None
    assert can_ever_hold_workers(Workers(5, Resources(1, 0)), nodes) == nodes
    assert can_ever_hold_workers(Workers(6, Resources(1, 0)), nodes) == []
    gpus = Workers(2, Resources(1, 1))
    assert can_ever_hold_workers(gpus, nodes) == []  # one GPU in the cluster

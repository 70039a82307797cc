"""Where a task runs: the node of the cluster that holds its CPUs and GPUs, or why none does.

A task's worker is one process, so it must fit on one node: the cluster's total resources say
nothing about that (two nodes of 2 CPUs do not hold a task of 4). A distributed run's workers
(`Workers`) are processes of their own: each must fit on a node, and together on the cluster. The
scheduler reads each alive node's total resources every pass (nodes join and leave), subtracts what
its own workers declared there, and pins the worker to the node chosen here.

Why a task still waits is a `QueuedReason`: a code the web UI words in the reader's language, the
figures it needs, and an English message for the API and logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dragdl.runner.base import Resources


@dataclass(frozen=True)
class Node:
    """An alive node of the cluster and what it offers to tasks."""

    id: str
    address: str
    total: Resources


QueuedCode = Literal[
    "no_node_fits", "no_free_node", "workers_do_not_fit", "no_room_for_workers", "running_limit"
]
"""no_node_fits: no node of the cluster could hold the task even idle (it waits for one to join);
no_free_node: nodes that can hold it are busy (or kept for a task ahead of it in line);
workers_do_not_fit / no_room_for_workers: the same for the workers of a distributed run;
running_limit: its owner has as many tasks running as allowed."""


def free_on(node: Node, used: Mapping[str, Resources]) -> Resources:
    taken = used.get(node.id, Resources())
    return Resources(node.total.cpus - taken.cpus, node.total.gpus - taken.gpus)


def can_ever_hold(need: Resources, nodes: Iterable[Node]) -> list[Node]:
    """The nodes that could hold the task when idle."""
    return [node for node in nodes if need.fits_in(node.total)]


def choose_node(
    need: Resources, nodes: Iterable[Node], used: Mapping[str, Resources], kept: set[str]
) -> Node | None:
    """The node to start the task on, or None when none has room now.

    Nodes in `kept` are held for a task earlier in line. Among the others the tightest fit wins
    (the least CPUs left over, then GPUs), so that large free nodes stay free for large tasks.
    """
    candidates = [node for node in nodes if node.id not in kept and need.fits_in(free_on(node, used))]
    if not candidates:
        return None

    def leftover(node: Node) -> tuple[float, float, str]:
        room = free_on(node, used)
        return (room.gpus - need.gpus, room.cpus - need.cpus, node.id)

    return min(candidates, key=leftover)


@dataclass(frozen=True)
class Workers:
    """A distributed run's workers: `count` processes of `each`, each on any node with room (Ray
    Train places them); the task's own worker only drives them and holds nothing."""

    count: int
    each: Resources

    @property
    def total(self) -> Resources:
        return Resources(self.each.cpus * self.count, self.each.gpus * self.count)


def slots(capacity: Resources, each: Resources) -> int:
    """How many workers of `each` fit in `capacity`."""
    eps = 1e-9
    counts = [int((capacity.cpus + eps) // each.cpus)] if each.cpus > 0 else []
    if each.gpus > 0:
        counts.append(int((capacity.gpus + eps) // each.gpus))
    return max(0, min(counts)) if counts else 1_000_000


def can_ever_hold_workers(workers: Workers, nodes: Iterable[Node]) -> list[Node]:
    """The nodes that could hold some of the workers when idle; empty when all of the cluster's
    idle nodes together could not hold them all."""
    holders = [node for node in nodes if workers.each.fits_in(node.total)]
    room = sum(slots(node.total, workers.each) for node in holders)
    return holders if room >= workers.count else []


def choose_nodes(
    workers: Workers, nodes: list[Node], used: Mapping[str, Resources], kept: set[str]
) -> list[Node] | None:
    """A node for each worker (the tightest fit each time, so workers pack onto few nodes), or None
    when the free room of the nodes not kept cannot hold them all now."""
    taken = dict(used)
    chosen: list[Node] = []
    for _ in range(workers.count):
        node = choose_node(workers.each, nodes, taken, kept)
        if node is None:
            return None
        chosen.append(node)
        taken[node.id] = taken.get(node.id, Resources()) + workers.each
    return chosen


def _count(value: float, unit: str) -> str:
    """`value` of `unit` ("CPUs", "GPUs", "workers"), singular for exactly one."""
    return f"{value:g} {unit.removesuffix('s') if value == 1 else unit}"


@dataclass(frozen=True)
class QueuedReason:
    code: QueuedCode
    message: str
    details: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


def no_node_fits(need: Resources, nodes: list[Node]) -> QueuedReason:
    """No node holds the task even idle: say what it needs and what the largest nodes have."""
    most_cpus = max((node.total.cpus for node in nodes), default=0.0)
    most_gpus = max((node.total.gpus for node in nodes), default=0.0)
    wanted = f"{_count(need.cpus, 'CPUs')} and {_count(need.gpus, 'GPUs')} on one node"
    if not nodes:
        message = f"the task needs {wanted}; the cluster has no node"
    else:
        message = (
            f"the task needs {wanted}; the largest of the cluster's {len(nodes)} node(s) has "
            f"{_count(most_cpus, 'CPUs')}, and the most GPUs on one node is {most_gpus:g}. "
            "It starts when a node that can hold it joins"
        )
    details = {
        "cpus": need.cpus,
        "gpus": need.gpus,
        "nodes": float(len(nodes)),
        "node_cpus": most_cpus,
        "node_gpus": most_gpus,
    }
    return QueuedReason("no_node_fits", message, details)


def no_nodes_fit_workers(workers: Workers, nodes: list[Node]) -> QueuedReason:
    """The cluster, even idle, cannot hold all the workers of a distributed run."""
    each = f"{_count(workers.each.cpus, 'CPUs')} and {_count(workers.each.gpus, 'GPUs')}"
    room = sum(slots(node.total, workers.each) for node in nodes if workers.each.fits_in(node.total))
    message = (
        f"the task needs {workers.count} workers of {each} each; the cluster's {len(nodes)} node(s) "
        f"hold {_count(room, 'such workers')}. It starts when nodes with room join"
    )
    details = {
        "cpus": workers.each.cpus,
        "gpus": workers.each.gpus,
        "workers": float(workers.count),
        "room": float(room),
        "nodes": float(len(nodes)),
    }
    return QueuedReason("workers_do_not_fit", message, details)


def no_room_for_workers(workers: Workers) -> QueuedReason:
    each = f"{_count(workers.each.cpus, 'CPUs')} and {_count(workers.each.gpus, 'GPUs')}"
    message = f"waiting for room for {workers.count} workers of {each} each on the cluster's nodes"
    details = {"cpus": workers.each.cpus, "gpus": workers.each.gpus, "workers": float(workers.count)}
    return QueuedReason("no_room_for_workers", message, details)


def no_free_node(need: Resources, holders: int) -> QueuedReason:
    message = (
        f"waiting for {_count(need.cpus, 'CPUs')} and {_count(need.gpus, 'GPUs')} to be free on one "
        f"node: the {holders} node(s) that can hold the task are busy or kept for earlier tasks"
    )
    return QueuedReason("no_free_node", message, {"cpus": need.cpus, "gpus": need.gpus})


def running_limit(limit: int) -> QueuedReason:
    message = f"waiting: {limit} of the owner's tasks are running, as many as allowed at once"
    return QueuedReason("running_limit", message, {"limit": float(limit)})

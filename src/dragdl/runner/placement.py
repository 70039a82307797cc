"""Where a task runs: the node of the cluster that holds its CPUs and GPUs, or why none does.

A task's worker is one process, so it must fit on one node: the cluster's total resources say
nothing about that (two nodes of 2 CPUs do not hold a task of 4). The scheduler reads each alive
node's total resources every pass (nodes join and leave), subtracts what its own workers declared
there, and pins the worker to the node chosen here.

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


QueuedCode = Literal["no_node_fits", "no_free_node", "running_limit"]
"""no_node_fits: no node of the cluster could hold the task even idle (it waits for one to join);
no_free_node: nodes that can hold it are busy (or kept for a task ahead of it in line);
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


def _count(value: float, unit: str) -> str:
    return f"{value:g} {unit}"


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


def no_free_node(need: Resources, holders: int) -> QueuedReason:
    message = (
        f"waiting for {_count(need.cpus, 'CPUs')} and {_count(need.gpus, 'GPUs')} to be free on one "
        f"node: the {holders} node(s) that can hold the task are busy or kept for earlier tasks"
    )
    return QueuedReason("no_free_node", message, {"cpus": need.cpus, "gpus": need.gpus})


def running_limit(limit: int) -> QueuedReason:
    message = f"waiting: {limit} of the owner's tasks are running, as many as allowed at once"
    return QueuedReason("running_limit", message, {"limit": float(limit)})

"""What a task asks of the cluster, read from its row and graph, and where it can have it.

A task's own worker process needs its declared CPUs and GPUs on one node (`Demand.own`). A
distributed run's (a train node with `workers` > 1) only drives Ray Train's workers and holds
nothing itself; each of its workers needs `cpus_per_worker`/`gpus_per_worker` on some node
(`Demand.workers`). The scheduler asks a `Demand` which nodes could hold it, where it starts now
(`Placed`: the node of its process and what it holds on each node), and why it waits otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dragdl.runner.base import Resources
from dragdl.runner.placement import (
    Node,
    QueuedReason,
    Workers,
    can_ever_hold,
    can_ever_hold_workers,
    choose_node,
    choose_nodes,
    no_free_node,
    no_node_fits,
    no_nodes_fit_workers,
    no_room_for_workers,
)


@dataclass(frozen=True)
class Placed:
    node: Node
    """Where the task's own process runs."""
    held: dict[str, Resources]
    """What the task holds on each node (its process's, or its workers')."""


@dataclass(frozen=True)
class Demand:
    own: Resources
    """What the task's own process holds (nothing for a distributed run)."""
    workers: Workers | None = None

    def holders(self, nodes: list[Node]) -> list[Node]:
        """The nodes that could hold it (or some of its workers) when idle; empty when it never fits."""
        if self.workers is not None:
            return can_ever_hold_workers(self.workers, nodes)
        return can_ever_hold(self.own, nodes)

    def never_fits(self, nodes: list[Node]) -> QueuedReason:
        if self.workers is not None:
            return no_nodes_fit_workers(self.workers, nodes)
        return no_node_fits(self.own, nodes)

    def waits(self, holders: int) -> QueuedReason:
        if self.workers is not None:
            return no_room_for_workers(self.workers)
        return no_free_node(self.own, holders)

    def place(self, nodes: list[Node], used: dict[str, Resources], kept: set[str]) -> Placed | None:
        """Where it starts now (the tightest fits, outside the nodes `kept` for tasks ahead of it),
        or None when the free room does not hold it."""
        if self.workers is None:
            node = choose_node(self.own, nodes, used, kept)
            return None if node is None else Placed(node, {node.id: self.own})
        chosen = choose_nodes(self.workers, nodes, used, kept)
        if not chosen:
            return None
        held: dict[str, Resources] = {}
        for node in chosen:  # the first worker's node first: the task's process runs there
            held[node.id] = held.get(node.id, Resources()) + self.workers.each
        return Placed(chosen[0], held)


def demand_of(declared: dict[str, Any], graph: dict[str, Any], nodes: list[Node]) -> Demand:
    """The demand of a task declaring `declared` resources (its row's) for `graph`."""
    workers = distributed_workers(graph)
    if workers is not None:
        return Demand(Resources(), workers)
    return Demand(needed(declared, graph, nodes))


def needed(declared: dict[str, Any], graph: dict[str, Any], nodes: list[Node]) -> Resources:
    """CPUs and GPUs a task declares; `gpus: null` (device auto) means one GPU when a node has one."""
    gpus = declared.get("gpus")
    if gpus is None:
        has_gpu = any(node.total.gpus >= 1 for node in nodes)
        gpus = 1.0 if train_device(graph) != "cpu" and has_gpu else 0.0
    return Resources(float(declared.get("cpus", 1.0)), float(gpus))


def distributed_workers(graph: dict[str, Any]) -> Workers | None:
    """The workers the train node asks for when it trains on more than one (`workers` > 1)."""
    params = _train_params(graph)
    try:
        count = int(params.get("workers", 1))
        each = Resources(float(params.get("cpus_per_worker", 1.0)), float(params.get("gpus_per_worker", 0.0)))
    except (TypeError, ValueError):  # checked at submission; an old snapshot trains in one process
        return None
    return Workers(count, each) if count > 1 else None


def train_device(graph: dict[str, Any]) -> str:
    return str(_train_params(graph).get("device", "auto"))


def _train_params(graph: dict[str, Any]) -> dict[str, Any]:
    from dragdl.engine.nodes.train_node import find_train_node

    found = find_train_node(graph)
    params = found[0].get("params") if found is not None else None
    return params if isinstance(params, dict) else {}

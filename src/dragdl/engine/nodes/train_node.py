"""The one way to find a graph's train node (and so its task kind) in raw graph JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dragdl.engine.nodes.base import TrainNode
from dragdl.engine.nodes.registry import get_node_type


def find_train_node(graph: Mapping[str, Any]) -> tuple[dict[str, Any], TrainNode[Any]] | None:
    """The first node whose type is a registered train node, with that type; None when there is none.

    Services, the scheduler and the worker read stored graphs as JSON; they ask here instead of
    matching type names, so a new train node type is found everywhere.
    """
    nodes = graph.get("nodes")
    if not isinstance(nodes, list):
        return None
    for node in nodes:
        if not isinstance(node, dict):
            continue
        kind = get_node_type(str(node.get("type", "")))
        if isinstance(kind, TrainNode):
            return node, kind
    return None

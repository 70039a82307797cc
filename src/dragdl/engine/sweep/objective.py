"""A sweep's objective: a validation metric of the graph's task kind, and which way is better."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dragdl.engine.nodes.train_node import find_train_node
from dragdl.engine.sweep.study import Direction


def objectives(graph: Mapping[str, Any]) -> list[str]:
    """The validation metrics a sweep of this graph may optimise (its train node's kind), best first."""
    found = find_train_node(graph)
    if found is None:
        return []
    task = found[1].task
    return [f"val_{name}" for name in (*task.metrics, "loss")]


def direction(graph: Mapping[str, Any], objective: str) -> Direction:
    """Maximise the metrics the task kind says are better higher (accuracy, R²), minimise the rest."""
    found = find_train_node(graph)
    if found is None or objective not in objectives(graph):
        raise ValueError(f"objective {objective!r} is not one of {objectives(graph)}")
    base = objective.removeprefix("val_")
    return "maximize" if base in found[1].task.higher_is_better else "minimize"

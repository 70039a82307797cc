"""Graphs for tests, written as the chain of nodes most of them are."""

from __future__ import annotations

import itertools
from typing import Any


def chain(name: str, nodes: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """A graph of `nodes` (id, type, params), each feeding the next."""
    return {
        "version": 1,
        "name": name,
        "nodes": [{"id": i, "type": t, "params": p} for i, t, p in nodes],
        "edges": [{"source": a[0], "target": b[0]} for a, b in itertools.pairwise(nodes)],
    }

"""The graph the canvas saves and the server receives (ARCHITECTURE.md section 2).

A graph is data: node types, JSON params and edges. No code, no pickles.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.graph.search import SearchSection

GRAPH_VERSION: Literal[1] = 1
NODE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


class Position(BaseModel):
    model_config = ConfigDict(extra="forbid")

    x: float = 0.0
    y: float = 0.0


class Node(BaseModel):
    """One node on the canvas. `params` is checked against the node type's params model later."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=NODE_ID_PATTERN, description="Unique id within the graph.")
    type: str = Field(min_length=1, max_length=100, description="Catalog type, e.g. 'layer.Conv2d'.")
    params: dict[str, Any] = Field(default_factory=dict)
    position: Position | None = None
    label: str | None = Field(default=None, max_length=200, description="Optional display name.")


class Edge(BaseModel):
    """A connection from one node's output port to another node's input port.

    The handles name the ports; they may be omitted when the node has a single port on that side.
    For multi-input nodes (Add, Concat) the order of edges in the graph is the input order.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str | None = Field(default=None, max_length=200)
    source: str = Field(pattern=NODE_ID_PATTERN)
    target: str = Field(pattern=NODE_ID_PATTERN)
    source_handle: str | None = Field(default=None, alias="sourceHandle", max_length=64)
    target_handle: str | None = Field(default=None, alias="targetHandle", max_length=64)


class Graph(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = GRAPH_VERSION
    name: str = Field(default="Untitled", max_length=200)
    description: str = Field(default="", max_length=5000)
    nodes: list[Node] = Field(default_factory=list, max_length=2000)
    edges: list[Edge] = Field(default_factory=list, max_length=10000)
    search: SearchSection | None = Field(
        default=None,
        description="Params a sweep searches: node id -> param -> range or choices. A plain run "
        "trains with the nodes' own values.",
    )

    def node(self, node_id: str) -> Node:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)


def graph_json_schema() -> dict[str, Any]:
    return Graph.model_json_schema(by_alias=True)


def load_graph_file(path: Path) -> dict[str, Any]:
    """Read a graph file as raw JSON data; validation turns it into a `Graph`."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a graph must be a JSON object, got {type(data).__name__}")
    return data

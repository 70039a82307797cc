from __future__ import annotations

from typing import Any

from fastapi import APIRouter

router = APIRouter(prefix="/api", tags=["catalog"])


@router.get("/catalog", operation_id="getCatalog")
def get_catalog() -> list[dict[str, Any]]:
    """Every node type with its ports and the JSON Schema of its params (drives palette and forms)."""
    from dragdl.engine.nodes.registry import catalog

    return catalog()


@router.get("/schema/graph", operation_id="getGraphSchema")
def get_graph_schema() -> dict[str, Any]:
    """The JSON Schema of the graph format."""
    from dragdl.engine.graph.spec import graph_json_schema

    return graph_json_schema()

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from dragdl.server.deps import SettingsDep

router = APIRouter(prefix="/api/graphs", tags=["graphs"])


@router.post("/validate", operation_id="validateGraph")
def validate(settings: SettingsDep, graph: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    """Validate a graph: every error with its node and field, and every node's inferred output shape.

    Validation problems are the answer, not a failed request, so this returns 200 with `ok: false`.
    """
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.graph.validate import validate_graph

    ctx = DataContext(data_dir=settings.data_dir, allow_download=False)
    return validate_graph(graph, ctx).model_dump(mode="json")

"""Stage 7: a cap on the network's parameter count, checked before anything is built.

Each layer is built on PyTorch's meta device, which records shapes and allocates no memory, so a
graph asking for billions of parameters is refused here (by the canvas, the CLI, the code
generator, tasks and sweeps alike) instead of exhausting the memory of whatever builds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from dragdl.engine.graph.errors import GraphError, NodeError
from dragdl.engine.nodes.base import LayerNode

if TYPE_CHECKING:
    from dragdl.engine.analysis.validate import Analysis

MAX_PARAMETERS = 200_000_000
"""The most parameters a graph's layers may hold together (float32: 800 MB of weights, before
gradients and optimizer state)."""


def layer_parameters(analysis: Analysis) -> dict[str, int]:
    """The parameter count of every layer node whose input shapes are known, built on meta."""
    structure = analysis.structure
    counts: dict[str, int] = {}
    for node_id in structure.order:
        info = structure.nodes[node_id]
        kind = info.kind
        sources = structure.inputs[node_id]
        if not isinstance(kind, LayerNode) or info.params is None or node_id not in analysis.shapes:
            continue
        in_shapes = [analysis.shapes[source] for source in sources]
        try:
            with torch.device("meta"):
                module = kind.build(info.params, in_shapes, analysis.shape_context(node_id))
        except (NodeError, RuntimeError, NotImplementedError):
            continue  # a layer that cannot be built is reported when it is compiled
        counts[node_id] = sum(p.numel() for p in module.parameters())
    return counts


def check_size(analysis: Analysis, limit: int | None = None) -> None:
    """Refuse a network whose layers hold more than `limit` parameters (default MAX_PARAMETERS),
    on the layer node holding the most."""
    limit = MAX_PARAMETERS if limit is None else limit
    counts = layer_parameters(analysis)
    total = sum(counts.values())
    if total <= limit:
        return
    largest = max(counts, key=lambda node_id: counts[node_id])
    share = counts[largest] / total
    label = analysis.structure.nodes[largest].label
    analysis.errors.append(
        GraphError(
            code="model_too_large",
            message=(
                f"the network has {total:,} parameters, over the limit of {limit:,}; {label} holds "
                f"{counts[largest]:,} of them ({share:.1%}): make its layers narrower"
            ),
            node_id=largest,
            details={
                "requested": f"{total:,}",
                "limit": f"{limit:,}",
                "largest": f"{counts[largest]:,}",
                "share": round(share * 100, 1),
                "total": total,
            },
        )
    )

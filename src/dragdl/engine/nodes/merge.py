"""Layer nodes with several inputs, so residual and branching blocks can be drawn."""

from __future__ import annotations

import torch
from torch import nn

from dragdl.engine.graph.errors import NodeError
from dragdl.engine.nodes.base import EmptyParams, LayerNode, Shape, ShapeContext, format_shape
from dragdl.engine.nodes.registry import Port, register


class AddModule(nn.Module):
    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        total = inputs[0]
        for tensor in inputs[1:]:
            total = total + tensor
        return total


class ConcatModule(nn.Module):
    """Concatenates along the channel (or feature) dimension, i.e. dim 1 of the batch."""

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        return torch.cat(inputs, dim=1)


def _describe_inputs(inputs: list[Shape], ctx: ShapeContext) -> str:
    parts = []
    for i, shape in enumerate(inputs):
        source = f" (from {ctx.input_nodes[i]})" if i < len(ctx.input_nodes) else ""
        parts.append(f"{format_shape(shape)}{source}")
    return ", ".join(parts)


def _need_two(node: LayerNode[EmptyParams], inputs: list[Shape]) -> None:
    if len(inputs) < 2:
        raise NodeError(
            "missing_input",
            f"{node.title} needs at least 2 inputs, got {len(inputs)}",
            inputs=len(inputs),
        )


@register
class Add(LayerNode[EmptyParams]):
    type = "layer.Add"
    title = "Add"
    description = (
        "Adds its inputs element-wise (a residual / skip connection). All inputs must have one shape."
    )
    params_model = EmptyParams
    inputs = (Port("in", ("images", "table", "tensor"), multiple=True, label="inputs"),)

    def infer(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        _need_two(self, inputs)
        first = inputs[0]
        for shape in inputs[1:]:
            if len(shape) != len(first) or any(
                a is not None and b is not None and a != b for a, b in zip(shape, first, strict=True)
            ):
                raise NodeError(
                    "shape_mismatch",
                    f"Add needs inputs of equal shape, got {_describe_inputs(inputs, ctx)}",
                    shapes=[format_shape(s) for s in inputs],
                )
        return tuple(
            next((shape[i] for shape in inputs if shape[i] is not None), None) for i in range(len(first))
        )

    def build(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> nn.Module:
        return AddModule()

    def codegen(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> str:
        return "Add()"


@register
class Concat(LayerNode[EmptyParams]):
    type = "layer.Concat"
    title = "Concat"
    description = (
        "Stacks its inputs along the channels (or features): shapes must agree except in that dimension. "
        "Inputs are taken in the order their edges were drawn."
    )
    params_model = EmptyParams
    inputs = (Port("in", ("images", "table", "tensor"), multiple=True, label="inputs"),)

    def infer(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        _need_two(self, inputs)
        first = inputs[0]
        rest_ok = all(
            len(shape) == len(first)
            and all(a is None or b is None or a == b for a, b in zip(shape[1:], first[1:], strict=True))
            for shape in inputs
        )
        if not rest_ok:
            raise NodeError(
                "shape_mismatch",
                "Concat needs inputs that agree in every dimension but the first (channels/features), "
                f"got {_describe_inputs(inputs, ctx)}",
                shapes=[format_shape(s) for s in inputs],
            )
        channels = [shape[0] for shape in inputs]
        total = None if any(c is None for c in channels) else sum(c for c in channels if c is not None)
        return (total, *first[1:])

    def build(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> nn.Module:
        return ConcatModule()

    def codegen(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> str:
        return "Concat()"

"""Activation layer nodes: element-wise non-linearities that keep the shape."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field
from torch import nn

from dragdl.engine.nodes.base import EmptyParams, LayerNode, Shape, ShapeContext
from dragdl.engine.nodes.calls import Call, nn_call
from dragdl.engine.nodes.registry import register


class _Activation(LayerNode[EmptyParams]):
    params_model = EmptyParams
    torch_module: ClassVar[type[nn.Module]]

    def infer(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        return inputs[0]

    def module(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        return nn_call(self.torch_module)


@register
class ReLU(_Activation):
    type = "layer.ReLU"
    title = "ReLU"
    description = "max(0, x): the default activation after Conv2d and hidden Linear layers."
    torch_module = nn.ReLU


@register
class GELU(_Activation):
    type = "layer.GELU"
    title = "GELU"
    description = "A smooth ReLU, common in modern networks."
    torch_module = nn.GELU


@register
class Sigmoid(_Activation):
    type = "layer.Sigmoid"
    title = "Sigmoid"
    description = "Squashes values into (0, 1)."
    torch_module = nn.Sigmoid


@register
class Tanh(_Activation):
    type = "layer.Tanh"
    title = "Tanh"
    description = "Squashes values into (-1, 1)."
    torch_module = nn.Tanh


class LeakyReLUParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    negative_slope: float = Field(
        0.01, ge=0.0, le=1.0, title="Negative slope", description="Slope for negative inputs."
    )


@register
class LeakyReLU(LayerNode[LeakyReLUParams]):
    type = "layer.LeakyReLU"
    title = "LeakyReLU"
    description = "Like ReLU but lets a small gradient through for negative inputs."
    params_model = LeakyReLUParams

    def infer(self, params: LeakyReLUParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        return inputs[0]

    def module(self, params: LeakyReLUParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        return nn_call(nn.LeakyReLU, params.negative_slope)

"""Point cloud layer nodes: the shared per-point MLP, global pooling over points and the T-Net
transform, PointNet's parts.

They take the `points` port (a dataset's N points of C channels) or a `tensor` of shape (N, C) from
another point layer, and give (N, C'): every point's new channels. Global pooling over points gives
(C,), after which Linear and the other flat layers follow. Each point is treated alike and the
pooling is symmetric, so a network of them does not depend on the order of the points.

Their modules (`network/point_layers.py`) import only torch: the exported script carries that
file's source once (`script_helpers`) and writes each layer as `SharedMLP(...)`, `PointTransform(...)`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.graph.errors import NodeError
from dragdl.engine.models.families import ScriptHelper
from dragdl.engine.network import point_layers as modules
from dragdl.engine.network.point_layers import GlobalPoolPoints, PointTransform, SharedMLP
from dragdl.engine.nodes.base import LayerNode, Shape, ShapeContext, format_shape
from dragdl.engine.nodes.calls import Call
from dragdl.engine.nodes.registry import Port, register
from dragdl.engine.nodes.sequence_layers import carried_module

_STRICT = ConfigDict(extra="forbid")
POINTS_IN = Port("in", ("points", "tensor"), label="points")
"""What a point layer takes: the dataset's clouds, or another point layer's (N, C)."""
LAYERS_HELPER = carried_module(modules, "the point cloud layers' modules")


def _points(node: LayerNode[Any], shape: Shape, ctx: ShapeContext) -> tuple[int | None, int]:
    """(N, C) of the input, or a NodeError saying what the layer expects and what it receives."""
    if len(shape) == 2 and shape[1] is not None:
        return shape[0], shape[1]
    hint = (
        "it must come before global pooling over points, which ends the cloud"
        if len(shape) == 1
        else "connect a point cloud dataset (or a point layer) to it"
    )
    source = f" from node {ctx.input_nodes[0]}" if ctx.input_nodes else ""
    raise NodeError(
        "shape_mismatch",
        f"{node.title} expects point clouds NxC (points x channels) but receives {format_shape(shape)}"
        f"{source}; {hint}",
        input_shape=format_shape(shape),
    )


class _PointLayer(LayerNode[Any]):
    inputs: ClassVar = (POINTS_IN,)

    def script_helpers(self, params: Any) -> tuple[ScriptHelper, ...]:
        return (LAYERS_HELPER,)


class SharedMLPParams(BaseModel):
    model_config = _STRICT
    out_channels: int = Field(
        64, ge=1, le=4096, title="Channels", description="Numbers each point gets from this layer."
    )
    batch_norm: bool = Field(
        True, title="Batch norm", description="Normalize each channel over the batch's points (BatchNorm)."
    )
    relu: bool = Field(True, title="ReLU", description="End with a ReLU activation.")


@register
class SharedMLPLayer(_PointLayer):
    type = "layer.SharedMLP"
    title = "Shared MLP (per point)"
    description = (
        "The same small layer applied to every point on its own (Conv1d with kernel 1, BatchNorm, "
        "ReLU): each point's channels become out_channels new ones."
    )
    params_model = SharedMLPParams

    def infer(self, params: SharedMLPParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        return (_points(self, inputs[0], ctx)[0], params.out_channels)

    def module(self, params: SharedMLPParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        _, channels = _points(self, inputs[0], ctx)
        options: dict[str, Any] = {}
        if not params.batch_norm:
            options["batch_norm"] = False
        if not params.relu:
            options["relu"] = False
        return Call(SharedMLP, "SharedMLP", (channels, params.out_channels), options)


class GlobalPoolPointsParams(BaseModel):
    model_config = _STRICT
    mode: Literal["max", "mean"] = Field(
        "max",
        title="Pooling",
        description="'max' keeps each channel's largest value over the points (PointNet's choice); "
        "'mean' averages it.",
    )


@register
class GlobalPoolPointsLayer(_PointLayer):
    type = "layer.GlobalPoolPoints"
    title = "Global pooling over points"
    description = (
        "Pools each channel over all points of the cloud, whatever their order: NxC becomes C "
        "features for Linear layers."
    )
    params_model = GlobalPoolPointsParams

    def infer(self, params: GlobalPoolPointsParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        return (_points(self, inputs[0], ctx)[1],)

    def module(self, params: GlobalPoolPointsParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        _points(self, inputs[0], ctx)
        return Call(GlobalPoolPoints, "GlobalPoolPoints", (params.mode,) if params.mode != "max" else ())


class TNetParams(BaseModel):
    model_config = _STRICT
    transform: Literal["input", "feature"] = Field(
        "input",
        title="Transform",
        description="'input' turns the x, y, z of every point (a 3x3 matrix); 'feature' transforms "
        "all channels of every point (a CxC matrix), after a shared MLP.",
    )
    width: int = Field(
        64,
        ge=4,
        le=256,
        title="Width",
        description="Channels of the T-Net's first layer (its others are 2, 16, 8 and 4 times this).",
    )
    regularization: float = Field(
        0.001,
        ge=0.0,
        le=10.0,
        title="Orthogonality weight",
        description="Adds this times ||I - A A^T||^2 to the training loss, keeping the learned matrix A "
        "close to a rotation (0: none).",
    )


@register
class TNetLayer(_PointLayer):
    type = "layer.TNet"
    title = "T-Net transform"
    description = (
        "Learns a matrix from the whole cloud and multiplies every point by it, so the network can "
        "undo a shape's pose (PointNet's input and feature transforms)."
    )
    params_model = TNetParams

    def _k(self, params: TNetParams, shape: Shape, ctx: ShapeContext) -> tuple[int, int]:
        _, channels = _points(self, shape, ctx)
        if params.transform == "input" and channels < 3:
            raise NodeError(
                "shape_mismatch",
                f"{self.title}: the input transform turns x, y, z, but the points have {channels} "
                "channel(s); use the feature transform",
                field="transform",
                input_shape=format_shape(shape),
            )
        return channels, 3 if params.transform == "input" else channels

    def adds_loss(self, params: TNetParams) -> bool:
        return params.regularization > 0

    def infer(self, params: TNetParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        self._k(params, inputs[0], ctx)
        return inputs[0]

    def module(self, params: TNetParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        channels, k = self._k(params, inputs[0], ctx)
        options: dict[str, Any] = {}
        if params.width != 64:
            options["width"] = params.width
        if params.regularization:
            options["regularization"] = params.regularization
        return Call(PointTransform, "PointTransform", (channels, k), options)

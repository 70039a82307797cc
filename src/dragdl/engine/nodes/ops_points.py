"""Point cloud operators: points -> points, each sample N points of x, y, z and any features.

Sample points and Normalize to unit sphere are deterministic (evaluation and prediction run them);
the random ones (`random = True`: rotation about the up axis, jitter, scaling, point dropout) run on
training samples only, drawing from the generator the pipeline seeds per sample.

Their modules (`data/point_ops.py`) import only torch: the exported script carries that file's
source once (`script_helpers`), as it carries the sequence operators'.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dragdl.engine.data import point_ops
from dragdl.engine.data.point_ops import (
    JitterPoints,
    NormalizePoints,
    RandomPointDropout,
    RandomRotatePoints,
    RandomScalePoints,
    SamplePoints,
)
from dragdl.engine.graph.errors import NodeError
from dragdl.engine.models.families import ScriptHelper
from dragdl.engine.nodes.base import EmptyParams, OpNode, Shape, format_shape
from dragdl.engine.nodes.calls import Call
from dragdl.engine.nodes.registry import Port, register
from dragdl.engine.nodes.sequence_layers import carried_module

_STRICT = ConfigDict(extra="forbid")
OPS_HELPER = carried_module(point_ops, "the point cloud operators' modules")


class PointOpNode(OpNode[Any]):
    """An operator on point clouds: its module takes a float (N, C) cloud (or a (B, N, C) batch)."""

    inputs: ClassVar = (Port("in", ("points",), label="points"),)
    outputs: ClassVar = (Port("out", ("points",), label="points"),)

    def infer(self, params: Any, shape: Shape) -> Shape:
        _points(self, shape)
        return shape

    def script_helpers(self, params: Any) -> tuple[ScriptHelper, ...]:
        return (OPS_HELPER,)


def _points(node: OpNode[Any], shape: Shape) -> tuple[int | None, int]:
    if len(shape) != 2 or shape[1] is None or shape[1] < 3:
        raise NodeError(
            "shape_mismatch",
            f"{node.title} expects point clouds NxC (points x channels, x, y, z first) but receives "
            f"{format_shape(shape)}",
            input_shape=format_shape(shape),
        )
    return shape[0], shape[1]


class SampleParams(BaseModel):
    model_config = _STRICT
    points: int = Field(
        1024, ge=1, le=100_000, title="Points", description="Points every cloud has afterwards."
    )


@register
class SamplePointsOp(PointOpNode):
    type = "op.SamplePoints"
    title = "Sample points"
    description = (
        "Brings every cloud to the same number of points: a larger one keeps points spread over it "
        "(farthest point sampling), a smaller one repeats its points. The result does not depend on "
        "the order of the points."
    )
    params_model = SampleParams

    def infer(self, params: SampleParams, shape: Shape) -> Shape:
        return (params.points, _points(self, shape)[1])

    def transform(self, params: SampleParams, shape: Shape) -> Call:
        return Call(SamplePoints, "SamplePoints", (params.points,))


@register
class NormalizePointsOp(PointOpNode):
    type = "op.NormalizePoints"
    title = "Normalize to unit sphere"
    description = (
        "Moves each cloud's centre to the origin and scales it so that its farthest point is at "
        "distance 1: shapes of any size and place look alike to the network."
    )
    params_model = EmptyParams

    def transform(self, params: EmptyParams, shape: Shape) -> Call:
        return Call(NormalizePoints, "NormalizePoints")


class RotateParams(BaseModel):
    model_config = _STRICT
    axis: Literal["x", "y", "z"] = Field(
        "z", title="Up axis", description="The axis the clouds are turned about (their up direction)."
    )
    max_degrees: float = Field(
        180.0,
        gt=0.0,
        le=180.0,
        title="Most degrees",
        description="Turn by a random angle up to this, either way (180: any angle).",
    )


@register
class RandomRotatePointsOp(PointOpNode):
    type = "op.RandomRotatePoints"
    title = "Random rotation (up axis)"
    description = (
        "Turns each cloud about its up axis by a random angle, so the model does not rely on which "
        "way a shape faces. Training only."
    )
    params_model = RotateParams
    random = True

    def transform(self, params: RotateParams, shape: Shape) -> Call:
        options: dict[str, Any] = {}
        if params.axis != "z":
            options["axis"] = params.axis
        if params.max_degrees != 180.0:
            options["max_degrees"] = params.max_degrees
        return Call(RandomRotatePoints, "RandomRotatePoints", (), options)


class JitterParams(BaseModel):
    model_config = _STRICT
    std: float = Field(
        0.01,
        gt=0.0,
        le=1.0,
        title="Noise strength",
        description="Standard deviation of each point's random offset, in the cloud's units.",
    )
    clip: float = Field(
        0.05, gt=0.0, le=10.0, title="Largest offset", description="No point moves further along an axis."
    )


@register
class JitterPointsOp(PointOpNode):
    type = "op.JitterPoints"
    title = "Jitter points"
    description = "Moves every point by a small random offset, as a scanner's noise would. Training only."
    params_model = JitterParams
    random = True

    def transform(self, params: JitterParams, shape: Shape) -> Call:
        return Call(JitterPoints, "JitterPoints", (params.std, params.clip))


class ScaleParams(BaseModel):
    model_config = _STRICT
    low: float = Field(0.8, gt=0.0, le=10.0, title="Smallest scale", description="Smallest factor drawn.")
    high: float = Field(1.25, gt=0.0, le=10.0, title="Largest scale", description="Largest factor drawn.")

    @model_validator(mode="after")
    def _ordered(self) -> ScaleParams:
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) must not be larger than high ({self.high})")
        return self


@register
class RandomScalePointsOp(PointOpNode):
    type = "op.RandomScalePoints"
    title = "Random scaling (points)"
    description = "Scales each cloud by a random factor between the two scales. Training only."
    params_model = ScaleParams
    random = True

    def transform(self, params: ScaleParams, shape: Shape) -> Call:
        return Call(RandomScalePoints, "RandomScalePoints", (params.low, params.high))


class DropoutParams(BaseModel):
    model_config = _STRICT
    max_ratio: float = Field(
        0.5,
        ge=0.0,
        lt=1.0,
        title="Largest share",
        description="Each cloud drops a random share of its points up to this.",
    )


@register
class RandomPointDropoutOp(PointOpNode):
    type = "op.RandomPointDropout"
    title = "Random point dropout"
    description = (
        "Drops a random share of each cloud's points (copies of its first point take their place, so "
        "its size stays), as parts of a scan go missing. Training only."
    )
    params_model = DropoutParams
    random = True

    def transform(self, params: DropoutParams, shape: Shape) -> Call:
        return Call(RandomPointDropout, "RandomPointDropout", (params.max_ratio,))

"""The point cloud dataset node, `dataset.points`: N points of x, y, z (and features) per sample, on
the `points` port.

The built-in set needs no files: synthetic shapes sampled on their surface (`data/point_builtin.py`),
generated from the node's seed when the run opens it; `describe` only states its facts.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.data.base import DataContext, DatasetInfo
from dragdl.engine.data.point_builtin import PointBuiltinName, describe_point_builtin, open_point_builtin
from dragdl.engine.data.points import PointSource
from dragdl.engine.inputs.base import InputType
from dragdl.engine.inputs.points import POINTS
from dragdl.engine.nodes.base import DatasetNode
from dragdl.engine.nodes.registry import register


class PointParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Literal["builtin"] = Field(
        "builtin",
        title="Point clouds",
        description="A built-in set ('builtin', chosen by Dataset), generated offline.",
    )
    name: PointBuiltinName = Field(
        "shapes",
        title="Dataset",
        description="With source 'builtin': 'shapes', spheres, cubes, cylinders, cones, tori and "
        "pyramids with points sampled on their surface, randomly scaled, turned and noisy (6 classes).",
    )
    points: int = Field(
        1024, ge=16, le=8192, title="Points per cloud", description="Points sampled on each shape."
    )
    per_class: int = Field(
        300, ge=10, le=2000, title="Clouds per class", description="Shapes generated of each class."
    )
    seed: int = Field(
        0,
        ge=0,
        le=2**31 - 1,
        title="Seed",
        description="The generator's seed: the same seed gives the same clouds on every machine.",
    )


@register
class PointDataset(DatasetNode[PointParams]):
    type = "dataset.points"
    title = "Point clouds"
    description = (
        "3-D point clouds: N points of x, y, z per sample, each with a class. A built-in set of "
        "synthetic shapes, generated offline from a seed."
    )
    params_model = PointParams
    input_type: ClassVar[InputType] = POINTS

    def describe(self, params: PointParams, ctx: DataContext) -> DatasetInfo:
        return describe_point_builtin(params.name, params.points, params.per_class)  # nothing generated

    def open(self, params: PointParams, ctx: DataContext) -> PointSource:
        return open_point_builtin(params.name, params.points, params.per_class, params.seed)

    def codegen(self, params: PointParams) -> str:
        # make_shapes and SHAPES are the carried data/point_shapes.py's (compile/codegen_points.py).
        return f"""# Synthetic shapes ({params.per_class} of each class) of {params.points} points each,
# generated from seed {params.seed} as the engine generates them.
values, labels = make_shapes({params.points}, {params.per_class}, {params.seed})
return values, labels, list(SHAPES), None
"""

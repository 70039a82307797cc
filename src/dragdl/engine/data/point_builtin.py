"""The built-in point cloud set, offline: `shapes`, synthetic shapes sampled on their
surface (`data/point_shapes.py`, which the exported script carries), generated from the
dataset node's seed when a run opens it and cached for the process; described without
generating anything.
"""

from __future__ import annotations

from functools import cache
from typing import Literal, get_args

import numpy as np

from dragdl.engine.data import point_shapes
from dragdl.engine.data.base import DatasetError, DatasetInfo
from dragdl.engine.data.point_shapes import SHAPES
from dragdl.engine.data.points import XYZ, PointSource, point_info

PointBuiltinName = Literal["shapes"]
POINT_BUILTIN_NAMES: tuple[str, ...] = get_args(PointBuiltinName)

__all__ = ["SHAPES", "describe_point_builtin", "make_shapes", "open_point_builtin"]


def describe_point_builtin(name: str, points: int, per_class: int) -> DatasetInfo:
    """Static facts; nothing is generated, so validation costs nothing."""
    if name not in POINT_BUILTIN_NAMES:
        raise DatasetError(
            f"unknown built-in point cloud set {name!r} (choose one of {', '.join(POINT_BUILTIN_NAMES)})",
            field="name",
        )
    return point_info(SHAPES, per_class * len(SHAPES), points, XYZ)


def open_point_builtin(name: str, points: int, per_class: int, seed: int) -> PointSource:
    """The set (shared by every caller in the process: treat its arrays as read-only)."""
    describe_point_builtin(name, points, per_class)
    values, labels = make_shapes(points, per_class, seed)
    return PointSource(values, labels, SHAPES)


@cache
def make_shapes(points: int, per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`point_shapes.make_shapes`, generated once per process for each (points, per_class, seed)."""
    return point_shapes.make_shapes(points, per_class, seed)

"""Point clouds in memory: `PointSource`, and the limits every point reader checks.

A point cloud is float32 (N, C): N points of C = 3 + F channels, its x, y, z coordinates first and
F per-point features after them (a normal, a colour, an intensity). A set of clouds of one size is
held as one float32 array (S, N, C) with an int64 class index per cloud.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dragdl.engine.data.base import DatasetError, DatasetInfo, Source

XYZ = 3
"""The coordinates every point starts with; channels after them are features."""


@dataclass(frozen=True)
class PointLimits:
    """What one point cloud file may hold. Checked from its header before anything is allocated."""

    max_points: int = 1_000_000
    max_channels: int = 64
    max_file_bytes: int = 64 * 2**20
    max_line_chars: int = 4096

    def check(self, where: str, what: str, value: int, limit: int) -> None:
        if value > limit:
            raise DatasetError(f"{where}: {value:,} {what} is over the limit of {limit:,}", code="too_large")


def point_info(classes: tuple[str, ...], count: int, points: int | None, channels: int) -> DatasetInfo:
    """What validation knows of a point cloud set: its classes, its count and one cloud's shape
    (N, C), N None when the clouds differ in size."""
    return DatasetInfo(classes=classes, channels=0, size=None, count=count, shape=(points, channels))


class PointSource(Source):
    """Point clouds of one size held in memory, each with a class."""

    def __init__(
        self,
        values: np.ndarray,
        labels: np.ndarray,
        classes: tuple[str, ...],
        test_indices: np.ndarray | None = None,
    ) -> None:
        if values.dtype != np.float32 or values.ndim != 3 or values.shape[2] < XYZ:
            raise ValueError(f"values must be float32 (S, N, 3 + F), got {values.dtype} {values.shape}")
        self.values = values
        self.labels = np.asarray(labels, dtype=np.int64)
        self.test_indices = test_indices
        count, points, channels = values.shape
        self.info = point_info(classes, count, points, channels)

    def __len__(self) -> int:
        return len(self.values)

    def cloud(self, index: int) -> np.ndarray:
        """Cloud `index`, (N, C)."""
        cloud: np.ndarray = self.values[index]
        return cloud

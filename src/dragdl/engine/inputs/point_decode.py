"""Decoding a prediction request's point cloud files: `.npy`, `.xyz`/`.pts`/`.txt`, `.off`, `.ply`.

The bytes go to the readers of `data/point_files.py` (numpy only, never unpickling), within the
request's `RequestLimits`: its clouds and its numbers in all, each file at most `MAX_FILE_BYTES`.
Every error names the file (and the line). A cloud with more channels than the model takes keeps
its first ones (x, y, z first: a .ply's normals or colours are left out for a model of
coordinates); one with fewer is refused.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.point_files import TEXT_SUFFIXES, read_npy, read_off, read_ply, read_text
from dragdl.engine.data.points import PointLimits
from dragdl.engine.inputs.base import RequestLimits
from dragdl.engine.inputs.sections import InputSpec

SUFFIXES = (".npy", *TEXT_SUFFIXES, ".off", ".ply")
MAX_FILE_BYTES = 64 * 2**20


def decode_points(name: str, data: bytes, spec: InputSpec, limits: RequestLimits) -> list[Tensor]:
    """The float32 (N_i, C) clouds of one uploaded file, C the model's channels."""
    suffix = Path(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise DatasetError(
            f"{name}: not a point cloud file (send {', '.join(SUFFIXES)} files)", code="file_type"
        )
    if len(data) > MAX_FILE_BYTES:
        raise DatasetError(f"{name}: larger than {MAX_FILE_BYTES:,} bytes", code="file_too_large")
    channels = spec.network_input[-1] if spec.network_input else None
    reader_limits = PointLimits(max_points=max(1, limits.max_values // max(1, channels or 3)))
    if suffix == ".npy":
        array = read_npy(name, data, reader_limits)
    elif suffix == ".off":
        array = read_off(name, data, reader_limits)
    elif suffix == ".ply":
        array = read_ply(name, data, reader_limits)
    else:
        array = read_text(name, data, reader_limits)
    clouds = array if array.ndim == 3 else array[None]
    if len(clouds) > limits.max_samples:
        raise DatasetError(
            f"{name}: {len(clouds):,} point clouds is over the limit of {limits.max_samples:,}",
            code="too_many_samples",
        )
    if clouds.size > limits.max_values:
        raise DatasetError(
            f"{name}: {clouds.size:,} numbers is over the limit of {limits.max_values:,}", code="too_large"
        )
    if clouds.shape[1] == 0:
        raise DatasetError(f"{name}: holds no points", code="bad_file")
    if channels is not None:
        if clouds.shape[2] < channels:
            raise DatasetError(
                f"{name}: {clouds.shape[2]} numbers per point, but the model takes {channels}",
                code="bad_file",
            )
        clouds = clouds[:, :, :channels]
    return [torch.from_numpy(np.ascontiguousarray(cloud, dtype=np.float32)) for cloud in clouds]

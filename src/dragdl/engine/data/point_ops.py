"""Torch modules of the point cloud operator nodes (`nodes/ops_points.py`). A sample is
float32 (N, C): N points, x, y, z first and any features after them; every module also
takes a batch (B, N, C), along the same axes. Only the coordinates are moved; features
ride along with their points.

This module imports only torch, so the exported training script can carry its source
and run without DragDL, as it does `data/sequence_ops.py`.

Random operators separate drawing their parameters (`make_params`) from applying them,
and draw from torch's default generator: the pipeline seeds it per sample from
(seed, epoch, position), so a run, its resume and the exported script see the same
augmentation.

SamplePoints does not depend on the order of the points it is given: it puts them in
a canonical order first (sorted by x, then y, then z), so a shuffled cloud gives the
same points and, through an order-invariant network, the same prediction.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor, nn

POINTS = -2
"""The points axis of a sample (N, C) and of a batch (B, N, C)."""
AXES = {"x": 0, "y": 1, "z": 2}


def _batched(x: Tensor) -> Tensor:
    return x if x.dim() == 3 else x.unsqueeze(0)


def canonical_order(x: Tensor) -> Tensor:
    """(B, N) indices that sort each cloud's points by x, then y, then z (a stable
    sort by z, then by y, then by x), whatever order they came in."""
    order = torch.arange(x.shape[1], device=x.device).expand(x.shape[0], -1)
    for axis in (2, 1, 0):
        keys = torch.gather(x[..., axis], 1, order)
        order = torch.gather(order, 1, torch.sort(keys, dim=1, stable=True).indices)
    return order


def farthest_points(xyz: Tensor, count: int) -> Tensor:
    """(B, count) indices of `count` points of each (B, N, 3) cloud, each the farthest
    from those already chosen, starting from the first."""
    batch, n, _ = xyz.shape
    chosen = torch.zeros(batch, count, dtype=torch.int64, device=xyz.device)
    nearest = torch.full((batch, n), float("inf"), dtype=xyz.dtype, device=xyz.device)
    rows = torch.arange(batch, device=xyz.device)
    last = torch.zeros(batch, dtype=torch.int64, device=xyz.device)
    for i in range(1, count):
        gap = ((xyz - xyz[rows, last][:, None, :]) ** 2).sum(-1)
        nearest = torch.minimum(nearest, gap)
        last = nearest.argmax(dim=1)
        chosen[:, i] = last
    return chosen


def sample_points(x: Tensor, count: int) -> Tensor:
    """Exactly `count` points: farthest point sampling from a larger cloud, its points
    repeated in turn for a smaller one; a cloud of `count` points is kept as it is."""
    n = x.shape[POINTS]
    if n == count:
        return x
    if n == 0:
        raise ValueError("a point cloud without points cannot be sampled")
    batch = _batched(x)
    order = canonical_order(batch)
    if n > count:
        far = farthest_points(_gather(batch, order)[..., :3], count)
        picked = torch.gather(order, 1, far)
    else:
        picked = order[:, torch.arange(count, device=x.device) % n]
    out = _gather(batch, picked)
    return out if x.dim() == 3 else out[0]


def _gather(x: Tensor, index: Tensor) -> Tensor:
    return torch.gather(x, 1, index[..., None].expand(-1, -1, x.shape[-1]))


class SamplePoints(nn.Module):
    """Every cloud to `count` points (farthest point sampling, or repetition)."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def forward(self, x: Tensor) -> Tensor:
        return sample_points(x, self.count)


def _with_xyz(x: Tensor, xyz: Tensor) -> Tensor:
    return xyz if x.shape[-1] == 3 else torch.cat([xyz, x[..., 3:]], dim=-1)


class NormalizePoints(nn.Module):
    """Moves each cloud's centroid to the origin and scales it so that its farthest
    point lies on the unit sphere."""

    def forward(self, x: Tensor) -> Tensor:
        xyz = x[..., :3] - x[..., :3].mean(dim=POINTS, keepdim=True)
        radius = xyz.norm(dim=-1, keepdim=True).amax(dim=POINTS, keepdim=True)
        return _with_xyz(x, xyz / radius.clamp_min(1e-12))


def rotate_about(x: Tensor, axis: int, angle: float) -> Tensor:
    """The coordinates turned by `angle` radians about `axis` (0, 1, 2: x, y, z)."""
    c, s = torch.cos(torch.tensor(angle)), torch.sin(torch.tensor(angle))
    a, b = [i for i in range(3) if i != axis]
    xyz = x[..., :3].clone()
    xyz[..., a] = c * x[..., a] - s * x[..., b]
    xyz[..., b] = s * x[..., a] + c * x[..., b]
    return _with_xyz(x, xyz)


class RandomRotatePoints(nn.Module):
    """Turns each cloud about the up axis by a random angle of at most `max_degrees`
    either way."""

    def __init__(
        self,
        axis: Literal["x", "y", "z"] = "z",
        max_degrees: float = 180.0,
    ) -> None:
        super().__init__()
        if axis not in AXES:
            raise ValueError(f"axis ({axis!r}) must be 'x', 'y' or 'z'")
        self.axis, self.max_degrees = axis, max_degrees

    def make_params(self) -> float:
        degrees = (torch.rand(()).item() * 2.0 - 1.0) * self.max_degrees
        return degrees * torch.pi / 180.0

    def forward(self, x: Tensor) -> Tensor:
        return rotate_about(x, AXES[self.axis], self.make_params())


class JitterPoints(nn.Module):
    """Moves every point by Gaussian noise of `std`, each offset clipped to `clip`."""

    def __init__(self, std: float, clip: float) -> None:
        super().__init__()
        self.std, self.clip = std, clip

    def make_params(self, x: Tensor) -> Tensor:
        # Drawn on the CPU, whose generator the pipeline seeds, whatever x's device.
        noise = torch.randn(x[..., :3].shape, dtype=x.dtype) * self.std
        return noise.clamp(-self.clip, self.clip).to(x.device)

    def forward(self, x: Tensor) -> Tensor:
        return _with_xyz(x, x[..., :3] + self.make_params(x))


class RandomScalePoints(nn.Module):
    """Scales each cloud's coordinates by one random factor in [low, high]."""

    def __init__(self, low: float, high: float) -> None:
        super().__init__()
        if not 0 < low <= high:
            raise ValueError(f"the scales ({low}, {high}) need 0 < low <= high")
        self.low, self.high = low, high

    def make_params(self) -> float:
        return self.low + torch.rand(()).item() * (self.high - self.low)

    def forward(self, x: Tensor) -> Tensor:
        return _with_xyz(x, x[..., :3] * self.make_params())


class RandomPointDropout(nn.Module):
    """Drops a random share of each cloud's points, up to `max_ratio`, putting copies
    of its first point in their place, so the cloud keeps its size (as PointNet++
    does)."""

    def __init__(self, max_ratio: float) -> None:
        super().__init__()
        if not 0.0 <= max_ratio < 1.0:
            raise ValueError(f"max_ratio ({max_ratio}) must be in [0, 1)")
        self.max_ratio = max_ratio

    def make_params(self, x: Tensor) -> Tensor:
        ratio = torch.rand(()).item() * self.max_ratio
        return (torch.rand(x.shape[:-1]) < ratio).to(x.device)

    def forward(self, x: Tensor) -> Tensor:
        dropped = self.make_params(x)
        first = x[..., :1, :].expand_as(x)
        return torch.where(dropped[..., None], first, x)

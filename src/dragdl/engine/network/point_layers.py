"""Torch modules of the point cloud layer nodes. Input and output are point-major,
(B, N, C): N points of C channels, as the dataset holds a cloud.

This module imports only torch, so the exported training script can carry its source
(`inspect.getsource`) and run without DragDL.

Every layer treats each point alike and pools with a symmetric function (max,
mean), so a network of them answers the same whatever the order of the points. The
convolutions run on (B, C, N) and hand back a transposed view, so that consecutive
layers transpose nothing in memory and the pooling reduces along the axis its input is
stored in.

A module that adds a term to the training loss (the T-Net's orthogonality
regulariser) keeps it in `added_loss` after its forward pass in training mode (None
otherwise); the task kind's step adds every such term to the loss
(`tasks/base.with_added_losses`).
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor, nn

POOLING = ("max", "mean")
"""The symmetric functions GlobalPoolPoints pools the points with."""


class SharedMLP(nn.Module):
    """The same small layer for every point: Conv1d with kernel 1, then BatchNorm and
    ReLU: (B, N, C_in) -> (B, N, C_out)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        batch_norm: bool = True,
        relu: bool = True,
    ) -> None:
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 1, bias=not batch_norm)
        self.norm = nn.BatchNorm1d(out_channels) if batch_norm else nn.Identity()
        self.act = nn.ReLU() if relu else nn.Identity()

    def forward(self, x: Tensor) -> Tensor:
        out: Tensor = self.act(self.norm(self.conv(x.transpose(1, 2))))
        return out.transpose(1, 2)


class GlobalPoolPoints(nn.Module):
    """Each channel's largest value (`max`) or mean (`mean`) over all points:
    (B, N, C) -> (B, C)."""

    def __init__(self, mode: Literal["max", "mean"] = "max") -> None:
        super().__init__()
        if mode not in POOLING:
            raise ValueError(f"mode ({mode!r}) must be 'max' or 'mean'")
        self.mode = mode

    def forward(self, x: Tensor) -> Tensor:
        channels = x.transpose(1, 2)  # (B, C, N): contiguous after a SharedMLP
        return channels.amax(dim=2) if self.mode == "max" else channels.mean(dim=2)


class PointTransform(nn.Module):
    """A T-Net: a small PointNet that predicts a k x k matrix from the whole cloud and
    multiplies the first k channels of every point by it (k = 3: the coordinates, the
    input transform; k = C: every channel, the feature transform). It starts as the
    identity. With `regularization` > 0, training adds
    regularization * ||I - A A^T||^2 (mean over the batch) to the loss, which keeps A
    close to a rotation."""

    added_loss: Tensor | None
    identity: Tensor

    def __init__(
        self,
        channels: int,
        k: int,
        width: int = 64,
        regularization: float = 0.0,
    ) -> None:
        super().__init__()
        if not 1 <= k <= channels:
            raise ValueError(f"k ({k}) must be between 1 and the {channels} channels")
        self.k, self.regularization = k, regularization
        self.features = nn.Sequential(
            SharedMLP(channels, width),
            SharedMLP(width, 2 * width),
            SharedMLP(2 * width, 16 * width),
            GlobalPoolPoints("max"),
        )
        self.head = nn.Sequential(
            # No BatchNorm here: a training batch of one cloud would have no spread.
            nn.Linear(16 * width, 8 * width),
            nn.ReLU(),
            nn.Linear(8 * width, 4 * width),
            nn.ReLU(),
            nn.Linear(4 * width, k * k),
        )
        last = self.head[-1]
        assert isinstance(last, nn.Linear)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.register_buffer("identity", torch.eye(k).flatten(), persistent=False)
        self.added_loss = None

    def forward(self, x: Tensor) -> Tensor:
        matrix = (self.head(self.features(x)) + self.identity).view(-1, self.k, self.k)
        self.added_loss = None
        if self.training and self.regularization > 0:
            gram = matrix @ matrix.transpose(1, 2)
            eye = torch.eye(self.k, dtype=gram.dtype, device=gram.device)
            error = ((gram - eye) ** 2).sum((1, 2)).mean()
            self.added_loss = self.regularization * error
        turned = torch.bmm(x[..., : self.k], matrix)
        if self.k == x.shape[-1]:
            return turned
        return torch.cat([turned, x[..., self.k :]], dim=-1)

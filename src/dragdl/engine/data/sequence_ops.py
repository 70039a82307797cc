"""Torch modules of the sequence operator nodes (`nodes/ops_sequence.py`). A sample is float32
(T, F), T steps of F features; every module also takes a batch (N, T, F), along the same axes.

This module imports only torch, so the exported training script can carry its source and run
without DragDL, as it does `network/sequence_layers.py`.

Random operators separate drawing their parameters (`make_params`) from applying them (the plain
functions below), and draw from torch's default generator, as torchvision's transforms do: the
pipeline seeds that generator per sample from (seed, epoch, position), so a run, its resume and
the exported script see the same augmentation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch
from torch import Tensor, nn
from torch.nn import functional

STEPS = -2
"""The time axis of a sample (T, F) and of a batch (N, T, F)."""


def feature_stats(steps: Tensor) -> tuple[Tensor, Tensor]:
    """Each feature's mean and standard deviation over (..., F) steps, every leading
    axis pooled (pass only valid steps: padding would pull the mean towards 0). Summed
    in float64, since a long recording has millions of steps; a constant feature's
    deviation is 1, so it is centred and never divided by zero."""
    flat = steps.reshape(-1, steps.shape[-1]).double()
    mean = flat.mean(dim=0)
    std = flat.std(dim=0, correction=0)
    std = torch.where(std > 1e-12, std, torch.ones_like(std))
    return mean.float(), std.float()


class StandardizeFeatures(nn.Module):
    """(x - mean) / std per feature, with statistics measured on the training steps."""

    mean: Tensor
    std: Tensor

    def __init__(
        self,
        features: int,
        mean: Tensor | Sequence[float] | None = None,
        std: Tensor | Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(features))
        self.register_buffer("std", torch.ones(features))
        if mean is not None:
            self.mean.copy_(torch.as_tensor(mean, dtype=torch.float32))
        if std is not None:
            self.std.copy_(torch.as_tensor(std, dtype=torch.float32))

    def forward(self, x: Tensor) -> Tensor:
        return (x - self.mean) / self.std


def shift_steps(x: Tensor, shift: int, wrap: bool) -> Tensor:
    """`x` moved `shift` steps later in time (earlier when negative). The steps pushed
    past one end come back at the other (`wrap`), or zeros fill the steps left empty."""
    steps = x.shape[STEPS]
    if shift == 0:
        return x
    if wrap:
        return torch.roll(x, shift, dims=STEPS)
    out = torch.zeros_like(x)
    if abs(shift) >= steps:
        return out
    if shift > 0:
        out[..., shift:, :] = x[..., : steps - shift, :]
    else:
        out[..., : steps + shift, :] = x[..., -shift:, :]
    return out


class RandomTimeShift(nn.Module):
    """Shifts each sequence by a random number of steps in [-max_shift, max_shift]."""

    def __init__(
        self,
        max_shift: int,
        fill: Literal["zeros", "wrap"] = "zeros",
    ) -> None:
        super().__init__()
        if max_shift < 0:
            raise ValueError(f"max_shift ({max_shift}) must not be negative")
        if fill not in ("zeros", "wrap"):
            raise ValueError(f"fill ({fill!r}) must be 'zeros' or 'wrap'")
        self.max_shift, self.fill = max_shift, fill

    def make_params(self, x: Tensor) -> int:
        # A sequence shorter than max_shift is shifted by less, so some of it stays.
        bound = min(self.max_shift, max(0, x.shape[STEPS] - 1))
        return int(torch.randint(-bound, bound + 1, ()).item())

    def forward(self, x: Tensor) -> Tensor:
        return shift_steps(x, self.make_params(x), self.fill == "wrap")


def crop_steps(x: Tensor, start: int, length: int) -> Tensor:
    """Steps start .. start + length - 1 of `x`."""
    return x[..., start : start + length, :]


def center_start(steps: int, length: int) -> int:
    """Where a centred window of `length` steps starts (0 when `steps` is no longer)."""
    return max(0, (steps - length) // 2)


class RandomCropSteps(nn.Module):
    """A window of `length` consecutive steps at a random place; a shorter sequence
    stays whole."""

    def __init__(self, length: int) -> None:
        super().__init__()
        self.length = length

    def make_params(self, x: Tensor) -> int:
        spare = x.shape[STEPS] - self.length
        return int(torch.randint(0, spare + 1, ()).item()) if spare > 0 else 0

    def forward(self, x: Tensor) -> Tensor:
        return crop_steps(x, self.make_params(x), self.length)


class CenterCropSteps(nn.Module):
    """The middle `length` steps; a shorter sequence stays whole."""

    def __init__(self, length: int) -> None:
        super().__init__()
        self.length = length

    def forward(self, x: Tensor) -> Tensor:
        return crop_steps(x, center_start(x.shape[STEPS], self.length), self.length)


class GaussianNoise(nn.Module):
    """Adds noise of standard deviation `std` (in the data's units) to every value."""

    def __init__(self, std: float) -> None:
        super().__init__()
        if std < 0:
            raise ValueError(f"std ({std}) must not be negative")
        self.std = std

    def make_params(self, x: Tensor) -> Tensor:
        # Drawn on the CPU, whose generator the pipeline seeds, whatever x's device.
        return (torch.randn(x.shape, dtype=x.dtype) * self.std).to(x.device)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.make_params(x)


def resample_steps(x: Tensor, length: int) -> Tensor:
    """(..., T, F) -> (..., length, F) by linear interpolation between neighbouring
    steps; the first and last steps are kept as they are (align_corners), so a sequence
    keeps its start and end."""
    steps, features = x.shape[STEPS], x.shape[-1]
    lead = x.shape[:-2]
    # interpolate takes (N, F, T)
    channels = x.reshape(-1, steps, features).transpose(1, 2)
    out = functional.interpolate(
        channels,
        size=length,
        mode="linear",
        align_corners=True,
    )
    return out.transpose(1, 2).reshape(*lead, length, features)


class ResampleSteps(nn.Module):
    """Every sequence stretched or squeezed to `length` steps (linear interpolation)."""

    def __init__(self, length: int) -> None:
        super().__init__()
        self.length = length

    def forward(self, x: Tensor) -> Tensor:
        return resample_steps(x, self.length)

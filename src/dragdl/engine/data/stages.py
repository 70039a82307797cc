"""A compiled data operator and how a list of them runs over an image or a batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import torch
from torch import Tensor, nn
from torchvision.transforms.v2 import functional as F


@dataclass(frozen=True)
class OpStage:
    """One data operator as the compiler hands it over."""

    node_id: str
    transform: nn.Module
    """A torchvision.transforms.v2 transform, or a Module with the same call contract."""
    random: bool
    """Random ops run on training samples only."""
    needs_float: bool
    """Convert uint8 to float32 in [0, 1] before this op."""


@runtime_checkable
class Fittable(Protocol):
    """A transform whose parameters come from the training data (Normalize with preset "dataset")."""

    def fit(self, images: Tensor) -> None:
        """Learn from float (N, C, H, W) training images that passed the preceding deterministic stages."""


def derive_seed(*parts: int) -> int:
    """A well-mixed 63-bit seed from several integers, so that (seed, epoch) streams do not overlap."""
    state = np.random.SeedSequence([int(p) for p in parts]).generate_state(2, np.uint32)
    return (int(state[0]) << 31) ^ int(state[1])


def to_float(x: Tensor) -> Tensor:
    """uint8 -> float32 in [0, 1]; float tensors are only cast to float32."""
    if x.dtype == torch.float32:
        return x
    out: Tensor = F.to_dtype(x, torch.float32, scale=True)
    return out


def apply_stages(stages: Sequence[OpStage], x: Tensor) -> Tensor:
    """Run stages in order on one image (C, H, W) or a batch (N, C, H, W); dtype is left as produced."""
    for stage in stages:
        if stage.needs_float and not x.is_floating_point():
            x = to_float(x)
        x = stage.transform(x)
    return x

"""A compiled data operator and how a list of them runs over an image or a batch."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torchvision.transforms.v2 import functional as F

from dragdl.engine.errors import EngineError


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
    label: str = ""
    """How messages name the op, e.g. `log (Lambda)`; the node id when empty."""
    type: str = ""
    """Its node type (`op.Normalize`): a bundle rebuilds the operator from the catalog by it."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """Its node's params as JSON."""
    in_shape: tuple[int | None, ...] = ()
    """The per-sample shape it receives."""
    portable: Callable[[Mapping[str, Any] | None], dict[str, Any] | None] | None = None
    """Its evaluation step as numbers for clients without DragDL, given what it learned
    (`OpNode.portable_step`); None when it cannot be described so."""


class NonFiniteError(EngineError):
    """A data operator turned finite pixels into NaN or infinity (e.g. `log(x)` on a black pixel).

    `str()` starts with `node <id>: ` so that the node survives a DataLoader worker, which re-raises
    an exception from its text alone.
    """

    def __init__(self, message: str, node_id: str | None = None) -> None:
        if node_id is None:
            node_id, message = _from_text(message)
        super().__init__("non_finite", message, node_id)
        self.args = (f"node {node_id}: {message}" if node_id else message,)


_RERAISED = re.compile(r"NonFiniteError: node ([A-Za-z0-9_-]+): (.*)$")


def _from_text(text: str) -> tuple[str | None, str]:
    # A DataLoader worker's exception comes back as "Caught NonFiniteError in DataLoader worker ...
    # Original Traceback ...", ending with the line format_exception_only wrote.
    for line in reversed(text.strip().splitlines()):
        match = _RERAISED.search(line)
        if match:
            return match.group(1), match.group(2)
    return None, text


class FittedTransform(nn.Module, ABC):
    """A transform whose parameters come from the training data (Normalize with preset "dataset").

    The one way the engine recognises such a transform: the pipeline calls `fit` on the training
    split, `state()` goes into model.json as plain JSON, and a bundle puts it back with `load`.
    """

    fitted: bool = False

    @abstractmethod
    def fit(self, images: Tensor) -> None:
        """Learn from float (N, C, H, W) training images that passed the preceding deterministic stages."""

    @abstractmethod
    def state(self) -> dict[str, Any]:
        """What was learned, as JSON values."""

    @abstractmethod
    def load(self, state: dict[str, Any]) -> None:
        """Take a `state()` back; raises ValueError naming what does not fit."""


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


def apply_stages(stages: Sequence[OpStage], x: Tensor, samples: Sequence[int] | None = None) -> Tensor:
    """Run stages in order on one image (C, H, W) or a batch (N, C, H, W); dtype is left as produced.

    A float output holding NaN or infinity raises NonFiniteError naming the op and, when `samples`
    gives the dataset index of each image (one for a single image), the first image concerned.
    Finite input always stays finite through uint8 outputs, so only float outputs are checked: one
    reduction per op and call, nothing per element in Python.
    """
    for stage in stages:
        if stage.needs_float and not x.is_floating_point():
            x = to_float(x)
        x = stage.transform(x)
        if x.is_floating_point() and not bool(torch.isfinite(x).all()):
            raise _non_finite(stage, x, samples)
    return x


def apply_batch_stages(stages: Sequence[OpStage], x: Tensor, samples: np.ndarray, sample: str) -> Tensor:
    """A batch of float samples `x` (B, ...) through `stages`, as the sequence and point cloud
    inputs run their deterministic operators; an operator giving NaN or infinity is named with the
    first sample concerned (`sample` is its word: "sequence", "point cloud")."""
    for stage in stages:
        x = stage.transform(x)
        finite = torch.isfinite(x).flatten(1).all(1)
        if not bool(finite.all()):
            row = int((~finite).nonzero()[0, 0])
            raise NonFiniteError(
                f"the operator {stage.label or stage.node_id} produced NaN or infinite values for "
                f"{sample} {int(samples[row])} of the dataset; make it give finite values, or remove it",
                stage.node_id,
            )
    return x


def _non_finite(stage: OpStage, x: Tensor, samples: Sequence[int] | None) -> NonFiniteError:
    bad = ~torch.isfinite(x)
    row = int(bad.flatten(1).any(1).nonzero()[0, 0]) if x.ndim == 4 else 0
    image = bad[row] if x.ndim == 4 else bad
    nan = int(torch.isnan(x[row] if x.ndim == 4 else x).sum())
    kinds = " and ".join(
        f"{count} {what}" for count, what in ((nan, "NaN"), (int(image.sum()) - nan, "infinite")) if count
    )
    which = (
        f"image {samples[row]} of the dataset" if samples is not None and row < len(samples) else "an image"
    )
    name = stage.label or stage.node_id
    return NonFiniteError(
        f"the operator {name} produced {kinds} values for {which}; make it give finite values "
        "for every input (for example log(x + 0.01) instead of log(x), or clamp its result), or "
        "remove it",
        stage.node_id,
    )

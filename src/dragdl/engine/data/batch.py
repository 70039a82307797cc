"""A batch is a dict of named tensors; the names live here, once.

Every `BatchSource` yields a `Batch`: the network's `INPUT` and the `TARGET` a task kind learns,
and, where an input type has them, the per-sample valid `LENGTHS` of variable-length sequences and
a `MASK`. A kind's `step` (`tasks/base.py`) decides how a batch becomes a loss; the default calls
the network with `network_inputs(batch)`.

Per-sample items are dicts with the same names; a `Collate` turns a list of them into a batch. The
default stacks each key; an input type whose samples differ in size passes its own (pad, and add
`LENGTHS`) to the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch
from torch import Tensor
from torch.utils.data import default_collate

Batch = dict[str, Tensor]
Sample = dict[str, Tensor]
Collate = Callable[[Sequence[Sample]], Batch]

INPUT = "input"
"""What the network takes: images (N, C, H, W), table rows (N, F), sequences (N, T, F)."""
TARGET = "target"
"""What the task kind learns: int64 classes or float32 values, one per sample."""
LENGTHS = "lengths"
"""int64 (N,): the valid length of each variable-length sequence (the rest of it is padding)."""
MASK = "mask"
"""bool, shaped like the input's leading dimensions: True where the input holds data."""


def network_inputs(batch: Mapping[str, Tensor]) -> tuple[Tensor, ...]:
    """The positional arguments the network is called with: the input, and the lengths where the
    batch has them (`GraphModule.forward(x, lengths=None)`)."""
    lengths = batch.get(LENGTHS)
    return (batch[INPUT],) if lengths is None else (batch[INPUT], lengths)


def batch_size(batch: Mapping[str, Tensor]) -> int:
    """Samples in the batch (what the running metrics count)."""
    return int(batch[TARGET].shape[0])


def stack(samples: Sequence[Sample]) -> Batch:
    """The default collate: each key's tensors stacked along a new first dimension.

    torch's `default_collate` does exactly that for dicts of tensors, and in a DataLoader worker it
    writes the batch straight into shared memory (one copy less than stacking and sending it)."""
    batch: Batch = default_collate(list(samples))
    return batch


def to_device(batch: Mapping[str, Tensor], device: torch.device, channels_last: bool = False) -> Batch:
    """Every tensor of the batch on `device` (no copy where it already is); an image input in
    channels_last when the run trains in it."""
    out = {key: value.to(device, non_blocking=True) for key, value in batch.items()}
    x = out[INPUT]
    if channels_last and x.ndim == 4:
        out[INPUT] = x.contiguous(memory_format=torch.channels_last)
    return out


def take(batch: Mapping[str, Tensor], count: int) -> Batch:
    """The first `count` samples of every tensor of the batch."""
    return {key: value[:count] for key, value in batch.items()}

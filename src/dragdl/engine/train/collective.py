"""The workers of a run, as the trainer sees them: its rank, their number, and the few collective
operations a data-parallel run needs.

A single-process run is a plain `Group` whose operations return their input, so the trainer has one
code path. A distributed run (`engine/run/distributed.py`) is a `TorchGroup` over the process group Ray
Train set up (gloo on CPUs, NCCL on GPUs). Every collective must be called by all workers at the
same point of the run, in the same order: the trainer calls them only at points every worker
reaches after the same number of steps (log points, epoch ends, checkpoints).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor, nn


class StopSignal(Protocol):
    """What asks a run to checkpoint and return: a `threading.Event`, or a `StopFile`."""

    def is_set(self) -> bool: ...


class StopFile:
    """A stop request that reaches workers in other processes (and on other machines sharing the
    data directory): the file exists."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def is_set(self) -> bool:
        return self.path.exists()


class Group:
    """One process training alone."""

    rank = 0
    world = 1

    @property
    def main(self) -> bool:
        """The worker that reports, evaluates the test split and writes files."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def sum(self, values: Tensor) -> Tensor:
        """`values` summed over the workers."""
        return values

    def any(self, flag: bool) -> bool:
        """True on every worker when it is True on any."""
        return flag

    def broadcast(self, value: Any) -> Any:
        """The main worker's `value` (JSON-like), on every worker."""
        return value

    def describe(self) -> list[dict[str, Any]] | None:
        """Each worker's rank, node, address, process and device; None when training alone."""
        return None

    def wrap(self, model: nn.Module) -> nn.Module:
        """The module to train with: `model` itself, or a wrapper that averages its gradients."""
        return model


class TorchGroup(Group):
    """The workers of a data-parallel run, joined by `torch.distributed`'s default process group."""

    def __init__(self, device: torch.device, node: dict[str, Any]) -> None:
        import torch.distributed as dist

        self._dist = dist
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.device = device
        self.node = node
        """This worker's node id and address (from Ray), for `describe`."""

    def _on_device(self, values: Tensor) -> Tensor:
        # NCCL reduces CUDA tensors only; gloo takes CPU ones.
        return values.to(self.device) if self.device.type == "cuda" else values.cpu()

    def sum(self, values: Tensor) -> Tensor:
        total = self._on_device(values.clone())
        self._dist.all_reduce(total, op=self._dist.ReduceOp.SUM)
        return total.to(values.device)

    def any(self, flag: bool) -> bool:
        value = self._on_device(torch.tensor([1.0 if flag else 0.0]))
        self._dist.all_reduce(value, op=self._dist.ReduceOp.MAX)
        return bool(value.item() > 0)

    def broadcast(self, value: Any) -> Any:
        box = [value]
        self._dist.broadcast_object_list(box, src=0, device=self._object_device())
        return box[0]

    def describe(self) -> list[dict[str, Any]] | None:
        mine = {
            "rank": self.rank,
            "node_id": str(self.node.get("node_id", "")),
            "address": str(self.node.get("address", "")),
            "pid": os.getpid(),
            "device": str(self.device),
        }
        everyone: list[Any] = [None] * self.world
        self._dist.all_gather_object(everyone, mine, group=None)
        return [dict(worker) for worker in everyone]

    def _object_device(self) -> torch.device | None:
        return self.device if self.device.type == "cuda" else None

    def wrap(self, model: nn.Module) -> nn.Module:
        from torch.nn.parallel import DistributedDataParallel

        ids = [self.device.index] if self.device.type == "cuda" and self.device.index is not None else None
        # The weights start equal on every worker (DDP copies the main worker's at construction) and
        # stay equal: every step applies the same averaged gradients.
        return DistributedDataParallel(model, device_ids=ids)

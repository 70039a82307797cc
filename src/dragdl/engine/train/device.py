"""Device choice and the backend settings that go with it; `fastpath.py` picks precision and layout."""

from __future__ import annotations

import resource
import sys
from dataclasses import dataclass

import torch

from dragdl.engine.errors import EngineError
from dragdl.engine.tasks.settings import DeviceChoice


class TrainError(EngineError):
    """A run cannot go on; `code` is machine-readable (for ErrorEvent and the runner's retry choice)."""

    def __init__(self, code: str, message: str, node_id: str | None = None) -> None:
        super().__init__(code, message, node_id)


def resolve_device(choice: DeviceChoice) -> torch.device:
    if choice == "cuda" and not torch.cuda.is_available():
        raise TrainError(
            "cuda_unavailable", "device is 'cuda' but no CUDA GPU is available; use 'auto' or 'cpu'"
        )
    if choice == "cpu":
        return torch.device("cpu")
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


@dataclass(frozen=True)
class Precision:
    """How forward passes run: autocast dtype (None = full fp32) and whether fp16 needs a GradScaler."""

    dtype: torch.dtype | None
    scaler: bool

    @property
    def enabled(self) -> bool:
        return self.dtype is not None


def configure_backends(device: torch.device) -> None:
    if device.type == "cuda":
        # Input shapes are fixed per run, so autotuning convolution algorithms pays off after a few steps.
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def peak_memory_mb(device: torch.device) -> float:
    """Peak CUDA memory allocated since the last reset, or the process's peak resident set on CPU."""
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10


def reset_peak_memory(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)

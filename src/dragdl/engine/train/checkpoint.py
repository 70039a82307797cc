"""Checkpoint files: written atomically, the last two kept, read back without unpickling objects.

A checkpoint holds only tensors and plain containers of str/int/float/bool/None so that
`torch.load(path, weights_only=True)` can read it.

The trainer keeps them through a `CheckpointStore`: `FolderCheckpoints` (the run folder's
checkpoints/, a single-process run) or a distributed run's store, which hands them to Ray Train
(`engine/run/distributed.py`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import torch

CHECKPOINT_DIR = "checkpoints"
KEEP = 2
_NAME = re.compile(r"^ckpt-(\d+)-(\d+)\.pt$")


def checkpoint_name(epoch: int, step: int) -> str:
    """`epoch` is 1-based, `step` the steps done in it; zero-padded so names sort by position."""
    return f"ckpt-{epoch:04d}-{step:07d}.pt"


def list_checkpoints(out_dir: Path) -> list[Path]:
    """Checkpoints under `out_dir/checkpoints`, oldest first."""
    folder = out_dir / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    found: list[tuple[int, int, Path]] = []
    for path in folder.iterdir():
        match = _NAME.match(path.name)
        if match:
            found.append((int(match[1]), int(match[2]), path))
    return [p for _, _, p in sorted(found)]


def latest_checkpoint(out_dir: Path) -> Path | None:
    found = list_checkpoints(out_dir)
    return found[-1] if found else None


def save_checkpoint(out_dir: Path, state: dict[str, Any], epoch: int, step: int) -> Path:
    """Write `state` to checkpoints/ckpt-<epoch>-<step>.pt and delete all but the newest two."""
    folder = out_dir / CHECKPOINT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / checkpoint_name(epoch, step)
    tmp = path.with_suffix(".pt.tmp")
    torch.save(state, tmp)
    # A crash mid-write leaves only the temp file; readers never see a partial checkpoint.
    os.replace(tmp, path)
    for old in list_checkpoints(out_dir)[:-KEEP]:
        old.unlink(missing_ok=True)
    return path


def load_checkpoint(path: Path) -> dict[str, Any]:
    state: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    return state


class CheckpointStore:
    """Where a run keeps its checkpoints. Every worker of a distributed run calls `save` at the same
    point; only the main worker passes the state (the others pass None)."""

    def latest(self) -> tuple[str, dict[str, Any]] | None:
        """The newest checkpoint's name and contents; None when there is none."""
        raise NotImplementedError

    def save(self, state: dict[str, Any] | None, epoch: int, step: int) -> Path | None:
        """Keep `state` as the checkpoint after `step` steps of epoch `epoch` (1-based); returns
        where it lies (None on the workers that only take part)."""
        raise NotImplementedError

    def clear(self) -> None:
        """Forget the checkpoints of an earlier run: this one starts from the beginning."""


class FolderCheckpoints(CheckpointStore):
    """`out_dir/checkpoints/ckpt-<epoch>-<step>.pt`, the newest two kept."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir

    def latest(self) -> tuple[str, dict[str, Any]] | None:
        path = latest_checkpoint(self.out_dir)
        return None if path is None else (path.name, load_checkpoint(path))

    def save(self, state: dict[str, Any] | None, epoch: int, step: int) -> Path | None:
        return None if state is None else save_checkpoint(self.out_dir, state, epoch, step)

    def clear(self) -> None:
        for old in list_checkpoints(self.out_dir):
            old.unlink()

"""Helpers shared by the runner and task tests: tiny graphs, a corrupt dataset, waiting with deadlines."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from PIL import Image

from dragdl.runner.leftovers import descendants as descendants  # the tests use the runner's own

from ..graphs import chain

T = TypeVar("T")


def digits_graph(epochs: int = 3, batch_size: int = 64, **train: Any) -> dict[str, Any]:
    """A 2-layer network on the built-in digits (1,797 8x8 images): a few seconds of training."""
    params = {"epochs": epochs, "batch_size": batch_size, "lr": 0.01, "device": "cpu", **train}
    return chain(
        "Digits",
        [
            ("data", "dataset.builtin", {"name": "digits"}),
            ("flatten", "layer.Flatten", {}),
            ("dense", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", params),
        ],
    )


def slow_graph(epochs: int = 3, batch_size: int = 2, **train: Any) -> dict[str, Any]:
    """Digits upscaled, through a convolution, in tiny batches: a few seconds per epoch, so that
    a test can act in the middle of an epoch."""
    params = {"epochs": epochs, "batch_size": batch_size, "lr": 0.005, "device": "cpu", **train}
    return chain(
        "Slow digits",
        [
            ("data", "dataset.builtin", {"name": "digits"}),
            ("resize", "op.Resize", {"height": 24}),
            ("conv", "layer.Conv2d", {"out_channels": 16, "kernel_size": 3, "padding": "same"}),
            ("relu", "layer.ReLU", {}),
            ("flatten", "layer.Flatten", {}),
            ("dense", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", params),
        ],
    )


def corrupt_folder_graph(root: Path) -> dict[str, Any]:
    """A folder dataset whose headers are fine (validation passes) but one image's pixels are cut
    off: the run fails on real data, deterministically, in the dataset node `data`."""
    rng = np.random.default_rng(0)
    for label in ("a", "b"):
        (root / label).mkdir(parents=True, exist_ok=True)
        for i in range(12):
            Image.fromarray(rng.integers(0, 255, (8, 8), dtype=np.uint8)).save(root / label / f"{i}.png")
    bad = root / "a" / "5.png"
    data = bad.read_bytes()
    bad.write_bytes(data[: len(data) - 30])
    return chain(
        "Corrupt",
        [
            ("data", "dataset.folder", {"path": str(root)}),
            ("flatten", "layer.Flatten", {}),
            ("dense", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 2, "batch_size": 4, "device": "cpu"}),
        ],
    )


def wait_for(condition: Callable[[], T | None], timeout_s: float, what: str, every_s: float = 0.2) -> T:
    """Poll `condition` until it returns something truthy; fail with `what` after the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(every_s)  # polling interval, bounded by the deadline


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid)


def _state(pid: int) -> str:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "zombie"
    line = next((x for x in status.splitlines() if x.startswith("State:")), "")
    return line.lower()


@contextlib.contextmanager
def sqlite_write_lock(database: Path) -> Iterator[None]:
    """Another connection holds the SQLite file's write lock (`BEGIN EXCLUSIVE`) inside the block:
    every writer waits for its busy timeout and then fails with "database is locked"."""
    holder = sqlite3.connect(database, isolation_level=None, timeout=30)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        yield
        holder.execute("COMMIT")
    finally:
        holder.close()


def start_shared_ray() -> bool:
    """One local Ray for a test session, started from the main thread (the runners reuse it)."""
    from dragdl.runner.ray_runner import ensure_ray

    return ensure_ray(None)


def kill_task_workers() -> None:
    """Kill worker actors a test left running (its app shut down while they trained)."""
    import ray

    from dragdl.runner.ray_runner import NAMESPACE

    if not ray.is_initialized():  # the listing below would start a Ray of its own
        return
    for entry in ray.util.list_named_actors(all_namespaces=True):
        if entry.get("namespace") == NAMESPACE:
            with contextlib.suppress(ValueError):
                ray.kill(ray.get_actor(entry["name"], namespace=NAMESPACE), no_restart=True)

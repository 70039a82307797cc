"""What every dataset loader returns: a `Source` of labelled samples (images, table rows, sequences)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from dragdl.engine.errors import EngineError

if TYPE_CHECKING:
    from dragdl.engine.payloads import ColumnInfo


class DatasetError(EngineError):
    """A dataset cannot be read. The message names the file, row or param concerned."""

    def __init__(self, message: str, field: str | None = None, code: str = "dataset_invalid") -> None:
        super().__init__(code, message, field=field)


@dataclass(frozen=True)
class DatasetInfo:
    """What validation needs to know about a dataset without decoding every sample."""

    classes: tuple[str, ...]
    """Class names in index order; empty when the targets are only numbers (a sequence set of values)."""
    channels: int
    """An image's channels; 0 for samples that are not images."""
    size: tuple[int, int] | None
    """(height, width) when every image has it, else None (a Resize or crop must fix it)."""
    count: int
    columns: tuple[ColumnInfo, ...] = ()
    """A table's feature columns (the target left out); empty for images."""
    target: str | None = None
    """A table's target column; None for images."""
    target_text: tuple[int, str] | None = None
    """A table's first target that is not a number, as (row, value); None when all are numbers."""
    missing_targets: int = 0
    """Rows of a table left out because their target is missing (`count` is without them)."""
    missing_target_rows: tuple[int, ...] = ()
    """The first of those rows (1-based, as numbered in the file)."""
    shape: tuple[int | None, ...] | None = None
    """One sample's shape, for input types whose samples are not images or table rows: sequences
    (T, F), T None when their lengths differ. None for images and tables, whose shape is
    `channels` and `size`, or `columns`."""


@dataclass(frozen=True)
class UploadedDataset:
    """A dataset the server stored for a user: which reader to use and where its files are."""

    kind: str
    """folder | csv | bitmaps | table"""
    path: Path


@dataclass(frozen=True)
class DataContext:
    """Where datasets live and whether they may be fetched from the network."""

    data_dir: Path
    """Root for relative paths and caches (`~/.dragdl` by default)."""
    allow_download: bool = True
    uploaded: Mapping[str, UploadedDataset] = field(default_factory=dict)
    """The uploaded datasets the caller may use, by id (filled by the server for its user)."""

    @property
    def cache_dir(self) -> Path:
        return self.data_dir / "cache"


class Source(ABC):
    """A dataset opened for training, of any input type: how many samples, their labels or numeric
    targets, and a predefined test partition. What a sample is (an image, a table row, a sequence)
    is the subclass's and its input type's business (`engine/inputs/`); task kinds, the compiler
    and the run need only this."""

    info: DatasetInfo
    labels: np.ndarray | None
    """int64 class index per sample; None when the targets are only numbers (`target_values`)."""
    test_indices: np.ndarray | None = None
    """A predefined test partition (for example MNIST's official test set), or None."""

    def __len__(self) -> int:
        return self.info.count

    def target_values(self) -> np.ndarray:
        """A number per sample, for regression: each sample's class name read as a number (a CSV's
        value column, a folder named 3.5). Raises DatasetError naming the first that is not one."""
        if self.labels is None:
            raise NotImplementedError(f"{type(self).__name__} holds no labels: it must give its targets")
        values = []
        for name in self.info.classes:
            try:
                values.append(float(name))
            except ValueError:
                raise DatasetError(
                    f"the label {name!r} is not a number; regression needs a numeric target per sample",
                    code="target_not_numeric",
                ) from None
        return np.asarray(values, dtype=np.float64)[np.asarray(self.labels, dtype=np.int64)]


class ImageSource(Source):
    """A labelled image collection. Images come out as uint8 tensors shaped (C, H, W)."""

    labels: np.ndarray
    """int64 class index per image."""

    def __len__(self) -> int:
        return len(self.labels)

    @abstractmethod
    def image(self, index: int) -> torch.Tensor:
        """Decode one image as uint8 (C, H, W) with `info.channels` channels."""

    def images(self) -> torch.Tensor | None:
        """All images as one uint8 (N, C, H, W) tensor when they are held in memory, else None."""
        return None


class TensorSource(ImageSource):
    """Images already in memory, all the same size."""

    def __init__(
        self,
        images: torch.Tensor,
        labels: np.ndarray,
        classes: tuple[str, ...],
        test_indices: np.ndarray | None = None,
    ) -> None:
        if images.dtype != torch.uint8 or images.ndim != 4:
            raise ValueError(f"images must be uint8 (N, C, H, W), got {images.dtype} {tuple(images.shape)}")
        if len(images) != len(labels):
            raise ValueError(f"{len(images)} images but {len(labels)} labels")
        self._images = images
        self.labels = np.asarray(labels, dtype=np.int64)
        self.test_indices = test_indices
        n, c, h, w = images.shape
        self.info = DatasetInfo(classes=classes, channels=c, size=(h, w), count=n)

    def image(self, index: int) -> torch.Tensor:
        return self._images[index]

    def images(self) -> torch.Tensor | None:
        return self._images

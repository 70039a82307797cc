"""Sequence data in memory: `SequenceSource`, the limits every reader checks, and shared helpers.

A sequence is float32 (T, F): T time steps of F features. A set of them is held as one zero-padded
float32 array (N, T_max, F) with int64 `lengths` (N,), each equal to T_max when all sequences have
the same length. Targets are either class indices into `classes` or numbers (`targets`).

Every reader (`ts_format`, `sequence_files`) checks `SequenceLimits` before it allocates, and its
errors name the file, the line and the limit, so a hostile upload costs a clear 4xx, not the
server's memory. Text files are read through `iter_lines`, which counts lines up to the limit
with a fast byte scan first: a 10^7-line file is refused after reading only as far as the limit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dragdl.engine.data.base import DatasetError, DatasetInfo, Source


@dataclass(frozen=True)
class SequenceLimits:
    """What one sequence dataset may hold. Checked before allocating, from headers and line counts."""

    max_sequences: int = 1_000_000
    max_steps: int = 100_000
    """Time steps per sequence (and per window)."""
    max_features: int = 10_000
    max_values: int = 50_000_000
    """Floats in the padded (N, T_max, F) array: 200 MB of float32."""
    max_line_chars: int = 32 * 1024 * 1024
    max_rows: int = 2_000_000
    """Rows of one long recording before it is cut into windows."""

    def check_size(self, where: str, count: int, steps: int, features: int) -> None:
        """Refuse an (N, T_max, F) array beyond the limits, naming `where` (file and line)."""
        self.check(where, "sequences", count, self.max_sequences)
        self.check(where, "time steps per sequence", steps, self.max_steps)
        self.check(where, "features", features, self.max_features)
        self.check(where, "values (sequences x longest length x features)", count * steps * features,
                   self.max_values)  # fmt: skip

    @staticmethod
    def check(where: str, what: str, value: int, limit: int) -> None:
        if value > limit:
            raise DatasetError(f"{where}: {value:,} {what} is over the limit of {limit:,}", code="too_large")


def sequence_info(classes: tuple[str, ...], count: int, length: int | None, features: int) -> DatasetInfo:
    """What validation knows of a sequence set: its classes (empty for numeric targets), its count
    and one sample's shape (T, F), T None when the sequences differ in length."""
    return DatasetInfo(classes=classes, channels=0, size=None, count=count, shape=(length, features))


class SequenceSource(Source):
    """Sequences held in memory (or memory-mapped), with class labels or numeric targets."""

    def __init__(
        self,
        values: np.ndarray,
        lengths: np.ndarray | None = None,
        *,
        labels: np.ndarray | None = None,
        classes: tuple[str, ...] = (),
        targets: np.ndarray | None = None,
        test_indices: np.ndarray | None = None,
        names: Sequence[str] | None = None,
    ) -> None:
        """`labels` with `classes`, or numeric `targets`, or both (classes read as numbers); `names`
        say where each sample came from (a file, a line) for error messages."""
        if values.dtype != np.float32 or values.ndim != 3:
            raise ValueError(f"values must be float32 (N, T, F), got {values.dtype} {values.shape}")
        n, t_max, _ = values.shape
        if lengths is None:
            lengths = np.full(n, t_max, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        if lengths.shape != (n,) or (n and (lengths.min() < 1 or lengths.max() > t_max)):
            raise ValueError(f"lengths must be (N,) = ({n},) within 1..{t_max}")
        if labels is None and targets is None:
            raise ValueError("a sequence source needs class labels or numeric targets")
        if labels is not None:
            labels = np.asarray(labels, dtype=np.int64)
            if labels.shape != (n,) or (n and (labels.min() < 0 or labels.max() >= len(classes))):
                raise ValueError(f"labels must be (N,) = ({n},) indices into {len(classes)} classes")
        if targets is not None:
            targets = np.asarray(targets, dtype=np.float64)
            if targets.shape != (n,):
                raise ValueError(f"targets must be (N,) = ({n},), got {targets.shape}")
        if test_indices is not None:
            test_indices = np.asarray(test_indices, dtype=np.int64)
            if test_indices.size and (test_indices.min() < 0 or test_indices.max() >= n):
                raise ValueError(f"test indices must be within 0..{n - 1}")
        if names is not None and len(names) != n:
            raise ValueError(f"{len(names)} names for {n} sequences")
        self.values = values
        self.lengths = lengths
        self.labels: np.ndarray | None = labels
        """int64 class index per sequence; None when the targets are only numbers."""
        self.classes = classes if labels is not None else ()
        self._targets = targets
        self.test_indices = test_indices
        """A predefined test partition (a .ts archive's TEST file), or None."""
        self.names = tuple(names) if names is not None else None
        self.info = sequence_info(self.classes, self.count, self.fixed_length, self.features)

    def __len__(self) -> int:
        return self.count

    @property
    def count(self) -> int:
        return int(self.values.shape[0])

    @property
    def features(self) -> int:
        return int(self.values.shape[2])

    @property
    def max_length(self) -> int:
        return int(self.values.shape[1])

    @property
    def fixed_length(self) -> int | None:
        """T when every sequence has T steps, else None."""
        return self.max_length if self.count == 0 or bool((self.lengths == self.max_length).all()) else None

    def sample_name(self, index: int) -> str:
        return f"sample {index}" + (f" ({self.names[index]})" if self.names else "")

    def class_labels(self) -> np.ndarray:
        """The class index per sequence, or a DatasetError when the set holds numeric targets only."""
        if self.labels is None:
            raise DatasetError(
                "this sequence set has numeric targets, not classes; train it with a regressor",
                code="target_not_classes",
            )
        return self.labels

    def target_values(self) -> np.ndarray:
        """A float64 number per sequence: the numeric targets, else each class name read as a number.
        Raises DatasetError (`target_not_numeric`) naming the first sample whose label is not one."""
        if self._targets is not None:
            return self._targets
        assert self.labels is not None  # the constructor requires labels or targets
        numbers = np.full(len(self.classes), np.nan)
        for index, name in enumerate(self.classes):
            with contextlib.suppress(ValueError):  # stays NaN: named below if a sample uses it
                numbers[index] = float(name)
        bad = np.flatnonzero(~np.isfinite(numbers[self.labels]))
        if bad.size:
            first = int(bad[0])
            raise DatasetError(
                f"{self.sample_name(first)}: the label {self.classes[self.labels[first]]!r} is not a "
                "number; regression needs a numeric target per sample",
                code="target_not_numeric",
            )
        found: np.ndarray = numbers[self.labels]
        return found

    def sequence(self, index: int) -> np.ndarray:
        """One sequence's valid steps, float32 (T_i, F) (a view: treat it as read-only)."""
        return self.values[index, : self.lengths[index]]


def fill_missing(series: np.ndarray, where: str) -> np.ndarray:
    """NaNs of a (T, F) series replaced by linear interpolation within each feature (the nearest
    value at either end). A feature with no value at all is a DatasetError naming `where`."""
    missing = np.isnan(series)
    if not missing.any():
        return series
    steps = np.arange(series.shape[0])
    for feature in np.flatnonzero(missing.any(axis=0)):
        present = ~missing[:, feature]
        if not present.any():
            raise DatasetError(
                f"{where}: dimension {feature + 1} has no values (every step is missing)", code="all_missing"
            )
        series[:, feature] = np.interp(steps, steps[present], series[present, feature])
    return series


def check_finite(values: np.ndarray, where: str) -> None:
    """Infinity (or a number too large for float32) is refused; NaN stays for `fill_missing`."""
    if np.isinf(values).any():
        raise DatasetError(f"{where}: a value is infinite or too large for float32", code="value_invalid")


def labels_from_text(
    texts: Sequence[str], where: str
) -> tuple[np.ndarray | None, tuple[str, ...], np.ndarray | None]:
    """(labels, classes, targets) from one label per sample: numbers that are not all whole are
    numeric targets; anything else is classes (sorted as numbers when every label is one)."""
    if not texts:
        raise DatasetError(f"{where}: no labels", code="labels_missing")
    for sample, text in enumerate(texts):
        if not text:
            raise DatasetError(f"{where}: sample {sample} has an empty label", code="labels_missing")
    try:
        numbers = np.asarray([float(text) for text in texts], dtype=np.float64)
    except ValueError:
        numbers = None
    if numbers is not None and np.isfinite(numbers).all() and not (numbers == np.round(numbers)).all():
        return None, (), numbers
    names = sorted(set(texts), key=(lambda text: (float(text), text)) if numbers is not None else None)
    index = {name: i for i, name in enumerate(names)}
    return np.asarray([index[text] for text in texts], dtype=np.int64), tuple(names), None


def iter_lines(
    path: Path, max_lines: int, limits: SequenceLimits, what: str = "lines", name: str | None = None
) -> Iterator[str]:
    """The file's lines as text (newline stripped), refusing a file of more than `max_lines` lines
    (found by a byte scan before any parsing), an over-long line, and text that is not UTF-8.
    Errors call the file `name` (default: its file name). A last line without a newline is
    yielded as is; readers that care call `ends_with_newline`."""
    name = name or path.name
    _check_line_count(path, name, max_lines, what)
    with path.open("rb") as handle:
        number = 0
        while True:
            raw = handle.readline(limits.max_line_chars + 1)
            if not raw:
                return
            number += 1
            if number > max_lines:  # the last line had no newline, so the scan counted one less
                raise _too_many(name, max_lines, what)
            if len(raw) > limits.max_line_chars:
                raise DatasetError(
                    f"{name}, line {number}: longer than the limit of {limits.max_line_chars:,} characters",
                    code="too_large",
                )
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                raise DatasetError(f"{name}, line {number}: not UTF-8 text", code="dataset_invalid") from None
            yield text.rstrip("\r\n")


def ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(0, 2)
        if handle.tell() == 0:
            return True
        handle.seek(-1, 2)
        return handle.read(1) == b"\n"


def _check_line_count(path: Path, name: str, max_lines: int, what: str) -> None:
    # Counting newlines in 1 MiB blocks reads a few hundred MB per second: a huge file is refused
    # when the count passes the limit, before any line of it is parsed.
    count = 0
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            count += block.count(b"\n")
            if count > max_lines:
                raise _too_many(name, max_lines, what)


def _too_many(name: str, max_lines: int, what: str) -> DatasetError:
    return DatasetError(
        f"{name}, line {max_lines + 1:,}: more than {max_lines:,} {what}, the limit", code="too_large"
    )

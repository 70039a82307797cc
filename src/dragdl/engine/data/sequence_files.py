"""Sequences from plain files: class folders of CSVs, `.npy` arrays, and long recordings cut into
windows. Each reader checks `SequenceLimits` before it allocates, and names the file and line.

- Class folders: `<root>/<class>/<any>.csv` (or .tsv), one sequence per file: rows are time steps,
  columns are features, the header optional (a first row that is not all numbers). Empty cells,
  `?`, `NA` and `nan` are missing values, filled by linear interpolation within the sequence.
- Arrays: `X.npy` shaped (N, T) or (N, T, F), labels from `y.npy` or `labels.csv`/`labels.txt`
  (one per line). Shapes and dtypes are read from the `.npy` header before any data; an array of
  Python objects (a pickle) is refused, and `np.load` never unpickles (`allow_pickle=False`).
  A float32 (N, T, F) array stays memory-mapped.
- Recordings: one CSV with a header, time steps as rows, a label (or numeric target) column named
  by the caller; cut into windows of `window` steps every `stride` steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.sequences import (
    SequenceLimits,
    SequenceSource,
    check_finite,
    fill_missing,
    iter_lines,
    labels_from_text,
)
from dragdl.engine.data.ts_format import open_ts

SequenceFormat = Literal["ts", "csv_folders", "npy", "recording"]
CSV_SUFFIXES = frozenset({".csv", ".tsv"})
LABEL_FILES = ("y.npy", "labels.csv", "labels.txt")
_MISSING = frozenset({"", "?", "na", "nan", "null"})
_BLOCK_ROWS = 65_536
"""Rows parsed into one float array at a time: a recording's cells never sit in memory as text."""


def detect_sequence_format(root: Path) -> SequenceFormat | None:
    """Which sequence layout `root` holds, or None. A lone CSV is called a recording, though it may
    as well be a table: the caller who knows what the user uploaded decides between the two."""
    if root.is_file():
        suffix = root.suffix.lower()
        return "ts" if suffix == ".ts" else "recording" if suffix in CSV_SUFFIXES else None
    if not root.is_dir():
        return None
    entries = [entry for entry in root.iterdir() if not entry.name.startswith(".")]
    files = [entry for entry in entries if entry.is_file()]
    if any(entry.suffix.lower() == ".ts" for entry in files):
        return "ts"
    if any(entry.name.lower() == "x.npy" for entry in files):
        return "npy"
    folders = [entry for entry in entries if entry.is_dir()]
    if folders and not files and any(_csv_files(folder) for folder in folders):
        return "csv_folders"
    if not folders and len(files) == 1 and files[0].suffix.lower() in CSV_SUFFIXES:
        return "recording"
    return None


def _csv_files(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.iterdir() if p.suffix.lower() in CSV_SUFFIXES and not p.name.startswith(".")
    )


# --- class folders of CSVs -----------------------------------------------------------------------


def open_csv_folders(root: Path, limits: SequenceLimits | None = None) -> SequenceSource:
    """One sequence per CSV file in `root/<class>/`; classes are the folder names, sorted."""
    limits = limits or SequenceLimits()
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    series: list[np.ndarray] = []
    labels: list[int] = []
    names: list[str] = []
    classes: list[str] = []
    used = 0
    for folder in folders:
        files = _csv_files(folder)
        if not files:
            continue
        classes.append(folder.name)
        for path in files:
            name = f"{folder.name}/{path.name}"
            if path.is_symlink() or not path.is_file():
                raise DatasetError(f"{name}: not a regular file", code="dataset_invalid")
            SequenceLimits.check(name, "sequence files", len(series) + 1, limits.max_sequences)
            one, _ = _read_csv(path, name, limits, limits.max_steps, "time steps", header=None)
            if series and one.shape[1] != series[0].shape[1]:
                raise DatasetError(
                    f"{name}: {one.shape[1]} columns, but {names[0]} has {series[0].shape[1]}",
                    code="shape_mismatch",
                )
            used += one.size
            SequenceLimits.check(name, "values in all", used, limits.max_values)
            series.append(fill_missing(one, name))
            labels.append(len(classes) - 1)
            names.append(name)
    if not series:
        raise DatasetError(f"{root.name}: no class folder holds a .csv file", code="dataset_empty")
    if len(classes) < 2:
        raise DatasetError(f"{root.name}: only one class folder ({classes[0]}); at least two are needed")
    lengths = np.asarray([len(one) for one in series], dtype=np.int64)
    limits.check_size(root.name, len(series), int(lengths.max()), series[0].shape[1])
    values = np.zeros((len(series), int(lengths.max()), series[0].shape[1]), dtype=np.float32)
    for index, one in enumerate(series):
        values[index, : len(one)] = one
    return SequenceSource(values, lengths, labels=np.asarray(labels), classes=tuple(classes), names=names)


def _read_csv(
    path: Path, name: str, limits: SequenceLimits, max_rows: int, rows_are: str, header: bool | None
) -> tuple[np.ndarray, list[str] | None]:
    """A numeric CSV as float32 (rows, columns) with NaN for missing cells, and its header if it has
    one (`header`: True required, None when a first row that is not all numbers is one)."""
    delimiter = ""
    columns: list[str] | None = None
    blocks = _Blocks(name, limits)
    for number, line in enumerate(
        iter_lines(path, max_rows + 1, limits, f"lines ({rows_are} and a header)", name), 1
    ):
        if not line.strip():
            continue
        if not delimiter:
            delimiter = "\t" if "\t" in line else ";" if ";" in line and "," not in line else ","
        cells = line.split(delimiter)
        if columns is None and not blocks.rows and (header or (header is None and not _all_numbers(cells))):
            columns = [cell.strip().strip('"') for cell in cells]
            continue
        blocks.add(cells, number)
        SequenceLimits.check(f"{name}, line {number}", rows_are, blocks.rows, max_rows)
    matrix = blocks.finish()
    if columns is not None and matrix.shape[1] != len(columns):
        raise DatasetError(f"{name}: {matrix.shape[1]} values per row, but the header names {len(columns)}")
    return matrix, columns


def _all_numbers(cells: Iterable[str]) -> bool:
    try:
        for cell in cells:
            if cell.strip().lower() not in _MISSING:
                float(cell)
    except ValueError:
        return False
    return True


class _Blocks:
    """Rows of text cells turned into float32 blocks of `_BLOCK_ROWS`, each row's width checked."""

    def __init__(self, name: str, limits: SequenceLimits) -> None:
        self.name = name
        self.limits = limits
        self.width = 0
        self.rows = 0
        self.blocks: list[np.ndarray] = []
        self._cells: list[str] = []
        self._lines: list[int] = []

    def add(self, cells: list[str], number: int) -> None:
        if not self.width:
            SequenceLimits.check(
                f"{self.name}, line {number}", "columns", len(cells), self.limits.max_features
            )
            self.width = len(cells)
        elif len(cells) != self.width:
            raise DatasetError(
                f"{self.name}, line {number}: {len(cells)} values, the rows before have {self.width}",
                code="row_invalid",
            )
        self.rows += 1
        SequenceLimits.check(
            f"{self.name}, line {number}", "values", self.rows * self.width, self.limits.max_values
        )
        self._cells.extend(cells)
        self._lines.append(number)
        if len(self._lines) >= _BLOCK_ROWS:
            self._flush()

    def _flush(self) -> None:
        if not self._lines:
            return
        tokens = ["nan" if cell.strip().lower() in _MISSING else cell for cell in self._cells]
        try:
            block = np.asarray(tokens, dtype=np.float64).reshape(len(self._lines), self.width)
        except ValueError:
            bad = next(i for i, token in enumerate(tokens) if not _all_numbers([token]))
            row, column = divmod(bad, self.width)
            raise DatasetError(
                f"{self.name}, line {self._lines[row]}, column {column + 1}: "
                f"{tokens[bad].strip()[:40]!r} is not a number",
                code="value_invalid",
            ) from None
        with np.errstate(over="ignore"):  # a value too large for float32 becomes inf, refused next
            out = block.astype(np.float32)
        check_finite(out, f"{self.name}, lines {self._lines[0]}-{self._lines[-1]}")
        self.blocks.append(out)
        self._cells, self._lines = [], []

    def finish(self) -> np.ndarray:
        self._flush()
        if not self.blocks:
            raise DatasetError(f"{self.name}: no rows of numbers", code="dataset_empty")
        return np.concatenate(self.blocks) if len(self.blocks) > 1 else self.blocks[0]


# --- .npy arrays ---------------------------------------------------------------------------------


def open_npy(root: Path, limits: SequenceLimits | None = None) -> SequenceSource:
    """`X.npy` (N, T) or (N, T, F) with `y.npy`, `labels.csv` or `labels.txt` beside it."""
    limits = limits or SequenceLimits()
    x_path = _find(root, "x.npy")
    if x_path is None:
        raise DatasetError(f"{root.name}: no X.npy", code="dataset_empty")
    shape, dtype = npy_header(x_path)
    if len(shape) not in (2, 3) or dtype.kind not in "fiub":
        raise DatasetError(
            f"{x_path.name}: expected numbers shaped (N, T) or (N, T, F), found {dtype} {shape}",
            code="shape_mismatch",
        )
    count, steps, features = shape[0], shape[1], shape[2] if len(shape) == 3 else 1
    limits.check_size(x_path.name, count, steps, features)
    if count == 0 or steps == 0 or features == 0:
        raise DatasetError(f"{x_path.name}: the array is empty {shape}", code="dataset_empty")
    # Copy-on-write: the array is writable in memory (torch.from_numpy takes it) and the file
    # never changes.
    mapped = np.load(x_path, mmap_mode="c", allow_pickle=False)
    values = mapped.reshape(count, steps, features)
    if values.dtype != np.float32:
        with np.errstate(over="ignore"):
            values = values.astype(np.float32)
    values = _fill_array_gaps(values, x_path.name)
    labels, classes, targets = _npy_labels(root, count, limits)
    return SequenceSource(values, labels=labels, classes=classes, targets=targets)


def npy_header(path: Path) -> tuple[tuple[int, ...], np.dtype[np.generic]]:
    """The shape and dtype an `.npy` file declares, read without loading it; a pickled array (one
    of Python objects), a header that is not .npy and a file shorter than declared are refused."""
    with path.open("rb") as handle:
        try:
            version = np.lib.format.read_magic(handle)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
            else:
                raise ValueError(f"version {version} is not read")
        except ValueError as exc:
            raise DatasetError(
                f"{path.name}: not a readable .npy array ({exc})", code="dataset_invalid"
            ) from None
        start = handle.tell()
    if dtype.hasobject:
        raise DatasetError(
            f"{path.name}: holds Python objects (a pickled array), which are never loaded; save it "
            "as numbers (np.save of a numeric array)",
            code="npy_pickled",
        )
    if fortran:
        raise DatasetError(f"{path.name}: Fortran-ordered arrays are not read; save it in C order")
    expected = start + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if path.stat().st_size < expected:
        raise DatasetError(f"{path.name}: shorter than its header declares (truncated)", code="truncated")
    return tuple(int(size) for size in shape), dtype


def _fill_array_gaps(values: np.ndarray, name: str) -> np.ndarray:
    """NaNs filled by interpolation (the array copied into memory only when it has some)."""
    gaps: list[int] = []
    for start in range(0, len(values), 4096):  # in blocks: a memory-mapped array stays on disk
        block = values[start : start + 4096]
        check_finite(block, f"{name}, samples {start}-{start + len(block) - 1}")
        gaps.extend(start + int(i) for i in np.flatnonzero(np.isnan(block).any(axis=(1, 2))))
    if not gaps:
        return values
    filled = np.array(values)
    for index in gaps:
        fill_missing(filled[index], f"{name}, sample {index}")
    return filled


def _find(root: Path, lower_name: str) -> Path | None:
    if not root.is_dir():
        return None
    return next((p for p in sorted(root.iterdir()) if p.name.lower() == lower_name and p.is_file()), None)


def _npy_labels(
    root: Path, count: int, limits: SequenceLimits
) -> tuple[np.ndarray | None, tuple[str, ...], np.ndarray | None]:
    found = [path for path in (_find(root, name) for name in LABEL_FILES) if path is not None]
    if not found:
        raise DatasetError(f"{root.name}: X.npy needs its labels in y.npy, labels.csv or labels.txt")
    path = found[0]
    if path.suffix.lower() == ".npy":
        shape, dtype = npy_header(path)
        if shape != (count,) or dtype.kind not in "fiubUS":
            raise DatasetError(
                f"{path.name}: expected {count} labels (numbers or text) shaped ({count},), "
                f"found {dtype} {shape}",
                code="shape_mismatch",
            )
        array = np.load(path, allow_pickle=False)
        if dtype.kind in "fiub" and np.isfinite(array).all() and (array == np.round(array)).all():
            texts = [str(int(value)) for value in array]
        elif dtype.kind == "S":
            texts = [value.decode("utf-8", "replace").strip() for value in array]
        else:
            texts = [str(value).strip() for value in array]
        return labels_from_text(texts, path.name)
    lines = [line.strip() for line in iter_lines(path, count + 1, limits, "labels")]
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) == count + 1:  # one more line than sequences: the first is a header
        lines = lines[1:]
    if len(lines) != count:
        raise DatasetError(
            f"{path.name}: {len(lines)} labels for {count} sequences in X.npy", code="shape_mismatch"
        )
    return labels_from_text([line.strip('"') for line in lines], path.name)


# --- recordings cut into windows -----------------------------------------------------------------


def open_recording(
    path: Path,
    label_column: str,
    window: int,
    stride: int,
    feature_columns: Sequence[str] | None = None,
    limits: SequenceLimits | None = None,
) -> SequenceSource:
    """Windows of `window` consecutive rows every `stride` rows of one long CSV recording (rows are
    time steps). Each window's label is the label at its LAST step: the value of `label_column` on
    the window's final row, as a streaming classifier would see it. The features are
    `feature_columns` (default: every column but the label), numbers with gaps interpolated. Labels
    that are numbers, not all whole, are numeric targets; anything else is classes."""
    limits = limits or SequenceLimits()
    if window < 1 or stride < 1:
        raise DatasetError(
            f"window ({window}) and stride ({stride}) must be at least 1",
            field="window" if window < 1 else "stride",
        )
    SequenceLimits.check(f"{path.name} (window)", "time steps per window", window, limits.max_steps)
    columns, lines = _recording_header(path, limits)
    if label_column not in columns:
        raise DatasetError(
            f"{path.name}: no column {label_column!r} (columns: {', '.join(columns[:20])})",
            field="label_column",
        )
    chosen = [c for c in columns if c != label_column] if feature_columns is None else list(feature_columns)
    for name in chosen:
        if name not in columns or name == label_column:
            raise DatasetError(f"{path.name}: no feature column {name!r}", field="feature_columns")
    picks = [columns.index(name) for name in chosen]
    label_at = columns.index(label_column)
    blocks = _Blocks(path.name, limits)
    labels: list[str] = []
    names: list[str] = []
    row = -1
    for number, cells in lines:
        row += 1
        if len(cells) != len(columns):
            raise DatasetError(
                f"{path.name}, line {number}: {len(cells)} values, the header names {len(columns)}"
            )
        blocks.add([cells[i] for i in picks], number)
        if row >= window - 1 and (row - window + 1) % stride == 0:  # this row ends a window
            labels.append(cells[label_at].strip().strip('"'))
            names.append(f"{path.name}, lines {number - window + 1}-{number}")
            if not labels[-1]:
                raise DatasetError(f"{path.name}, line {number}: the label {label_column!r} is empty")
    recording = blocks.finish()
    if len(recording) < window:
        raise DatasetError(
            f"{path.name}: {len(recording)} rows, fewer than one window of {window}", field="window"
        )
    count = len(labels)
    limits.check_size(f"{path.name} (windows)", count, window, len(picks))
    recording = fill_missing(recording, path.name)
    views = np.lib.stride_tricks.sliding_window_view(recording, window, axis=0)[::stride]
    values = np.ascontiguousarray(views.transpose(0, 2, 1), dtype=np.float32)
    label_values, classes, targets = labels_from_text(labels, path.name)
    return SequenceSource(values, labels=label_values, classes=classes, targets=targets, names=names)


def _recording_header(
    path: Path, limits: SequenceLimits
) -> tuple[list[str], Iterable[tuple[int, list[str]]]]:
    lines = enumerate(iter_lines(path, limits.max_rows + 1, limits, "lines (time steps and a header)"), 1)
    for number, line in lines:
        if line.strip():
            delimiter = "\t" if "\t" in line else ";" if ";" in line and "," not in line else ","
            columns = [cell.strip().strip('"') for cell in line.split(delimiter)]
            SequenceLimits.check(
                f"{path.name}, line {number}", "columns", len(columns), limits.max_features + 1
            )
            return columns, ((n, text.split(delimiter)) for n, text in lines if text.strip())
    raise DatasetError(f"{path.name}: the file is empty", code="dataset_empty")


def open_sequence_folder(root: Path, limits: SequenceLimits | None = None) -> SequenceSource:
    """The sequences of a `.ts` file or folder, a folder of class folders, or `.npy` arrays, by what
    `detect_sequence_format` finds (a recording needs its label column and window: `open_recording`)."""
    found = detect_sequence_format(root)
    if found == "ts":
        return open_ts(root, limits)
    if found == "csv_folders":
        return open_csv_folders(root, limits)
    if found == "npy":
        return open_npy(root, limits)
    what = "a recording: name its label column, window and stride" if found else "no sequence data found"
    raise DatasetError(f"{root.name}: {what} (expected a .ts file, class folders of CSVs, or X.npy)")

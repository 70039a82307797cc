"""Decoding a prediction request's sequence files: a `.ts` file, a CSV of one sequence, or an `.npy` array.

The bytes are read by the training readers (`data/ts_format.py`, `data/sequence_files.py`) from a
scratch file named as the upload, so every error names the uploaded file and its line, and the
readers' limits apply: a request's `RequestLimits` become the `SequenceLimits` they check before
they allocate. Nothing is unpickled (`np.load(allow_pickle=False)`, a pickled array is refused from
its header).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.sequence_files import _read_csv, npy_header
from dragdl.engine.data.sequences import SequenceLimits, fill_missing
from dragdl.engine.data.ts_format import read_ts_series
from dragdl.engine.inputs.base import RequestLimits
from dragdl.engine.inputs.sections import InputSpec

SUFFIXES = (".ts", ".csv", ".tsv", ".npy")
_NAME_CHARS = 120
"""Longest file name kept for the scratch file (and so in messages); longer ones are cut."""


def sequence_limits(limits: RequestLimits) -> SequenceLimits:
    """The readers' limits for one prediction file: its samples and values as the request allows, and
    lines no longer than the file may be."""
    return SequenceLimits(
        max_sequences=limits.max_samples,
        max_values=limits.max_values,
        max_line_chars=min(SequenceLimits.max_line_chars, 4 * limits.max_values),
    )


def decode_sequences(name: str, data: bytes, spec: InputSpec, limits: RequestLimits) -> list[Tensor]:
    """The (T_i, F) float32 sequences of one uploaded file, F checked against the model's."""
    suffix = Path(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise DatasetError(
            f"{name}: not a sequence file (send .ts, .csv, .tsv or .npy files)", code="file_type"
        )
    features = spec.network_input[-1] if spec.network_input else None
    reader_limits = sequence_limits(limits)
    with tempfile.TemporaryDirectory(prefix="dragdl-seq-") as scratch:
        path = Path(scratch) / _safe_name(name, suffix)
        path.write_bytes(data)
        if suffix == ".ts":
            found = _ts(path, reader_limits)
        elif suffix == ".npy":
            found = _npy(path, reader_limits, features)
        else:
            found = _csv(path, reader_limits)
    for sequence, where in found:
        if features is not None and sequence.shape[1] != features:
            raise DatasetError(
                f"{where}: {sequence.shape[1]} features per step, but the model takes {features}",
                code="shape_mismatch",
            )
    return [torch.from_numpy(np.ascontiguousarray(sequence)) for sequence, _ in found]


def _safe_name(name: str, suffix: str) -> str:
    # Only the last part of the name, never a path: the scratch folder is the only place written.
    base = Path(name.replace("\\", "/")).name.replace("\x00", "")
    if base in ("", ".", ".."):
        return f"upload{suffix}"
    if len(base) > _NAME_CHARS:
        return f"{base[: _NAME_CHARS - len(suffix)]}{suffix}"
    return base


def _ts(path: Path, limits: SequenceLimits) -> list[tuple[np.ndarray, str]]:
    """Every series of a `.ts` file with the line it came from; it may declare no labels, and its
    labels, if any, are not used."""
    return read_ts_series(path, limits)


def _csv(path: Path, limits: SequenceLimits) -> list[tuple[np.ndarray, str]]:
    """A CSV (or TSV) of one sequence: a row per time step, a column per feature, a header optional."""
    values, _ = _read_csv(path, path.name, limits, limits.max_steps, "time steps", header=None)
    return [(fill_missing(values, path.name), path.name)]


def _npy(path: Path, limits: SequenceLimits, features: int | None) -> list[tuple[np.ndarray, str]]:
    """(T,) one univariate sequence; (T, F) one sequence of F features, or (N, T) N univariate ones
    when the model takes one feature; (N, T, F) N sequences."""
    shape, dtype = npy_header(path)
    if dtype.kind not in "fiub" or not 1 <= len(shape) <= 3 or 0 in shape:
        raise DatasetError(
            f"{path.name}: expected numbers shaped (T,), (T, F), (N, T) or (N, T, F), found {dtype} {shape}",
            code="shape_mismatch",
        )
    if len(shape) == 1:
        full = (1, shape[0], 1)
    elif len(shape) == 2:
        full = (shape[0], shape[1], 1) if features == 1 else (1, shape[0], shape[1])
    else:
        full = (shape[0], shape[1], shape[2])
    limits.check_size(path.name, *full)
    array = np.load(path, allow_pickle=False).reshape(full)
    with np.errstate(over="ignore"):  # a value too large for float32 becomes inf, refused next
        values = array.astype(np.float32)
    if np.isinf(values).any():
        raise DatasetError(f"{path.name}: a value is infinite or too large for float32", code="value_invalid")
    many = full[0] > 1 or len(shape) == 3
    found = []
    for index in range(full[0]):
        where = f"{path.name}, sample {index}" if many else path.name
        found.append((fill_missing(values[index], where), where))
    return found

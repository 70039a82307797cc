"""Uploaded sequence sets: which received layouts are sequences, and what the server stores of one.

An upload is a sequence set when it holds a UCR/UEA `.ts` file (or a `_TRAIN.ts`/`_TEST.ts` pair),
class folders of CSVs, or `X.npy` with its labels (`data/sequence_files.detect_sequence_format`). A
lone CSV is a recording to cut into windows when the upload names its label column, window or stride
(the form fields `label_column`, `window`, `stride`, as the dataset node's params are called); without
them it is not claimed, and uploaded alone it is a table. A recording's description carries those
params (`node_params`), so the node the Datasets page gives cuts it as it was described.

The set is read whole by the engine's readers within `SequenceLimits` (their errors name the file
and line), then described: counts, classes or numeric targets, lengths, and a preview bounded
whatever the set holds (a few series per class, each at most `PREVIEW_POINTS` points per feature for
a small line plot, and statistics of the first `PREVIEW_STAT_FEATURES` features): at most 24,000
plotted numbers, about 200 KB of JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.sequence_files import (
    CSV_SUFFIXES,
    detect_sequence_format,
    open_recording,
    open_sequence_folder,
)
from dragdl.engine.data.sequences import SequenceSource

SEQUENCE_KIND = "sequence"
"""The stored kind of an uploaded sequence set (read by `dataset.sequence`, source 'uploaded')."""
UPLOAD_FORMATS = ("ts", "csv_folders", "npy")
"""The layouts an upload holds by itself; a recording (one CSV cut into windows) only with its options."""
RECORDING_OPTIONS = ("label_column", "window", "stride")
"""An upload's form fields that make a lone CSV a recording: the dataset node's params of the same names."""
DEFAULT_WINDOW = 128
DEFAULT_STRIDE = 64
MAX_WINDOW = 100_000
"""The largest window and stride (the node's bounds)."""
PREVIEW_CLASSES = 10
"""Classes (or, for numeric targets, target ranges) with sample series in the preview."""
PREVIEW_SAMPLES = 3
PREVIEW_FEATURES = 4
"""Features plotted per sample series."""
PREVIEW_POINTS = 200
"""Points per plotted feature: a longer series is sampled at evenly spaced steps."""
PREVIEW_STAT_FEATURES = 64
_STAT_CHUNK = 4096
"""Sequences measured at once: a memory-mapped X.npy is read a part at a time."""


def detect_sequence_upload(root: Path, options: Mapping[str, str] | None = None) -> str | None:
    """SEQUENCE_KIND when `root` holds a sequence layout, or a lone CSV sent with recording options.
    Class folders are claimed only when they hold nothing but CSVs: image class folders with a stray
    notes.csv stay images."""
    found = detect_sequence_format(root)
    if found == "recording" and _recording_asked(options):
        return SEQUENCE_KIND
    if found not in UPLOAD_FORMATS:
        return None
    if found == "csv_folders":
        for folder in root.iterdir():
            if folder.is_dir() and not folder.name.startswith(".") and not _only_csvs(folder):
                return None
    return SEQUENCE_KIND


def _only_csvs(folder: Path) -> bool:
    return all(
        entry.suffix.lower() in CSV_SUFFIXES for entry in folder.iterdir() if not entry.name.startswith(".")
    )


def _recording_asked(options: Mapping[str, str] | None) -> bool:
    return any((options or {}).get(name, "").strip() for name in RECORDING_OPTIONS)


def recording_params(options: Mapping[str, str] | None) -> dict[str, Any]:
    """A recording's label column, window and stride from an upload's options (window and stride as
    the node's defaults when left out); DatasetError naming the option that cannot be used."""
    given = {name: (options or {}).get(name, "").strip() for name in RECORDING_OPTIONS}
    if not given["label_column"]:
        raise DatasetError(
            "a recording needs its label column: send label_column with window and stride",
            field="label_column",
        )
    params: dict[str, Any] = {"label_column": given["label_column"][:200]}
    for name, default in (("window", DEFAULT_WINDOW), ("stride", DEFAULT_STRIDE)):
        text = given[name]
        value = int(text) if text.isdigit() and len(text) <= 6 else None
        if text and (value is None or not 1 <= value <= MAX_WINDOW):
            raise DatasetError(
                f"{name} ({text[:40]!r}) must be a whole number from 1 to {MAX_WINDOW:,}", field=name
            )
        params[name] = default if value is None else value
    return params


def open_uploaded_recording(root: Path, label_column: str, window: int, stride: int) -> SequenceSource:
    """The recording a folder holds (its one CSV) cut into windows."""
    files = [entry for entry in root.iterdir() if entry.is_file() and not entry.name.startswith(".")]
    if len(files) != 1:
        raise DatasetError(f"{root.name}: expected one CSV recording, found {len(files)} files")
    return open_recording(files[0], label_column, window, stride)


def describe_sequence_upload(root: Path, options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The stored description of the sequence set under `root` (DatasetError if it cannot be read)."""
    found = detect_sequence_format(root)
    node_params: dict[str, Any] = {}
    if found == "recording":
        node_params = recording_params(options)
        source = open_uploaded_recording(root, **node_params)
    else:
        source = open_sequence_folder(root)
    lengths = source.lengths
    if source.labels is not None:
        classes = list(source.classes)
        counts = np.bincount(source.labels, minlength=len(classes)).tolist()
    else:
        classes, counts = [], []
    targets = None
    if source.labels is None:
        values = source.target_values()
        targets = {
            "min": _round(values.min()),
            "max": _round(values.max()),
            "mean": _round(values.mean()),
            "std": _round(values.std()),
        }
    test = source.test_indices
    return {
        "format": found,
        "classes": classes,
        "counts": counts,
        "count": source.count,
        "channels": 0,
        "size": None,
        "sequence": {
            "features": source.features,
            "length": {
                "min": int(lengths.min()),
                "max": int(lengths.max()),
                "mean": _round(lengths.mean()),
            },
            "equal_length": source.fixed_length is not None,
            "test_count": None if test is None else len(test),
            "targets": targets,
        },
        "preview": sequence_preview(source),
        "node_params": node_params,
    }


def sequence_preview(source: SequenceSource) -> dict[str, Any]:
    """A few series of each class (of each target range for numeric targets), each at most
    PREVIEW_POINTS points per feature, and per-feature statistics over every valid step."""
    groups = []
    if source.labels is not None:
        for index, name in enumerate(source.classes[:PREVIEW_CLASSES]):
            picked = np.flatnonzero(source.labels == index)[:PREVIEW_SAMPLES]
            groups.append({"name": name, "index": index, "samples": [_sample(source, i) for i in picked]})
    else:
        # Sorted by target and cut into ranges, so the plots show how the series change with it.
        order = np.argsort(source.target_values(), kind="stable")
        for part in np.array_split(order, min(PREVIEW_CLASSES, len(order))):
            picked = np.sort(part[:PREVIEW_SAMPLES])
            groups.append({"name": None, "index": None, "samples": [_sample(source, i) for i in picked]})
    return {
        "groups": groups,
        "features": source.features,
        "features_shown": min(source.features, PREVIEW_FEATURES),
        "max_points": PREVIEW_POINTS,
        "feature_stats": _feature_stats(source),
    }


def _sample(source: SequenceSource, index: int) -> dict[str, Any]:
    """One series for a line plot: at most PREVIEW_POINTS evenly spaced steps of its first features
    (point i is step round(i * (length - 1) / (points - 1))), three significant digits each."""
    series = source.sequence(int(index))[:, :PREVIEW_FEATURES]
    points = min(len(series), PREVIEW_POINTS)
    steps = np.linspace(0, len(series) - 1, points).round().astype(int)
    target = None if source.labels is not None else _round(source.target_values()[int(index)])
    return {
        "sample": int(index),
        "length": len(series),
        "target": target,
        "values": [[_round(v, 3) for v in series[steps, f]] for f in range(series.shape[1])],
    }


def _feature_stats(source: SequenceSource) -> list[dict[str, Any]]:
    """Mean, standard deviation, minimum and maximum of each of the first features, over the valid
    steps of every sequence (never the padding), in float64 sums a chunk of sequences at a time."""
    shown = min(source.features, PREVIEW_STAT_FEATURES)
    total = np.zeros(shown)
    squares = np.zeros(shown)
    low = np.full(shown, np.inf)
    high = np.full(shown, -np.inf)
    steps = 0
    for start in range(0, source.count, _STAT_CHUNK):
        block = np.asarray(source.values[start : start + _STAT_CHUNK, :, :shown], dtype=np.float64)
        lengths = source.lengths[start : start + _STAT_CHUNK]
        valid = block[np.arange(block.shape[1])[None, :] < lengths[:, None]]  # (S, shown)
        total += valid.sum(axis=0)
        squares += (valid**2).sum(axis=0)
        low = np.minimum(low, valid.min(axis=0))
        high = np.maximum(high, valid.max(axis=0))
        steps += len(valid)
    mean = total / steps
    std = np.sqrt(np.maximum(squares / steps - mean**2, 0.0))
    return [
        {
            "index": f,
            "mean": _round(mean[f]),
            "std": _round(std[f]),
            "min": _round(low[f]),
            "max": _round(high[f]),
        }
        for f in range(shown)
    ]


def _round(value: Any, digits: int = 4) -> float:
    """A few significant digits: enough for a plot or a statistic, and a fraction of the JSON."""
    return float(f"{float(value):.{digits}g}")

"""Uploaded sequence sets: which received layouts are sequences, and what the server stores of one.

An upload is a sequence set when it holds a UCR/UEA `.ts` file (or a `_TRAIN.ts`/`_TEST.ts` pair),
class folders of CSVs, or `X.npy` with its labels (`data/sequence_files.detect_sequence_format`). A
lone CSV is not claimed: uploaded alone it is a table. The set is read whole by the engine's readers
within `SequenceLimits` (their errors name the file and line), then described: counts, classes or
numeric targets, lengths, and a preview bounded whatever the set holds (a few series per class, each
at most `PREVIEW_POINTS` points per feature for a small line plot, and statistics of the first
`PREVIEW_STAT_FEATURES` features): at most 24,000 plotted numbers, about 200 KB of JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dragdl.engine.data.sequence_files import CSV_SUFFIXES, detect_sequence_format, open_sequence_folder
from dragdl.engine.data.sequences import SequenceSource

SEQUENCE_KIND = "sequence"
"""The stored kind of an uploaded sequence set (read by `dataset.sequence`, source 'uploaded')."""
UPLOAD_FORMATS = ("ts", "csv_folders", "npy")
"""The layouts an upload may hold; a recording (one CSV cut into windows) is a table when uploaded."""
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


def detect_sequence_upload(root: Path) -> str | None:
    """SEQUENCE_KIND when `root` holds a sequence layout. Class folders are claimed only when they
    hold nothing but CSVs: image class folders with a stray notes.csv stay images."""
    found = detect_sequence_format(root)
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


def describe_sequence_upload(root: Path) -> dict[str, Any]:
    """The stored description of the sequence set under `root` (DatasetError if it cannot be read)."""
    found = detect_sequence_format(root)
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

"""Uploaded image sets: which unpacked layouts are images, and what the server stores of one.

An upload that no other input type claims is images (`Images.upload_fallback`): a CSV of
`path,label` rows with its images ('csv'), `.npy` bitmap files one per class ('bitmaps'), or class
folders ('folder'), whose readers report what is wrong. Each image is decoded whole once, so a file
that ends early is refused here rather than by the task that reads it; the description keeps the
classes, counts, channels, size statistics and a few sample paths per class for the thumbnails.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dragdl.engine.data.base import DatasetError

if TYPE_CHECKING:
    from dragdl.engine.data.files import ImageList

CSV_NAME = "labels.csv"
"""An uploaded CSV listing is stored under this name (the exported script looks for it)."""
SAMPLES_PER_CLASS = 6
"""Sample paths (or bitmap rows) kept per class for the thumbnails."""


def detect_image_upload(root: Path) -> str:
    """Which image reader the unpacked upload is for: 'csv', 'bitmaps' or 'folder' (the readers
    report a layout they cannot read)."""
    entries = [entry for entry in root.iterdir() if not _hidden(entry.name)]
    if any(e.is_file() and e.suffix.lower() == ".csv" for e in entries):
        return "csv"
    if any(e.is_file() and e.suffix.lower() == ".npy" for e in entries) and not any(
        e.is_dir() for e in entries
    ):
        return "bitmaps"
    return "folder"


def describe_image_upload(kind: str, root: Path) -> dict[str, Any]:
    """What the datasets page shows: classes, counts, channels, image size statistics, samples; a
    CSV listing is renamed CSV_NAME once checked (messages name the uploader's file), its images'
    paths staying relative to its folder, and `reader_file` names it."""
    if kind == "bitmaps":
        return _describe_bitmaps(root)
    from dragdl.engine.data.files import (
        DEFAULT_PIXEL_LIMIT,
        list_image_folder,
        probe_images,
        read_csv_listing,
    )

    reader_path = root
    if kind == "csv":
        csvs = sorted(e.name for e in root.iterdir() if e.is_file() and e.suffix.lower() == ".csv")
        if len(csvs) > 1:
            raise DatasetError(f"the archive holds several CSV files ({', '.join(csvs)}); keep only one")
        reader_path = root / csvs[0]
    listing = list_image_folder(root) if kind == "folder" else read_csv_listing(reader_path)
    channels, size = probe_images(listing.files, "auto", DEFAULT_PIXEL_LIMIT)
    sizes = _image_sizes(listing)
    # The readers refuse empty classes (folders) and cannot produce one (CSV labels), so no count is 0.
    counts = [int((listing.labels == index).sum()) for index in range(len(listing.classes))]
    samples: list[list[str]] = [[] for _ in listing.classes]
    for path, label in zip(listing.files, listing.labels.tolist(), strict=True):
        if len(samples[label]) < SAMPLES_PER_CLASS:
            samples[label].append(_relative_path(path, root))
    info = _info(kind, list(listing.classes), counts, channels, size, sizes, samples)
    if kind == "csv":
        if reader_path.name != CSV_NAME:
            reader_path.replace(root / CSV_NAME)
        info["reader_file"] = CSV_NAME
    return info


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


def _relative_path(path: Path, root: Path) -> str:
    # The CSV reader resolves paths (following any link in the data dir's own path), the folder
    # reader does not.
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.resolve().relative_to(root.resolve()).as_posix()


def _image_sizes(listing: ImageList) -> list[tuple[int, int]]:
    """Each image's (H, W), after decoding it whole: a file that ends early has a good header, and
    would otherwise be accepted here and fail the task that reads it (the pixel limit is checked first)."""
    from PIL import Image

    sizes = []
    for path in listing.files:
        with Image.open(path) as img:
            try:
                img.load()
            except (OSError, SyntaxError, ValueError) as exc:
                raise DatasetError(f"image {path} is damaged or truncated ({exc})", field="path") from None
            sizes.append((img.size[1], img.size[0]))
    return sizes


def _describe_bitmaps(root: Path) -> dict[str, Any]:
    import numpy as np

    from dragdl.engine.data.bitmaps import bitmap_files, describe_bitmaps

    info = describe_bitmaps(root)  # checks every file: uint8, square rows, no pickles
    assert info.size is not None
    counts = [len(np.load(path, mmap_mode="r", allow_pickle=False)) for path in bitmap_files(root)]
    samples = [[str(i) for i in range(min(SAMPLES_PER_CLASS, n))] for n in counts]
    return _info("bitmaps", list(info.classes), counts, 1, info.size, [info.size], samples)


def _info(
    kind: str,
    classes: list[str],
    counts: list[int],
    channels: int,
    size: tuple[int, int] | None,
    sizes: list[tuple[int, int]],
    samples: list[list[str]],
) -> dict[str, Any]:
    heights = [h for h, _ in sizes]
    widths = [w for _, w in sizes]
    return {
        "format": kind,
        "classes": classes,
        "counts": counts,
        "count": sum(counts),
        "channels": channels,
        "size": list(size) if size is not None else None,
        "size_stats": {
            "min": [min(heights), min(widths)],
            "max": [max(heights), max(widths)],
            "mean": [round(statistics.fmean(heights), 2), round(statistics.fmean(widths), 2)],
        },
        "samples": samples,
    }

"""Image files on disk: a folder per class (or a zip of one), or a CSV of path,label rows.

`describe_*` only lists files and reads image headers (`Image.open` does not decode pixels), so
validation stays cheap; `open_*` returns a FileSource that decodes one image per index.
"""

from __future__ import annotations

import csv
import os
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError

from dragdl.engine.data.archive import ArchiveLimits, file_digest, safe_extract
from dragdl.engine.data.base import DatasetError, DatasetInfo, ImageSource

Color = Literal["auto", "grayscale", "rgb"]

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff"})
DEFAULT_PIXEL_LIMIT = 40_000_000
_GRAY_MODES = frozenset({"1", "L", "LA", "I;16", "I;16B", "I;16L", "I;16N", "I"})
_WIDE_GRAY_MODES = frozenset({"I;16", "I;16B", "I;16L", "I;16N", "I"})


@dataclass(frozen=True)
class ImageList:
    """Image files and their class index, before any pixel is read."""

    files: tuple[Path, ...]
    labels: np.ndarray
    classes: tuple[str, ...]


def _is_hidden(name: str) -> bool:
    # macOS zips carry `__MACOSX/` and `._name.png` resource forks that look like images but are not.
    return name.startswith(".") or name == "__MACOSX"


def _is_image(name: str) -> bool:
    return os.path.splitext(name)[1].lower() in IMAGE_EXTENSIONS


def _open_image(path: Path, pixel_limit: int, field: str | None) -> Image.Image:
    """Open (header only) and enforce the pixel limit before any decoding happens.

    The limit is checked here per call instead of through `Image.MAX_IMAGE_PIXELS`, a process-wide
    setting that other code (and other datasets with other limits) would also see.
    """
    try:
        img = Image.open(path)
    except (Image.DecompressionBombError, UnidentifiedImageError, OSError) as exc:
        raise DatasetError(f"cannot read image {path}: {exc}", field=field) from exc
    width, height = img.size
    if width * height > pixel_limit:
        img.close()
        raise DatasetError(
            f"image {path} has {width}x{height} = {width * height} pixels, above the limit of {pixel_limit}",
            field=field,
        )
    return img


def probe_images(
    files: tuple[Path, ...], color: Color, pixel_limit: int = DEFAULT_PIXEL_LIMIT, field: str | None = "path"
) -> tuple[int, tuple[int, int] | None]:
    """Channels and common (H, W) (None when sizes differ), from the image headers alone."""
    sizes: set[tuple[int, int]] = set()
    all_gray = True
    for path in files:
        with _open_image(path, pixel_limit, field) as img:
            sizes.add((img.size[1], img.size[0]))
            all_gray = all_gray and img.mode in _GRAY_MODES
    channels = 1 if color == "grayscale" or (color == "auto" and all_gray) else 3
    return channels, (next(iter(sizes)) if len(sizes) == 1 else None)


def _to_array(img: Image.Image, channels: int) -> np.ndarray:
    if img.mode in _WIDE_GRAY_MODES:
        # PIL's I;16 -> L conversion clips at 255 instead of scaling; keep the top 8 bits instead.
        wide = np.clip(np.asarray(img, dtype=np.int64), 0, 65535)
        gray = (wide >> 8).astype(np.uint8)[None]
        return gray if channels == 1 else np.repeat(gray, 3, axis=0)
    if img.mode == "P" and "transparency" in img.info:
        img = img.convert("RGBA")
    if channels == 1:
        return np.asarray(img.convert("L"))[None]
    return np.asarray(img.convert("RGB")).transpose(2, 0, 1)


def decode_image(
    path: Path, channels: int, pixel_limit: int = DEFAULT_PIXEL_LIMIT, field: str | None = "path"
) -> torch.Tensor:
    """Decode one file as uint8 (C, H, W); the first frame of animated images."""
    with _open_image(path, pixel_limit, field) as img:
        try:
            array = _to_array(img, channels)
        except (Image.DecompressionBombError, OSError, ValueError) as exc:
            raise DatasetError(f"cannot decode image {path}: {exc}", field=field) from exc
    # np.array copies: PIL-backed arrays are read-only, and torch wants a writable buffer.
    return torch.from_numpy(np.array(array, dtype=np.uint8, order="C"))


class FileSource(ImageSource):
    """Images decoded from files on demand; picklable so DataLoader workers can share it."""

    def __init__(self, listing: ImageList, info: DatasetInfo, pixel_limit: int = DEFAULT_PIXEL_LIMIT) -> None:
        self.files = listing.files
        self.labels = listing.labels
        self.info = info
        self.pixel_limit = pixel_limit

    def image(self, index: int) -> torch.Tensor:
        return decode_image(self.files[index], self.info.channels, self.pixel_limit)


def _describe(listing: ImageList, color: Color, pixel_limit: int, field: str) -> DatasetInfo:
    channels, size = probe_images(listing.files, color, pixel_limit, field)
    return DatasetInfo(classes=listing.classes, channels=channels, size=size, count=len(listing.files))


# --- image folder -----------------------------------------------------------------------------


def _images_under(folder: Path) -> list[Path]:
    """Image files below a class folder, recursively, in sorted order; symlinks are refused."""
    found: list[Path] = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if _is_hidden(entry.name):
                continue
            if entry.is_symlink():
                raise DatasetError(
                    f"{entry.path} is a symbolic link; links are not followed inside a dataset folder",
                    field="path",
                )
            if entry.is_dir(follow_symlinks=False):
                found.extend(_images_under(Path(entry.path)))
            elif entry.is_file(follow_symlinks=False) and _is_image(entry.name):
                found.append(Path(entry.path))
    return found


def list_image_folder(root: Path) -> ImageList:
    """One sub-folder per class (sorted names); other files at the top level are ignored."""
    if not root.is_dir():
        raise DatasetError(f"dataset folder {root} does not exist", field="path")
    class_dirs: list[Path] = []
    with os.scandir(root) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if _is_hidden(entry.name):
                continue
            if entry.is_symlink():
                raise DatasetError(
                    f"{entry.path} is a symbolic link; links are not followed inside a dataset folder",
                    field="path",
                )
            if entry.is_dir(follow_symlinks=False):
                class_dirs.append(Path(entry.path))
    if len(class_dirs) < 2:
        raise DatasetError(
            f"{root} has {len(class_dirs)} class folder(s); a dataset folder needs one sub-folder per "
            "class and at least 2 classes",
            field="path",
        )
    files: list[Path] = []
    labels: list[int] = []
    for index, folder in enumerate(class_dirs):
        images = _images_under(folder)
        if not images:
            raise DatasetError(
                f"class folder {folder.name!r} in {root} has no images "
                f"({', '.join(sorted(IMAGE_EXTENSIONS))})",
                field="path",
            )
        files.extend(images)
        labels.extend([index] * len(images))
    return ImageList(
        files=tuple(files),
        labels=np.asarray(labels, dtype=np.int64),
        classes=tuple(folder.name for folder in class_dirs),
    )


@lru_cache(maxsize=64)
def _cached_digest(path: Path, size: int, mtime_ns: int) -> str:
    # Size and mtime are part of the key so that a replaced zip is hashed again.
    return file_digest(path)


def extracted_zip(zip_path: Path, cache_dir: Path, limits: ArchiveLimits | None = None) -> Path:
    """Extract a dataset zip once into `cache_dir/archives/<content hash>` and return the dataset root.

    A single top-level folder inside the archive (the usual result of zipping a folder) is skipped.
    """
    stat = zip_path.stat()
    digest = _cached_digest(zip_path.resolve(), stat.st_size, stat.st_mtime_ns)
    dest = cache_dir / "archives" / digest[:32]
    if not dest.is_dir():
        safe_extract(zip_path, dest, limits, field="path")
    visible = [entry for entry in dest.iterdir() if not _is_hidden(entry.name)]
    if len(visible) == 1 and visible[0].is_dir() and not visible[0].is_symlink():
        return visible[0]
    return dest


def folder_root(path: Path, cache_dir: Path, limits: ArchiveLimits | None = None) -> Path:
    """The folder holding the class folders: `path` itself, or its extraction when it is a zip."""
    if path.is_dir():
        return path
    if path.is_file():
        if path.suffix.lower() == ".zip" or zipfile.is_zipfile(path):
            return extracted_zip(path, cache_dir, limits)
        raise DatasetError(f"{path} is neither a folder nor a .zip archive", field="path")
    raise DatasetError(f"dataset path {path} does not exist", field="path")


def describe_folder(
    path: Path, cache_dir: Path, color: Color = "auto", pixel_limit: int = DEFAULT_PIXEL_LIMIT
) -> DatasetInfo:
    return _describe(list_image_folder(folder_root(path, cache_dir)), color, pixel_limit, "path")


def open_folder(
    path: Path, cache_dir: Path, color: Color = "auto", pixel_limit: int = DEFAULT_PIXEL_LIMIT
) -> FileSource:
    listing = list_image_folder(folder_root(path, cache_dir))
    return FileSource(listing, _describe(listing, color, pixel_limit, "path"), pixel_limit)


# --- CSV --------------------------------------------------------------------------------------


def _column(header: list[str], name: str, field: str, csv_path: Path) -> int:
    if name not in header:
        raise DatasetError(
            f"CSV {csv_path} has no column {name!r} (columns: {', '.join(repr(h) for h in header)})",
            field=field,
        )
    return header.index(name)


def read_csv_listing(
    csv_path: Path, image_root: Path | None = None, path_column: str = "path", label_column: str = "label"
) -> ImageList:
    """Rows of image path and label; row numbers in errors count the header as row 1."""
    if not csv_path.is_file():
        raise DatasetError(f"CSV file {csv_path} does not exist", field="path")
    root = (image_root if image_root is not None else csv_path.parent).resolve()
    if not root.is_dir():
        raise DatasetError(f"image root {root} is not a folder", field="image_root")
    rows: list[tuple[Path, str]] = []
    try:
        with csv_path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = [cell.strip() for cell in next(reader, [])]
            path_index = _column(header, path_column, "path_column", csv_path)
            label_index = _column(header, label_column, "label_column", csv_path)
            for row_number, row in enumerate(reader, start=2):
                if not any(cell.strip() for cell in row):
                    continue
                rows.append(_csv_row(row, row_number, path_index, label_index, root, csv_path))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(f"cannot read CSV {csv_path}: {exc}", field="path") from exc
    if not rows:
        raise DatasetError(f"CSV {csv_path} has no data rows", field="path")
    classes = tuple(sorted({label for _, label in rows}))
    if len(classes) < 2:
        raise DatasetError(
            f"CSV {csv_path} has {len(classes)} distinct label(s); need at least 2", field="path"
        )
    index = {name: i for i, name in enumerate(classes)}
    return ImageList(
        files=tuple(path for path, _ in rows),
        labels=np.asarray([index[label] for _, label in rows], dtype=np.int64),
        classes=classes,
    )


def _csv_row(
    row: list[str], row_number: int, path_index: int, label_index: int, root: Path, csv_path: Path
) -> tuple[Path, str]:
    where = f"CSV {csv_path.name} row {row_number}"
    if len(row) <= max(path_index, label_index):
        raise DatasetError(
            f"{where}: expected at least {max(path_index, label_index) + 1} columns, got {len(row)}",
            field="path",
        )
    raw_path, label = row[path_index].strip(), row[label_index].strip()
    if not raw_path:
        raise DatasetError(f"{where}: empty image path", field="path")
    if not label:
        raise DatasetError(f"{where}: empty label for image {raw_path!r}", field="path")
    # resolve() follows symlinks, so a link pointing out of the root is caught here as well.
    target = (root / raw_path).resolve()
    if not target.is_relative_to(root):
        raise DatasetError(f"{where}: image path {raw_path!r} points outside {root}", field="path")
    if not target.is_file():
        raise DatasetError(f"{where}: image file {raw_path!r} not found under {root}", field="path")
    return target, label


def describe_csv(
    csv_path: Path,
    image_root: Path | None = None,
    path_column: str = "path",
    label_column: str = "label",
    color: Color = "auto",
    pixel_limit: int = DEFAULT_PIXEL_LIMIT,
) -> DatasetInfo:
    listing = read_csv_listing(csv_path, image_root, path_column, label_column)
    return _describe(listing, color, pixel_limit, "path")


def open_csv(
    csv_path: Path,
    image_root: Path | None = None,
    path_column: str = "path",
    label_column: str = "label",
    color: Color = "auto",
    pixel_limit: int = DEFAULT_PIXEL_LIMIT,
) -> FileSource:
    listing = read_csv_listing(csv_path, image_root, path_column, label_column)
    return FileSource(listing, _describe(listing, color, pixel_limit, "path"), pixel_limit)

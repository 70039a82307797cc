"""Public datasets fetched once and cached: MNIST, Fashion-MNIST, CIFAR-10 and Quick Draw classes.

Everything works offline when the files are already in place. When they are missing and
downloading is off (or fails), a DatasetError says what is missing and where to put it. Every
network access has a timeout so that a dead network gives an error, never a hang.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import torch

from dragdl.engine.data.base import DatasetError, DatasetInfo, TensorSource
from dragdl.engine.data.bitmaps import describe_bitmaps, open_bitmaps

TorchvisionName = Literal["MNIST", "FashionMNIST", "CIFAR10"]
TORCHVISION_NAMES: tuple[str, ...] = get_args(TorchvisionName)
DOWNLOAD_TIMEOUT = 30.0

MNIST_FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)
_MNIST_CLASSES = {
    "MNIST": tuple(str(digit) for digit in range(10)),
    "FashionMNIST": (
        "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
        "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
    ),
}  # fmt: skip
_MNIST_COUNT = 70_000

CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
CIFAR10_MD5 = "c32a1d4ab5d03f1284b67883e8d87530"
CIFAR10_FOLDER = "cifar-10-batches-bin"
CIFAR10_TRAIN_FILES = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
CIFAR10_TEST_FILE = "test_batch.bin"
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
_CIFAR_RECORD = 1 + 3 * 32 * 32
_CIFAR_COUNT = 60_000

QUICKDRAW_URL = "https://storage.googleapis.com/quickdraw_dataset/full/numpy_bitmap/{}.npy"


@contextmanager
def _socket_timeout(seconds: float) -> Iterator[None]:
    # torchvision's downloader calls urlopen() without a timeout; the socket default is the only
    # way to bound it. It is process-wide, hence restored as soon as the download is over.
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds)
    try:
        yield
    finally:
        socket.setdefaulttimeout(previous)


def _unavailable(what: str, where: Path, download: bool, reason: str = "") -> DatasetError:
    how = f"the download failed ({reason})" if download else "downloading is disabled"
    return DatasetError(
        f"{what} is missing from {where} and {how}; put the files there or allow downloading", field="root"
    )


# --- MNIST and Fashion-MNIST (read by torchvision from the raw IDX files) -----------------------


def _mnist_raw(name: str, root: Path) -> Path:
    return root / name / "raw"


def _idx_count(path: Path) -> int:
    with path.open("rb") as fh:
        header = fh.read(8)
    if len(header) < 8 or header[:2] != b"\x00\x00":
        raise DatasetError(f"{path} is not an IDX file", field="root")
    return int.from_bytes(header[4:8], "big")


def _describe_mnist(name: str, root: Path, download: bool) -> DatasetInfo:
    raw = _mnist_raw(name, root)
    classes = _MNIST_CLASSES[name]
    if all((raw / f).is_file() for f in MNIST_FILES):
        count = _idx_count(raw / MNIST_FILES[0]) + _idx_count(raw / MNIST_FILES[2])
        return DatasetInfo(classes=classes, channels=1, size=(28, 28), count=count)
    if not download:
        raise _unavailable(f"{name} ({', '.join(MNIST_FILES)})", raw, download=False)
    return DatasetInfo(classes=classes, channels=1, size=(28, 28), count=_MNIST_COUNT)


def _open_mnist(name: str, root: Path, download: bool) -> TensorSource:
    from torchvision import datasets

    raw = _mnist_raw(name, root)
    if not download and not all((raw / f).is_file() for f in MNIST_FILES):
        raise _unavailable(f"{name} ({', '.join(MNIST_FILES)})", raw, download=False)
    cls = datasets.MNIST if name == "MNIST" else datasets.FashionMNIST
    try:
        with _socket_timeout(DOWNLOAD_TIMEOUT):
            parts = [cls(str(root), train=train, download=download) for train in (True, False)]
    except OSError as exc:  # URLError and HTTPError included
        raise _unavailable(name, raw, download=True, reason=str(exc)) from exc
    except (RuntimeError, AssertionError, TypeError, ValueError) as exc:
        # torchvision raises RuntimeError for failed mirrors as well as for unreadable tensors;
        # when every file is in place the files themselves are at fault.
        if not all((raw / f).is_file() for f in MNIST_FILES):
            raise _unavailable(name, raw, download=True, reason=str(exc).strip()) from exc
        raise DatasetError(f"{name} files in {raw} are not valid IDX files: {exc}", field="root") from exc
    images = torch.cat([part.data for part in parts]).unsqueeze(1).to(torch.uint8)
    labels = torch.cat([part.targets for part in parts]).numpy().astype(np.int64)
    classes = _MNIST_CLASSES[name]
    if labels.size and (labels.min() < 0 or labels.max() >= len(classes)):
        raise DatasetError(f"{name} labels in {raw} must be 0..{len(classes) - 1}", field="root")
    n_train = len(parts[0].data)
    return TensorSource(images, labels, classes, test_indices=np.arange(n_train, len(labels), dtype=np.int64))


# --- CIFAR-10, binary version (the Python version is pickled, which we never load) -------------


def _cifar_missing(folder: Path) -> list[str]:
    return [f for f in (*CIFAR10_TRAIN_FILES, CIFAR10_TEST_FILE) if not (folder / f).is_file()]


def _cifar_classes(folder: Path) -> tuple[str, ...]:
    meta = folder / "batches.meta.txt"
    if not meta.is_file():
        return CIFAR10_CLASSES
    names = tuple(line.strip() for line in meta.read_text(encoding="utf-8").splitlines() if line.strip())
    return names or CIFAR10_CLASSES


def _cifar_records(path: Path) -> int:
    size = path.stat().st_size
    if size == 0 or size % _CIFAR_RECORD:
        raise DatasetError(
            f"{path} is {size} bytes, not a whole number of CIFAR-10 records of {_CIFAR_RECORD} bytes",
            field="root",
        )
    return size // _CIFAR_RECORD


def read_cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """One binary batch: records of 1 label byte then 1024 R, 1024 G and 1024 B bytes (row-major)."""
    _cifar_records(path)
    records = np.fromfile(path, dtype=np.uint8).reshape(-1, _CIFAR_RECORD)
    return records[:, 1:].reshape(-1, 3, 32, 32), records[:, 0].astype(np.int64)


def _ensure_cifar(root: Path, download: bool) -> Path:
    folder = root / CIFAR10_FOLDER
    missing = _cifar_missing(folder)
    if missing and download:
        from torchvision.datasets.utils import download_and_extract_archive

        try:
            with _socket_timeout(DOWNLOAD_TIMEOUT):
                # The md5 is checked before extraction; torchvision extracts with tarfile's
                # "data" filter, which refuses members escaping the target folder.
                download_and_extract_archive(CIFAR10_URL, download_root=str(root), md5=CIFAR10_MD5)
        except (OSError, RuntimeError) as exc:
            raise _unavailable(f"CIFAR-10 ({', '.join(missing)})", folder, True, str(exc)) from exc
        missing = _cifar_missing(folder)
    if missing:
        raise _unavailable(f"CIFAR-10 binary version ({', '.join(missing)})", folder, download)
    return folder


def _describe_cifar(root: Path, download: bool) -> DatasetInfo:
    folder = root / CIFAR10_FOLDER
    if _cifar_missing(folder):
        if not download:
            raise _unavailable(f"CIFAR-10 binary version ({CIFAR10_FOLDER}/*.bin)", folder, download=False)
        return DatasetInfo(classes=CIFAR10_CLASSES, channels=3, size=(32, 32), count=_CIFAR_COUNT)
    count = sum(_cifar_records(folder / f) for f in (*CIFAR10_TRAIN_FILES, CIFAR10_TEST_FILE))
    return DatasetInfo(classes=_cifar_classes(folder), channels=3, size=(32, 32), count=count)


def _open_cifar(root: Path, download: bool) -> TensorSource:
    folder = _ensure_cifar(root, download)
    classes = _cifar_classes(folder)
    batches = [read_cifar_batch(folder / f) for f in (*CIFAR10_TRAIN_FILES, CIFAR10_TEST_FILE)]
    labels = np.concatenate([batch_labels for _, batch_labels in batches])
    if labels.max() >= len(classes):
        raise DatasetError(
            f"CIFAR-10 labels in {folder} go up to {labels.max()} but there are {len(classes)} classes"
        )
    images = torch.from_numpy(np.concatenate([batch_images for batch_images, _ in batches]))
    n_test = len(batches[-1][1])
    return TensorSource(images, labels, classes, test_indices=np.arange(len(labels) - n_test, len(labels)))


def describe_torchvision(name: str, root: Path, download: bool) -> DatasetInfo:
    """Cheap facts: counts come from file headers; nothing is downloaded."""
    if name == "CIFAR10":
        return _describe_cifar(root, download)
    if name in _MNIST_CLASSES:
        return _describe_mnist(name, root, download)
    raise DatasetError(
        f"unknown dataset {name!r} (choose one of {', '.join(TORCHVISION_NAMES)})", field="name"
    )


def open_torchvision(name: str, root: Path, download: bool) -> TensorSource:
    """Train and test parts merged; `test_indices` marks the official test part."""
    if name == "CIFAR10":
        return _open_cifar(root, download)
    if name in _MNIST_CLASSES:
        return _open_mnist(name, root, download)
    raise DatasetError(
        f"unknown dataset {name!r} (choose one of {', '.join(TORCHVISION_NAMES)})", field="name"
    )


# --- Quick Draw ---------------------------------------------------------------------------------


def quickdraw_url(category: str) -> str:
    return QUICKDRAW_URL.format(urllib.parse.quote(category))


def quickdraw_path(category: str, cache_dir: Path) -> Path:
    # The category becomes a file name: refuse anything that could leave the cache folder.
    if not category or category.startswith(".") or any(c in category for c in "/\\\x00"):
        raise DatasetError(f"invalid Quick Draw category {category!r}", field="categories")
    return cache_dir / "quickdraw" / f"{category}.npy"


def fetch_quickdraw(category: str, cache_dir: Path, timeout: float = DOWNLOAD_TIMEOUT) -> Path:
    """Download one category into the cache (temp file, checked, then renamed into place)."""
    target = quickdraw_path(category, cache_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    url = quickdraw_url(category)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{category}-", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            shutil.copyfileobj(response, out)
        array = np.load(tmp, mmap_mode="r", allow_pickle=False)
        if not isinstance(array, np.ndarray) or array.ndim != 2:
            raise ValueError(f"unexpected content shaped {getattr(array, 'shape', None)}")
        del array
        os.replace(tmp, target)
    except urllib.error.HTTPError as exc:
        reason = "no such category, HTTP 404" if exc.code == 404 else f"HTTP {exc.code}"
        raise _quickdraw_missing(category, target, f"the download failed ({reason})") from exc
    except urllib.error.URLError as exc:
        raise _quickdraw_missing(category, target, f"the download failed ({exc.reason})") from exc
    except (OSError, ValueError, EOFError) as exc:
        raise _quickdraw_missing(category, target, f"the download failed ({exc})") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _quickdraw_missing(category: str, target: Path, reason: str) -> DatasetError:
    return DatasetError(
        f"Quick Draw category {category!r} is not in the cache and {reason}; download "
        f"{quickdraw_url(category)} and save it as {target}",
        field="categories",
    )


def _quickdraw_files(categories: Sequence[str], cache_dir: Path) -> tuple[list[Path], list[str]]:
    if len(set(categories)) != len(categories):
        raise DatasetError("Quick Draw categories must not repeat", field="categories")
    paths = [quickdraw_path(category, cache_dir) for category in categories]
    return paths, [c for c, p in zip(categories, paths, strict=True) if not p.is_file()]


def describe_quickdraw(
    categories: Sequence[str], cache_dir: Path, max_per_class: int, download: bool
) -> DatasetInfo:
    """From the cached array headers; categories still to download are assumed full (every Quick
    Draw category has well over 100k drawings), so the count is exact for any sane max_per_class."""
    paths, missing = _quickdraw_files(categories, cache_dir)
    if missing and not download:
        raise _quickdraw_missing(missing[0], quickdraw_path(missing[0], cache_dir), "downloading is disabled")
    if missing:
        return DatasetInfo(
            classes=tuple(categories), channels=1, size=(28, 28), count=max_per_class * len(categories)
        )
    return describe_bitmaps(paths, max_per_class, field="categories")


def open_quickdraw(
    categories: Sequence[str], cache_dir: Path, max_per_class: int, download: bool, invert: bool = False
) -> TensorSource:
    """Class order is the order of `categories`; only missing categories touch the network."""
    paths, missing = _quickdraw_files(categories, cache_dir)
    for category in missing:
        if not download:
            raise _quickdraw_missing(category, quickdraw_path(category, cache_dir), "downloading is disabled")
        fetch_quickdraw(category, cache_dir)
    return open_bitmaps(paths, max_per_class, invert, field="categories")

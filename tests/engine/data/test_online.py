"""Online datasets, tested offline on small files written in the exact published formats."""

import io
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dragdl.engine.data import online
from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.online import (
    describe_quickdraw,
    describe_torchvision,
    open_quickdraw,
    open_torchvision,
    quickdraw_url,
)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the network must not be used")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


# --- MNIST / Fashion-MNIST (raw IDX files read by torchvision) ----------------------------------


def write_idx(path: Path, array: np.ndarray) -> None:
    """IDX: two zero bytes, type 0x08 (uint8), number of dims, big-endian int32 dims, data."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def write_mnist(root: Path, name: str, n_train: int, n_test: int) -> tuple[np.ndarray, np.ndarray]:
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(n_train + n_test, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=n_train + n_test, dtype=np.uint8)
    write_idx(raw / "train-images-idx3-ubyte", images[:n_train])
    write_idx(raw / "train-labels-idx1-ubyte", labels[:n_train])
    write_idx(raw / "t10k-images-idx3-ubyte", images[n_train:])
    write_idx(raw / "t10k-labels-idx1-ubyte", labels[n_train:])
    return images, labels


@pytest.mark.usefixtures("no_network")
def test_mnist_merges_train_and_test_with_official_test_indices(tmp_path: Path) -> None:
    images, labels = write_mnist(tmp_path, "MNIST", n_train=6, n_test=4)
    source = open_torchvision("MNIST", tmp_path, download=True)
    assert source.info.classes == tuple(str(d) for d in range(10))
    assert (source.info.channels, source.info.size, source.info.count) == (1, (28, 28), 10)
    assert source.test_indices is not None
    assert source.test_indices.tolist() == [6, 7, 8, 9]
    assert source.labels.tolist() == labels.tolist()
    assert np.array_equal(source.image(7)[0].numpy(), images[7])
    assert describe_torchvision("MNIST", tmp_path, download=False) == source.info


@pytest.mark.usefixtures("no_network")
def test_fashion_mnist_reads_its_own_folder_and_class_names(tmp_path: Path) -> None:
    write_mnist(tmp_path, "FashionMNIST", n_train=3, n_test=2)
    source = open_torchvision("FashionMNIST", tmp_path, download=False)
    assert source.info.classes[0] == "T-shirt/top"
    assert len(source) == 5


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("name", ["MNIST", "FashionMNIST", "CIFAR10"])
def test_missing_files_without_download_give_a_clear_error(tmp_path: Path, name: str) -> None:
    for call in (describe_torchvision, open_torchvision):
        with pytest.raises(DatasetError, match=f"missing from {tmp_path}.*downloading is disabled"):
            call(name, tmp_path, False)


def test_describe_never_downloads(tmp_path: Path, no_network: None) -> None:
    assert describe_torchvision("MNIST", tmp_path, download=True).count == 70_000
    assert describe_torchvision("CIFAR10", tmp_path, download=True).count == 60_000


def test_failed_mnist_download_is_a_dataset_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(*args: Any, **kwargs: Any) -> Any:
        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(DatasetError, match=r"MNIST is missing .* the download failed"):
        open_torchvision("MNIST", tmp_path, download=True)


def test_corrupt_idx_file_is_a_dataset_error(tmp_path: Path, no_network: None) -> None:
    write_mnist(tmp_path, "MNIST", n_train=2, n_test=2)
    (tmp_path / "MNIST" / "raw" / "t10k-images-idx3-ubyte").write_bytes(b"\x00\x00\x0d\x01" + b"\0" * 8)
    with pytest.raises(DatasetError, match="not valid IDX files"):
        open_torchvision("MNIST", tmp_path, download=False)


# --- CIFAR-10 binary ----------------------------------------------------------------------------


def write_cifar(root: Path, per_batch: int = 2, n_test: int = 3) -> tuple[np.ndarray, np.ndarray]:
    folder = root / "cifar-10-batches-bin"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    total = 5 * per_batch + n_test
    images = rng.integers(0, 256, size=(total, 3, 32, 32), dtype=np.uint8)
    labels = rng.integers(0, 10, size=total, dtype=np.uint8)
    records = np.concatenate([labels[:, None], images.reshape(total, -1)], axis=1)
    for i in range(5):
        (folder / f"data_batch_{i + 1}.bin").write_bytes(
            records[i * per_batch : (i + 1) * per_batch].tobytes()
        )
    (folder / "test_batch.bin").write_bytes(records[5 * per_batch :].tobytes())
    names = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
    (folder / "batches.meta.txt").write_text("\n".join(names) + "\n\n")
    return images, labels


@pytest.mark.usefixtures("no_network")
def test_cifar10_binary_records_are_label_then_rgb_planes(tmp_path: Path) -> None:
    images, labels = write_cifar(tmp_path)
    source = open_torchvision("CIFAR10", tmp_path, download=True)
    assert source.info.classes[:2] == ("airplane", "automobile")
    assert (source.info.channels, source.info.size, source.info.count) == (3, (32, 32), 13)
    assert source.labels.tolist() == labels.tolist()
    assert np.array_equal(source.image(4).numpy(), images[4])
    assert source.test_indices is not None
    assert source.test_indices.tolist() == [10, 11, 12]
    assert describe_torchvision("CIFAR10", tmp_path, download=False) == source.info


def test_truncated_cifar_batch_names_the_file(tmp_path: Path) -> None:
    write_cifar(tmp_path)
    batch = tmp_path / "cifar-10-batches-bin" / "data_batch_3.bin"
    batch.write_bytes(batch.read_bytes()[:-5])
    with pytest.raises(DatasetError, match=r"data_batch_3\.bin is 6141 bytes"):
        open_torchvision("CIFAR10", tmp_path, download=False)


def test_cifar_download_uses_the_official_archive_and_md5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, str, str | None]] = []

    def fake_download(url: str, download_root: str, md5: str | None = None, **kwargs: Any) -> None:
        calls.append((url, download_root, md5))
        write_cifar(Path(download_root))

    import torchvision.datasets.utils as tv_utils

    monkeypatch.setattr(tv_utils, "download_and_extract_archive", fake_download)
    assert len(open_torchvision("CIFAR10", tmp_path, download=True)) == 13
    assert calls == [(online.CIFAR10_URL, str(tmp_path), "c32a1d4ab5d03f1284b67883e8d87530")]


# --- Quick Draw ---------------------------------------------------------------------------------


def fill_cache(cache: Path, category: str, rows: int) -> np.ndarray:
    (cache / "quickdraw").mkdir(parents=True, exist_ok=True)
    array = np.random.default_rng(rows).integers(0, 256, size=(rows, 784), dtype=np.uint8)
    np.save(cache / "quickdraw" / f"{category}.npy", array)
    return array


def test_quickdraw_url_quotes_spaces() -> None:
    assert quickdraw_url("hot air balloon") == (
        "https://storage.googleapis.com/quickdraw_dataset/full/numpy_bitmap/hot%20air%20balloon.npy"
    )


@pytest.mark.usefixtures("no_network")
def test_quickdraw_from_a_filled_cache_needs_no_network(tmp_path: Path) -> None:
    balloons = fill_cache(tmp_path, "hot air balloon", 5)
    fill_cache(tmp_path, "cat", 4)
    info = describe_quickdraw(["hot air balloon", "cat"], tmp_path, max_per_class=3, download=True)
    assert (info.classes, info.count, info.size) == (("hot air balloon", "cat"), 6, (28, 28))
    source = open_quickdraw(["hot air balloon", "cat"], tmp_path, max_per_class=3, download=True)
    assert source.labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert np.array_equal(source.image(0).reshape(-1).numpy(), balloons[0])


@pytest.mark.usefixtures("no_network")
def test_quickdraw_missing_category_without_download_says_where_to_put_it(tmp_path: Path) -> None:
    fill_cache(tmp_path, "cat", 4)
    expected = (
        r"'dog' is not in the cache and downloading is disabled; "
        rf"download .*/dog\.npy and save it as {tmp_path}/quickdraw/dog\.npy"
    )
    for call in (describe_quickdraw, open_quickdraw):
        with pytest.raises(DatasetError, match=expected) as info:
            call(["cat", "dog"], tmp_path, 10, False)
        assert info.value.field == "categories"


def test_quickdraw_download_goes_through_a_temp_file_with_a_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill_cache(tmp_path, "cat", 4)
    payload = io.BytesIO()
    np.save(payload, np.full((3, 784), 7, dtype=np.uint8))
    seen: list[tuple[str, float]] = []

    def fake_urlopen(url: str, timeout: float) -> io.BytesIO:
        seen.append((url, timeout))
        return io.BytesIO(payload.getvalue())

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    source = open_quickdraw(["cat", "ice cream"], tmp_path, max_per_class=10, download=True)
    assert seen == [(quickdraw_url("ice cream"), 30.0)]
    assert len(source) == 7
    assert sorted(p.name for p in (tmp_path / "quickdraw").iterdir()) == ["cat.npy", "ice cream.npy"]


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (urllib.error.URLError("timed out"), r"the download failed \(timed out\)"),
        (
            urllib.error.HTTPError("u", 404, "Not Found", Message(), None),
            r"the download failed \(no such category",
        ),
    ],
)
def test_quickdraw_failed_download_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Exception, message: str
) -> None:
    def failing(*args: Any, **kwargs: Any) -> Any:
        raise failure

    monkeypatch.setattr(urllib.request, "urlopen", failing)
    with pytest.raises(DatasetError, match=rf"'catt' is not in the cache and {message}"):
        open_quickdraw(["catt", "dog"], tmp_path, 10, True)
    assert list((tmp_path / "quickdraw").iterdir()) == []


def test_quickdraw_category_cannot_escape_the_cache(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="invalid Quick Draw category"):
        describe_quickdraw(["../x", "cat"], tmp_path, 10, False)

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from dragdl.engine.data import builtin
from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.builtin import describe_builtin, open_builtin


def test_mnist_5k_is_uint8_28x28_with_digit_classes() -> None:
    source = open_builtin("mnist-5k")
    images = source.images()
    assert images is not None
    assert images.dtype == torch.uint8
    assert tuple(images.shape) == (5000, 1, 28, 28)
    assert source.info.classes == tuple(str(d) for d in range(10))
    assert np.bincount(source.labels).tolist() == [500] * 10
    assert int(images.max()) == 255
    assert source.labels.dtype == np.int64


def test_digits_is_scaled_from_0_16_to_0_255() -> None:
    source = open_builtin("digits")
    images = source.images()
    assert images is not None
    assert tuple(images.shape) == (1797, 1, 8, 8)
    assert int(images.max()) == 255
    assert sorted(set(source.labels.tolist())) == list(range(10))
    from sklearn.datasets import load_digits

    raw = load_digits().images[0]
    expected = np.rint(raw * 255 / 16).astype(np.uint8)
    assert np.array_equal(source.image(0)[0].numpy(), expected)


@pytest.mark.parametrize("name", ["mnist-5k", "digits"])
def test_static_describe_matches_the_loaded_data(name: str) -> None:
    assert describe_builtin(name) == open_builtin(name).info


def test_builtin_data_is_loaded_once_per_process() -> None:
    assert open_builtin("digits").images() is open_builtin("digits").images()


def test_unknown_builtin_name_is_a_dataset_error_on_the_name_field() -> None:
    with pytest.raises(DatasetError, match="unknown built-in dataset 'cifar'") as info:
        describe_builtin("cifar")
    assert info.value.field == "name"


def test_a_builtin_dataset_is_converted_once_into_the_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = open_builtin("mnist-5k", tmp_path)
    [cached] = (tmp_path / "builtin").glob("mnist-5k-*.npz")

    def no_conversion(name: str) -> Any:
        raise AssertionError("read from the cache, not converted again")

    monkeypatch.setattr(builtin, "_convert", no_conversion)
    builtin._load.cache_clear()  # a new process: only the file is left
    again = open_builtin("mnist-5k", tmp_path)
    assert torch.equal(again.images(), first.images())  # type: ignore[arg-type]
    assert np.array_equal(again.labels, first.labels)
    assert list((tmp_path / "builtin").iterdir()) == [cached]  # no temporary file left behind


def test_a_damaged_cache_file_is_converted_again(tmp_path: Path) -> None:
    expected = open_builtin("digits", tmp_path).images()
    [cached] = (tmp_path / "builtin").glob("digits-*.npz")
    for damage in (b"not a zip file", cached.read_bytes()[:100]):
        cached.write_bytes(damage)
        builtin._load.cache_clear()
        assert torch.equal(open_builtin("digits", tmp_path).images(), expected)  # type: ignore[arg-type]
        assert builtin._read_cached(cached, describe_builtin("digits")) is not None  # written anew
    # Arrays of the wrong shape (another version's, or tampered with) are not believed either.
    np.savez(cached, pixels=np.zeros((3, 1, 8, 8), np.uint8), labels=np.zeros(3, np.int64))
    builtin._load.cache_clear()
    assert torch.equal(open_builtin("digits", tmp_path).images(), expected)  # type: ignore[arg-type]


def test_a_cache_dir_that_cannot_be_written_still_gives_the_data(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("the cache dir's parent is a file: mkdir fails")
    builtin._load.cache_clear()
    source = open_builtin("digits", blocked / "cache")
    assert tuple(source.images().shape) == (1797, 1, 8, 8)  # type: ignore[union-attr]

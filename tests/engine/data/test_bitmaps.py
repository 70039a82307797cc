from pathlib import Path

import numpy as np
import pytest

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.bitmaps import describe_bitmaps, open_bitmaps


def write_class(folder: Path, name: str, rows: int, side: int = 28, seed: int = 0) -> np.ndarray:
    folder.mkdir(parents=True, exist_ok=True)
    array = np.random.default_rng(seed).integers(0, 256, size=(rows, side * side), dtype=np.uint8)
    np.save(folder / f"{name}.npy", array)
    return array


def test_classes_are_file_names_and_count_respects_max_per_class(tmp_path: Path) -> None:
    write_class(tmp_path, "dog", 7)
    write_class(tmp_path, "cat", 3)
    info = describe_bitmaps(tmp_path, max_per_class=5)
    assert info.classes == ("cat", "dog")
    assert (info.channels, info.size, info.count) == (1, (28, 28), 8)


def test_open_takes_the_first_rows_of_each_file(tmp_path: Path) -> None:
    cats = write_class(tmp_path, "cat", 6, seed=1)
    dogs = write_class(tmp_path, "dog", 6, seed=2)
    source = open_bitmaps(tmp_path, max_per_class=4)
    images = source.images()
    assert images is not None
    assert tuple(images.shape) == (8, 1, 28, 28)
    assert source.labels.tolist() == [0] * 4 + [1] * 4
    assert np.array_equal(images[:4].reshape(4, -1).numpy(), cats[:4])
    assert np.array_equal(images[4:].reshape(4, -1).numpy(), dogs[:4])


def test_invert_flips_intensities(tmp_path: Path) -> None:
    cats = write_class(tmp_path, "cat", 2)
    write_class(tmp_path, "dog", 2)
    image = open_bitmaps(tmp_path, invert=True).image(0)
    assert np.array_equal(image.reshape(-1).numpy(), 255 - cats[0])


def test_non_square_rows_name_the_file(tmp_path: Path) -> None:
    write_class(tmp_path, "cat", 2)
    np.save(tmp_path / "dog.npy", np.zeros((2, 700), dtype=np.uint8))
    with pytest.raises(DatasetError, match=r"dog\.npy has rows of 700 values, which is not a square"):
        describe_bitmaps(tmp_path)


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((2, 28, 28), dtype=np.uint8), "must hold a 2-D array"),
        (np.zeros((2, 784), dtype=np.float32), "must hold uint8 values, got float32"),
        (np.zeros((0, 784), dtype=np.uint8), "has no rows"),
    ],
)
def test_bad_arrays_name_the_file(tmp_path: Path, array: np.ndarray, message: str) -> None:
    write_class(tmp_path, "cat", 2)
    np.save(tmp_path / "dog.npy", array)
    with pytest.raises(DatasetError, match=rf"dog\.npy.*{message}|{message}.*dog\.npy"):
        describe_bitmaps(tmp_path)


def test_pickled_arrays_are_refused(tmp_path: Path) -> None:
    write_class(tmp_path, "cat", 2)
    np.save(tmp_path / "dog.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DatasetError, match=r"cannot read bitmap file .*dog\.npy") as caught:
        open_bitmaps(tmp_path)
    assert "Python objects" in str(caught.value)
    assert "allow_pickle" not in str(caught.value) and "unsafely" not in str(caught.value)


def test_a_text_file_named_npy_is_not_a_readable_array(tmp_path: Path) -> None:
    """numpy reads a file without the .npy magic as a pickle and advises loading it unsafely; that
    advice must not reach the user."""
    write_class(tmp_path, "dog", 2)
    (tmp_path / "cats.npy").write_text("just some text, not an array\n")
    expected = r"cannot read bitmap file .*cats\.npy: not a readable \.npy"
    with pytest.raises(DatasetError, match=expected) as caught:
        describe_bitmaps(tmp_path)
    assert "allow_pickle" not in str(caught.value) and "unsafely" not in str(caught.value)


def test_mixed_bitmap_sizes_are_rejected(tmp_path: Path) -> None:
    write_class(tmp_path, "cat", 2)
    write_class(tmp_path, "dog", 2, side=16)
    with pytest.raises(DatasetError, match=r"dog\.npy holds 16x16 images but cat\.npy holds 28x28"):
        open_bitmaps(tmp_path)


def test_a_single_class_is_rejected(tmp_path: Path) -> None:
    write_class(tmp_path, "cat", 2)
    with pytest.raises(DatasetError, match=r"1 \.npy file"):
        describe_bitmaps(tmp_path)


def test_explicit_file_list_keeps_its_order(tmp_path: Path) -> None:
    write_class(tmp_path, "cat", 2)
    write_class(tmp_path, "dog", 3)
    source = open_bitmaps([tmp_path / "dog.npy", tmp_path / "cat.npy"])
    assert source.info.classes == ("dog", "cat")
    assert source.labels.tolist() == [0, 0, 0, 1, 1]

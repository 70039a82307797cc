import numpy as np
import pytest
import torch

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

"""The built-in sequence sets: what they hold, that describe() matches, and that waves are learnable."""

from __future__ import annotations

import numpy as np
import pytest

from dragdl.engine.data import sequence_builtin
from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.builtin import open_builtin
from dragdl.engine.data.sequence_builtin import (
    SEQUENCE_BUILTIN_NAMES,
    describe_sequence_builtin,
    open_sequence_builtin,
)


@pytest.mark.parametrize("name", SEQUENCE_BUILTIN_NAMES)
def test_static_describe_matches_the_loaded_data(name: str) -> None:
    assert describe_sequence_builtin(name) == open_sequence_builtin(name).info


def test_seq_mnist_reads_each_image_row_as_a_step() -> None:
    source = open_sequence_builtin("seq-mnist")
    images = open_builtin("mnist-5k")
    pixels = images.images()
    assert pixels is not None
    assert source.values.shape == (5000, 28, 28) and source.values.dtype == np.float32
    assert source.values.max() == 1.0
    np.testing.assert_allclose(source.values[7, 14], pixels[7, 0, 14].numpy() / 255.0)
    assert source.labels is not None
    assert np.array_equal(source.labels, images.labels)
    assert source.test_indices is images.test_indices


def test_waves_are_deterministic_balanced_and_distinct() -> None:
    waves = open_sequence_builtin("waves")
    assert waves.values.shape == (1500, 64, 1)
    assert waves.classes == ("sine", "square", "sawtooth")
    assert waves.labels is not None
    assert np.bincount(waves.labels).tolist() == [500, 500, 500]
    assert len({waves.values[i].tobytes() for i in range(50)}) == 50
    # Generated again from scratch (not the process's cached copy), the set is the same.
    values, shapes, _ = sequence_builtin._waves.__wrapped__()
    np.testing.assert_array_equal(values, waves.values)
    np.testing.assert_array_equal(shapes, waves.labels)


def test_waves_frequency_targets_are_the_frequencies() -> None:
    source = open_sequence_builtin("waves-frequency")
    targets = source.target_values()
    assert targets.dtype == np.float64 and targets.shape == (1500,)
    assert targets.min() >= 1.0 and targets.max() <= 6.0
    assert source.labels is None
    # A sine's zero crossings count its cycles: the target agrees with the series itself.
    waves = open_sequence_builtin("waves")
    assert waves.labels is not None
    sine = np.flatnonzero(waves.labels == 0)[:200]
    smooth = np.stack([np.convolve(waves.values[i, :, 0], np.ones(5) / 5, mode="same") for i in sine])
    crossings = (np.diff(np.sign(smooth[:, 2:-2]), axis=1) != 0).sum(axis=1)
    correlation = np.corrcoef(crossings, targets[sine])[0, 1]
    assert correlation > 0.9


def test_waves_shapes_are_separable_by_a_simple_feature() -> None:
    # Square waves sit near +-amplitude; sawtooths spread evenly; sines between: the classes are
    # different enough that a network must reach the issue's >= 95% without effort.
    source = open_sequence_builtin("waves")
    assert source.labels is not None
    values = source.values[:, :, 0]
    spread = np.abs(values).mean(axis=1) / np.abs(values).max(axis=1)
    means = [spread[source.labels == k].mean() for k in range(3)]
    assert means[1] > means[0] > means[2]


def test_unknown_name_is_a_dataset_error_on_the_name_field() -> None:
    with pytest.raises(DatasetError, match="unknown built-in sequence set 'ecg'") as info:
        describe_sequence_builtin("ecg")
    assert info.value.field == "name"

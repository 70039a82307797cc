"""SequenceSource, SequenceLimits and the shared helpers of the sequence readers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.sequences import (
    SequenceLimits,
    SequenceSource,
    fill_missing,
    iter_lines,
    labels_from_text,
)


def test_a_source_reports_its_shape_and_fixed_length() -> None:
    values = np.zeros((3, 5, 2), dtype=np.float32)
    source = SequenceSource(values, labels=np.array([0, 1, 0]), classes=("a", "b"))
    assert (source.count, source.max_length, source.features, source.fixed_length) == (3, 5, 2, 5)
    assert source.lengths.tolist() == [5, 5, 5]
    varying = SequenceSource(values, np.array([5, 2, 3]), labels=np.array([0, 1, 0]), classes=("a", "b"))
    assert varying.fixed_length is None
    assert varying.info.shape == (None, 2) and varying.max_length == 5
    assert varying.sequence(1).shape == (2, 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"labels": np.array([0, 2, 0]), "classes": ("a", "b")}, "indices into 2 classes"),
        ({"targets": np.array([1.0])}, r"targets must be \(N,\)"),
        ({}, "needs class labels or numeric targets"),
        ({"targets": np.zeros(3), "lengths": np.array([1, 6, 2])}, "within 1..5"),
        ({"targets": np.zeros(3), "test_indices": np.array([3])}, "within 0..2"),
    ],
)
def test_inconsistent_arrays_are_programming_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SequenceSource(np.zeros((3, 5, 1), dtype=np.float32), **kwargs)  # type: ignore[arg-type]


def test_limits_name_where_and_the_limit() -> None:
    limits = SequenceLimits(max_values=1000)
    limits.check_size("x.ts", 10, 10, 10)
    with pytest.raises(DatasetError, match=r"x.ts, line 3: 1,100 values .* over the limit of 1,000") as info:
        limits.check_size("x.ts, line 3", 11, 10, 10)
    assert info.value.code == "too_large"


def test_fill_missing_interpolates_each_feature_and_extends_the_ends() -> None:
    series = np.array([[np.nan, 1.0], [2.0, np.nan], [np.nan, 5.0], [4.0, np.nan]], dtype=np.float32)
    filled = fill_missing(series, "s")
    assert filled[:, 0].tolist() == [2.0, 2.0, 3.0, 4.0]
    assert filled[:, 1].tolist() == [1.0, 3.0, 5.0, 5.0]


def test_labels_from_text() -> None:
    labels, classes, targets = labels_from_text(["10", "9", "10", "2"], "l")
    assert classes == ("2", "9", "10")  # sorted as numbers, not as text
    assert labels is not None and labels.tolist() == [2, 1, 2, 0]
    assert targets is None
    labels, classes, targets = labels_from_text(["0.5", "2", "1.25"], "l")
    assert labels is None and classes == ()
    assert targets is not None and targets.tolist() == [0.5, 2.0, 1.25]
    labels, classes, _ = labels_from_text(["walk", "run", "walk"], "l")
    assert classes == ("run", "walk")
    with pytest.raises(DatasetError, match="l: sample 1 has an empty label"):
        labels_from_text(["a", ""], "l")


def test_iter_lines_refuses_text_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bin.csv"
    path.write_bytes(b"a,b\n\xff\xfe,1\n")
    with pytest.raises(DatasetError, match=r"bin.csv, line 2: not UTF-8 text"):
        list(iter_lines(path, 10, SequenceLimits()))


def test_iter_lines_counts_a_last_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "n.txt"
    path.write_text("1\n2\n3")
    assert list(iter_lines(path, 3, SequenceLimits())) == ["1", "2", "3"]
    with pytest.raises(DatasetError, match=r"n.txt, line 3: more than 2 rows"):
        list(iter_lines(path, 2, SequenceLimits(), "rows"))

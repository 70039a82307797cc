"""The .ts reader: every layout the UCR/UEA archive uses, and every hostile file named by line."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from tests.engine.data.sequence_samples import series_set, ts_text, write_ts

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.sequences import SequenceLimits
from dragdl.engine.data.ts_format import open_ts, read_ts


def test_univariate_equal_length_with_classes(tmp_path: Path) -> None:
    series = series_set(6, 1, 20)
    labels = ["up", "down", "flat", "up", "down", "flat"]
    source = read_ts(write_ts(tmp_path / "a.ts", series, labels, ["up", "down", "flat"]))
    assert source.values.shape == (6, 20, 1)
    assert source.values.dtype == np.float32
    assert source.fixed_length == 20
    assert source.classes == ("up", "down", "flat")
    assert source.labels is not None
    assert source.labels.tolist() == [0, 1, 2, 0, 1, 2]
    np.testing.assert_array_equal(source.values[3], series[3])
    assert source.test_indices is None


def test_multivariate_unequal_lengths_are_padded_with_lengths(tmp_path: Path) -> None:
    series = series_set(4, 3, [5, 9, 7, 9])
    source = read_ts(write_ts(tmp_path / "m.ts", series, ["a", "b", "a", "b"], ["a", "b"]))
    assert source.values.shape == (4, 9, 3)
    assert source.lengths.tolist() == [5, 9, 7, 9]
    assert source.fixed_length is None
    assert source.features == 3
    np.testing.assert_array_equal(source.sequence(0), series[0])
    assert not source.values[0, 5:].any()


def test_numeric_targets(tmp_path: Path) -> None:
    series = series_set(3, 2, 4)
    source = read_ts(write_ts(tmp_path / "r.ts", series, [1.5, -2.0, 3.25]))
    assert source.labels is None
    assert source.classes == ()
    assert source.target_values().tolist() == [1.5, -2.0, 3.25]
    with pytest.raises(DatasetError) as info:
        source.class_labels()
    assert info.value.code == "target_not_classes"


def test_class_names_read_as_numbers_for_regression_naming_the_sample(tmp_path: Path) -> None:
    series = series_set(3, 1, 4)
    numeric = read_ts(write_ts(tmp_path / "n.ts", series, ["1", "2", "1"], ["1", "2"]))
    assert numeric.target_values().tolist() == [1.0, 2.0, 1.0]
    words = read_ts(write_ts(tmp_path / "w.ts", series, ["1", "x", "1"], ["1", "x"]))
    with pytest.raises(DatasetError, match=r"sample 1 \(w.ts, line \d+\): the label 'x'") as info:
        words.target_values()
    assert info.value.code == "target_not_numeric"


def test_missing_values_are_interpolated_within_the_series(tmp_path: Path) -> None:
    text = "@univariate true\n@equalLength true\n@seriesLength 5\n@classLabel true a b\n@data\n"
    text += "?,1,?,3,?:a\n0,0,0,0,0:b\n"
    source = read_ts(_write(tmp_path / "gaps.ts", text))
    assert source.values[0, :, 0].tolist() == [1.0, 1.0, 2.0, 3.0, 3.0]


def test_a_dimension_with_no_values_is_named(tmp_path: Path) -> None:
    text = "@dimensions 2\n@classLabel true a\n@data\n1,2:?,?:a\n"
    with pytest.raises(DatasetError, match=r"empty.ts, line 4: dimension 2 has no values"):
        read_ts(_write(tmp_path / "empty.ts", text))


def test_a_train_test_pair_keeps_the_test_split(tmp_path: Path) -> None:
    write_ts(tmp_path / "Gun_TRAIN.ts", series_set(5, 1, 8), list("ababa"), ["a", "b"])
    write_ts(tmp_path / "Gun_TEST.ts", series_set(3, 1, 8, seed=1), list("bba"), ["a", "b"])
    source = open_ts(tmp_path)
    assert source.count == 8
    assert source.test_indices is not None
    assert source.test_indices.tolist() == [5, 6, 7]
    assert source.labels is not None
    assert source.labels[5:].tolist() == [1, 1, 0]


def test_a_folder_of_unrelated_ts_files_is_refused(tmp_path: Path) -> None:
    for name in ("a.ts", "b.ts", "c.ts"):
        write_ts(tmp_path / name, series_set(2, 1, 3), ["a", "a"], ["a"])
    with pytest.raises(DatasetError, match=r"a <name>_TRAIN\.ts and <name>_TEST\.ts pair"):
        open_ts(tmp_path)


# --- hostile and broken files ------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("header", "line", "limit"),
    [("@seriesLength 1000000000", 2, "100,000"), ("@dimensions 1000000000", 2, "10,000")],
)
def test_a_header_declaring_absurd_sizes_is_refused_at_its_line(
    tmp_path: Path, header: str, line: int, limit: str
) -> None:
    text = f"@problemName Huge\n{header}\n@classLabel true a\n@data\n1,2:a\n"
    with pytest.raises(DatasetError, match=rf"huge.ts, line {line} .* over the limit of {limit}") as info:
        read_ts(_write(tmp_path / "huge.ts", text))
    assert info.value.code == "too_large"


def test_a_file_without_data_is_truncated(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"cut.ts, line 4: the file ends before @data") as info:
        read_ts(_write(tmp_path / "cut.ts", "@problemName Cut\n@univariate true\n@classLabel true a b\n"))
    assert info.value.code == "truncated"


def test_a_last_line_cut_short_is_called_truncated(tmp_path: Path) -> None:
    series = series_set(3, 2, 6)
    text = ts_text(series, ["a", "b", "a"], ["a", "b"])
    cut = text[: text.rindex(":", 0, len(text) - 4) - 3]  # inside the last series' first dimension
    with pytest.raises(DatasetError, match=r"cut.ts, line 13: .*looks truncated") as info:
        read_ts(_write(tmp_path / "cut.ts", cut))
    assert info.value.code == "truncated"


def test_unequal_lengths_where_equal_are_declared(tmp_path: Path) -> None:
    series = series_set(3, 1, [6, 6, 5])
    text = ts_text(series, ["a", "b", "a"], ["a", "b"], equal_length=True)
    with pytest.raises(DatasetError, match=r"eq.ts, line 13: 5 steps, but @equalLength true") as info:
        read_ts(_write(tmp_path / "eq.ts", text))
    assert info.value.code == "length_mismatch"


def test_a_label_not_declared_is_named_with_its_line(tmp_path: Path) -> None:
    text = ts_text(series_set(2, 1, 3), ["a", "zebra"], ["a", "b"])
    with pytest.raises(
        DatasetError, match=r"l.ts, line 12: the label 'zebra' is not declared in @classLabel \(a, b\)"
    ):
        read_ts(_write(tmp_path / "l.ts", text))


def test_a_value_that_is_not_a_number_is_named(tmp_path: Path) -> None:
    text = "@classLabel true a\n@data\n1,2,3:a\n1,x2,3:a\n"
    with pytest.raises(DatasetError, match=r"v.ts, line 4, dimension 1, value 2: 'x2' is not a number"):
        read_ts(_write(tmp_path / "v.ts", text))


def test_a_line_with_the_wrong_number_of_dimensions(tmp_path: Path) -> None:
    text = "@dimensions 2\n@classLabel true a\n@data\n1,2:3,4:a\n1,2:a\n"
    with pytest.raises(DatasetError, match=r"d.ts, line 5: 1 dimensions where 2 are expected"):
        read_ts(_write(tmp_path / "d.ts", text))


def test_no_labels_declared_is_refused_at_data(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"n.ts, line 2: the header declares neither"):
        read_ts(_write(tmp_path / "n.ts", "@univariate true\n@data\n1,2\n"))


def test_too_many_lines_are_refused_while_counting_not_parsing(tmp_path: Path) -> None:
    path = tmp_path / "many.ts"
    with path.open("w") as handle:
        handle.write("@classLabel true a\n@data\n")
        for _ in range(10):
            handle.write("1,2,3:a\n" * 1_000_000)
    start = time.perf_counter()
    with pytest.raises(DatasetError, match=r"many.ts, line 1,010,001: more than 1,010,000 lines") as info:
        read_ts(path)
    assert time.perf_counter() - start < 3
    assert info.value.code == "too_large"


def test_total_values_over_the_limit(tmp_path: Path) -> None:
    text = ts_text(series_set(4, 2, 10), list("abab"), ["a", "b"])
    limits = SequenceLimits(max_values=50)
    with pytest.raises(DatasetError, match=r"t.ts, line 13: 60 values in all is over the limit of 50"):
        read_ts(_write(tmp_path / "t.ts", text), limits)


def test_padding_counts_against_the_limit_before_allocating(tmp_path: Path) -> None:
    # Three short series and one long one: few values, but the padded array would hold 4 x 40.
    text = ts_text(series_set(4, 1, [2, 2, 2, 40]), list("abab"), ["a", "b"])
    with pytest.raises(DatasetError, match=r"p.ts: 160 values .* over the limit of 100"):
        read_ts(_write(tmp_path / "p.ts", text), SequenceLimits(max_values=100))


def test_an_over_long_line_is_refused(tmp_path: Path) -> None:
    text = "@classLabel true a\n@data\n" + ",".join(["1"] * 600) + ":a\n"
    with pytest.raises(DatasetError, match=r"long.ts, line 3: longer than the limit of 1,000 characters"):
        read_ts(_write(tmp_path / "long.ts", text), SequenceLimits(max_line_chars=1000))


def test_a_test_file_label_missing_from_the_train_classes_is_named(tmp_path: Path) -> None:
    write_ts(tmp_path / "G_TRAIN.ts", series_set(2, 1, 4), ["a", "b"], ["a", "b"])
    write_ts(tmp_path / "G_TEST.ts", series_set(2, 1, 4), ["a", "c"], ["a", "c"])
    with pytest.raises(
        DatasetError, match=r"G_TEST.ts, line 12: the label 'c' is not one of G_TRAIN.ts's classes"
    ):
        open_ts(tmp_path)


def test_timestamped_series_are_refused_at_their_header(tmp_path: Path) -> None:
    text = "@problemName T\n@timeStamps true\n@classLabel true a\n@data\n(0,1),(1,2):a\n"
    with pytest.raises(DatasetError, match=r"stamps.ts, line 2: timestamped series"):
        read_ts(_write(tmp_path / "stamps.ts", text))

"""Class folders of CSVs, .npy arrays and windowed recordings: each layout, and each hostile file."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from tests.engine.data.sequence_samples import series_set, write_csv, write_ts

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.sequence_files import (
    detect_sequence_format,
    open_csv_folders,
    open_npy,
    open_recording,
    open_sequence_folder,
)
from dragdl.engine.data.sequences import SequenceLimits

# --- class folders -------------------------------------------------------------------------------


def test_class_folders_with_and_without_headers_and_unequal_lengths(tmp_path: Path) -> None:
    walk = series_set(2, 3, [4, 6])
    run = series_set(1, 3, [5], seed=2)
    write_csv(tmp_path / "walk" / "01.csv", walk[0], header=["x", "y", "z"])
    write_csv(tmp_path / "walk" / "02.csv", walk[1])
    write_csv(tmp_path / "run" / "01.csv", run[0])
    assert detect_sequence_format(tmp_path) == "csv_folders"
    source = open_sequence_folder(tmp_path)
    assert source.classes == ("run", "walk")
    assert source.labels is not None and source.labels.tolist() == [0, 1, 1]
    assert source.lengths.tolist() == [5, 4, 6]
    assert source.values.shape == (3, 6, 3)
    np.testing.assert_array_equal(source.sequence(1), walk[0])
    assert source.names == ("run/01.csv", "walk/01.csv", "walk/02.csv")


def test_empty_cells_are_interpolated(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "1.csv").write_text("v,w\n1,\n,2\n3,4\n")
    (tmp_path / "b" / "1.csv").write_text("0,0\n")
    source = open_csv_folders(tmp_path)
    assert source.sequence(0).tolist() == [[1.0, 2.0], [2.0, 2.0], [3.0, 4.0]]


def test_a_csv_with_a_different_width_or_a_bad_cell_is_named(tmp_path: Path) -> None:
    write_csv(tmp_path / "a" / "1.csv", np.ones((3, 2)))
    write_csv(tmp_path / "b" / "1.csv", np.ones((3, 3)))
    with pytest.raises(DatasetError, match=r"b/1.csv: 3 columns, but a/1.csv has 2"):
        open_csv_folders(tmp_path)
    (tmp_path / "b" / "1.csv").write_text("1,2\n3,4\n5,oops\n")
    with pytest.raises(DatasetError, match=r"b/1.csv, line 3, column 2: 'oops' is not a number"):
        open_csv_folders(tmp_path)
    (tmp_path / "b" / "1.csv").write_text("1,2\n3\n")
    with pytest.raises(DatasetError, match=r"b/1.csv, line 2: 1 values, the rows before have 2"):
        open_csv_folders(tmp_path)


def test_a_sequence_longer_than_the_step_limit_is_refused(tmp_path: Path) -> None:
    write_csv(tmp_path / "a" / "1.csv", np.ones((30, 1)))
    write_csv(tmp_path / "b" / "1.csv", np.ones((3, 1)))
    with pytest.raises(DatasetError, match=r"a/1.csv, line 21: more than 20 lines"):
        open_csv_folders(tmp_path, SequenceLimits(max_steps=19))


# --- .npy ------------------------------------------------------------------------------------------


def test_npy_2d_with_y_npy_is_memory_mapped_only_for_float32_3d(tmp_path: Path) -> None:
    x = np.arange(24, dtype=np.float64).reshape(4, 6)
    np.save(tmp_path / "X.npy", x)
    np.save(tmp_path / "y.npy", np.array([3, 1, 3, 1]))
    assert detect_sequence_format(tmp_path) == "npy"
    source = open_npy(tmp_path)
    assert source.values.shape == (4, 6, 1) and source.values.dtype == np.float32
    assert source.classes == ("1", "3")
    assert source.target_values().tolist() == [3.0, 1.0, 3.0, 1.0]
    np.save(tmp_path / "X.npy", np.ones((4, 6, 2), dtype=np.float32))
    mapped = open_npy(tmp_path).values
    assert isinstance(mapped.base, np.memmap) or isinstance(mapped, np.memmap)
    assert mapped.flags.writeable  # copy-on-write: torch.from_numpy takes it, the file stays as it was
    mapped[0, 0, 0] = 5.0
    assert np.load(tmp_path / "X.npy")[0, 0, 0] == 1.0


def test_npy_with_a_labels_file_and_numeric_targets(tmp_path: Path) -> None:
    np.save(tmp_path / "X.npy", np.ones((3, 4, 2), dtype=np.float32))
    (tmp_path / "labels.csv").write_text("target\n0.5\n1.5\n2.25\n")
    source = open_npy(tmp_path)
    assert source.labels is None
    assert source.target_values().tolist() == [0.5, 1.5, 2.25]
    (tmp_path / "labels.csv").unlink()
    (tmp_path / "labels.txt").write_text("cat\ndog\n")
    with pytest.raises(DatasetError, match=r"labels.txt: 2 labels for 3 sequences"):
        open_npy(tmp_path)


def test_npy_gaps_are_filled_and_infinities_refused(tmp_path: Path) -> None:
    x = np.ones((2, 3, 1), dtype=np.float32)
    x[1, 1, 0] = np.nan
    x[1, 2, 0] = 3.0
    np.save(tmp_path / "X.npy", x)
    np.save(tmp_path / "y.npy", np.array(["a", "b"]))
    assert open_npy(tmp_path).values[1, :, 0].tolist() == [1.0, 2.0, 3.0]
    x[0, 0, 0] = np.inf
    np.save(tmp_path / "X.npy", x)
    with pytest.raises(DatasetError, match=r"X.npy, samples 0-1: a value is infinite"):
        open_npy(tmp_path)


def test_a_pickled_npy_is_refused_without_loading(tmp_path: Path) -> None:
    objects = np.empty(2, dtype=object)
    objects[:] = [[1.0, 2.0], [3.0]]
    np.save(tmp_path / "X.npy", objects, allow_pickle=True)
    np.save(tmp_path / "y.npy", np.array([0, 1]))
    with pytest.raises(DatasetError, match=r"X.npy: holds Python objects \(a pickled array\)") as info:
        open_npy(tmp_path)
    assert info.value.code == "npy_pickled"
    np.save(tmp_path / "X.npy", np.ones((2, 3), dtype=np.float32))
    np.save(tmp_path / "y.npy", objects, allow_pickle=True)
    with pytest.raises(DatasetError, match=r"y.npy: holds Python objects"):
        open_npy(tmp_path)


def test_npy_shapes_are_checked_from_the_header(tmp_path: Path) -> None:
    np.save(tmp_path / "X.npy", np.ones((1000, 50, 3), dtype=np.float32))
    np.save(tmp_path / "y.npy", np.zeros(1000, dtype=np.int64))
    with pytest.raises(DatasetError, match=r"X.npy: 150,000 values .* over the limit of 100,000"):
        open_npy(tmp_path, SequenceLimits(max_values=100_000))
    np.save(tmp_path / "X.npy", np.ones(5, dtype=np.float32))
    with pytest.raises(DatasetError, match=r"X.npy: expected numbers shaped \(N, T\) or \(N, T, F\)"):
        open_npy(tmp_path)
    np.save(tmp_path / "X.npy", np.ones((4, 3), dtype=np.float32))
    data = (tmp_path / "X.npy").read_bytes()
    (tmp_path / "X.npy").write_bytes(data[:-8])
    with pytest.raises(DatasetError, match=r"X.npy: shorter than its header declares"):
        open_npy(tmp_path)
    (tmp_path / "X.npy").write_bytes(b"not an array at all")
    with pytest.raises(DatasetError, match=r"X.npy: not a readable .npy array"):
        open_npy(tmp_path)


# --- recordings ------------------------------------------------------------------------------------


def _recording(path: Path, rows: int) -> np.ndarray:
    steps = np.arange(rows, dtype=np.float32)
    data = np.stack([steps, steps * 10], axis=1)
    labels = ["still" if i < rows // 2 else "move" for i in range(rows)]
    lines = ["time,ax,activity", *[f"{a:g},{b:g},{c}" for (a, b), c in zip(data, labels, strict=True)]]
    path.write_text("\n".join(lines) + "\n")
    return data


def test_a_recording_is_cut_into_windows_labelled_at_their_last_step(tmp_path: Path) -> None:
    path = tmp_path / "rec.csv"
    data = _recording(path, 10)
    assert detect_sequence_format(path) == "recording"
    source = open_recording(path, "activity", window=4, stride=3)
    # Windows start at rows 0, 3, 6 (a window 9..12 would pass the end).
    assert source.values.shape == (3, 4, 2)
    np.testing.assert_array_equal(source.values[1], data[3:7])
    assert source.classes == ("move", "still")
    assert source.labels is not None
    assert source.labels.tolist() == [1, 0, 0]  # the last steps are rows 3, 6 and 9
    assert source.names == ("rec.csv, lines 2-5", "rec.csv, lines 5-8", "rec.csv, lines 8-11")
    chosen = open_recording(path, "activity", window=2, stride=2, feature_columns=["ax"])
    assert chosen.values.shape == (5, 2, 1)


def test_a_recording_with_a_numeric_target(tmp_path: Path) -> None:
    path = tmp_path / "rec.csv"
    path.write_text("a,speed\n" + "".join(f"{i},{i / 4}\n" for i in range(8)))
    source = open_recording(path, "speed", window=3, stride=5)
    assert source.target_values().tolist() == [0.5, 1.75]


def test_recording_parameters_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "rec.csv"
    _recording(path, 5)
    with pytest.raises(DatasetError, match=r"rec.csv: no column 'label'") as info:
        open_recording(path, "label", window=2, stride=1)
    assert info.value.field == "label_column"
    with pytest.raises(DatasetError, match=r"rec.csv: 5 rows, fewer than one window of 8"):
        open_recording(path, "activity", window=8, stride=1)
    with pytest.raises(DatasetError, match=r"stride \(0\) must be at least 1"):
        open_recording(path, "activity", window=2, stride=0)


def test_a_ten_million_row_recording_is_refused_fast_at_the_row_limit(tmp_path: Path) -> None:
    path = tmp_path / "huge.csv"
    with path.open("w") as handle:
        handle.write("ax,ay,label\n")
        for _ in range(10):
            handle.write("1.0,2.0,walk\n" * 1_000_000)
    start = time.perf_counter()
    with pytest.raises(DatasetError, match=r"huge.csv, line 2,000,002: more than 2,000,001 lines") as info:
        open_recording(path, "label", window=50, stride=25)
    assert time.perf_counter() - start < 3
    assert info.value.code == "too_large"


def test_detect_sequence_format(tmp_path: Path) -> None:
    assert detect_sequence_format(tmp_path) is None
    write_ts(tmp_path / "p.ts", series_set(2, 1, 3), ["a", "b"], ["a", "b"])
    assert detect_sequence_format(tmp_path) == "ts"
    assert detect_sequence_format(tmp_path / "p.ts") == "ts"
    assert open_sequence_folder(tmp_path).count == 2
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("hello")
    assert detect_sequence_format(other) is None
    with pytest.raises(DatasetError, match="no sequence data found"):
        open_sequence_folder(other)

"""The images input type reads uploads itself (`detect_upload`, `describe_upload`), as the other types
do: a CSV listing, .npy bitmaps or class folders, taken last (`upload_fallback`) and never when the
upload carries options another type takes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dragdl.engine.data.base import DatasetError
from dragdl.engine.inputs.image_upload import CSV_NAME
from dragdl.engine.inputs.images import IMAGES
from dragdl.engine.inputs.registry import all_input_types


def picture(path: Path, value: int, size: tuple[int, int] = (8, 6)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", size, value).save(path)


def test_class_folders_are_images_described_with_their_counts_and_sizes(tmp_path: Path) -> None:
    for i in range(3):
        picture(tmp_path / "cat" / f"{i}.png", 10)
    picture(tmp_path / "dog" / "0.png", 200, (10, 6))
    assert IMAGES.detect_upload(tmp_path) == "folder"
    assert IMAGES.detect_upload(tmp_path, {"window": "32"}) is None
    info = IMAGES.describe_upload("folder", tmp_path)
    assert (info["format"], info["classes"], info["counts"], info["channels"]) == (
        "folder",
        ["cat", "dog"],
        [3, 1],
        1,
    )
    assert info["size"] is None and info["size_stats"]["max"] == [6, 10]
    assert info["samples"][1] == ["dog/0.png"] and "reader_file" not in info


def test_a_csv_listing_is_renamed_and_named_as_the_readers_file(tmp_path: Path) -> None:
    picture(tmp_path / "img" / "a.png", 10)
    picture(tmp_path / "img" / "b.png", 90)
    (tmp_path / "mine.csv").write_text("path,label\nimg/a.png,x\nimg/b.png,y\n")
    assert IMAGES.detect_upload(tmp_path) == "csv"
    info = IMAGES.describe_upload("csv", tmp_path)
    assert info["reader_file"] == CSV_NAME and (tmp_path / CSV_NAME).is_file()
    assert not (tmp_path / "mine.csv").exists() and info["count"] == 2
    (tmp_path / "other.csv").write_text("path,label\n")
    with pytest.raises(DatasetError, match=r"several CSV files \(labels.csv, other.csv\); keep only one"):
        IMAGES.describe_upload("csv", tmp_path)


def test_bitmaps_and_the_fallback_order(tmp_path: Path) -> None:
    for name in ("a", "b"):
        np.save(tmp_path / f"{name}.npy", np.zeros((3, 16), dtype=np.uint8))
    assert IMAGES.detect_upload(tmp_path) == "bitmaps"
    assert IMAGES.describe_upload("bitmaps", tmp_path)["counts"] == [3, 3]
    # Only images take what the others leave: they are asked last.
    assert [t.name for t in all_input_types() if t.upload_fallback] == ["images"]

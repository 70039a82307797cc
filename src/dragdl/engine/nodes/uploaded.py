"""The uploaded-dataset node: a dataset the server stored for its user, named by id.

The server fills `DataContext.uploaded` with the caller's own datasets (kind + path), so a graph
only ever reaches the datasets of the user who runs it: an id that is not there is "not found",
whoever else may own it. The files are read by the same readers as the folder, CSV and bitmap
nodes; their errors are reported on `dataset_id`, the only field this node has.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.data.base import DataContext, DatasetError, DatasetInfo, ImageSource, UploadedDataset
from dragdl.engine.data.bitmaps import DEFAULT_MAX_PER_CLASS, describe_bitmaps, open_bitmaps
from dragdl.engine.data.files import describe_csv, describe_folder, open_csv, open_folder
from dragdl.engine.graph.spec import Graph
from dragdl.engine.inputs.image_upload import CSV_NAME
from dragdl.engine.inputs.sequence_upload import SEQUENCE_KIND
from dragdl.engine.nodes.datasets import ImageDatasetNode
from dragdl.engine.nodes.datasets_code import bitmaps_code, csv_code, folder_code
from dragdl.engine.nodes.registry import register
from dragdl.engine.nodes.tables import TABLE_KIND

KINDS = ("folder", "csv", "bitmaps")
_FIELD = "dataset_id"


class UploadedParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dataset_id: str = Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        title="Uploaded dataset",
        description="Id of one of your uploaded datasets (shown on the Datasets page).",
    )


def _entry(params: UploadedParams, ctx: DataContext) -> tuple[UploadedDataset, Path]:
    entry = ctx.uploaded.get(params.dataset_id)
    if entry is None:
        raise DatasetError(f"dataset {params.dataset_id} not found", field=_FIELD)
    if entry.kind == TABLE_KIND:
        # A table feeds a table port, which this node (an image source) does not have.
        raise DatasetError(
            f"dataset {params.dataset_id} is a table: open it with a Table node (source 'uploaded')",
            field=_FIELD,
        )
    if entry.kind == SEQUENCE_KIND:
        raise DatasetError(
            f"dataset {params.dataset_id} is a sequence set: open it with a Sequences node (source "
            "'uploaded')",
            field=_FIELD,
        )
    if entry.kind not in KINDS:
        raise DatasetError(
            f"dataset {params.dataset_id} has kind {entry.kind!r}, which this DragDL cannot read "
            f"({', '.join(KINDS)})",
            field=_FIELD,
        )
    path = entry.path if entry.path.is_absolute() else ctx.data_dir / entry.path
    return entry, path


def csv_file(path: Path) -> Path:
    """The CSV of an image-list dataset: `path` itself, or the one CSV at the top of a folder."""
    if not path.is_dir():
        return path
    found = sorted(p for p in path.iterdir() if p.suffix.lower() == ".csv" and not p.name.startswith("."))
    if len(found) != 1:
        raise DatasetError(f"expected one CSV file in {path}, found {len(found)}", field=_FIELD)
    return found[0]


@register
class UploadedDatasetNode(ImageDatasetNode[UploadedParams]):
    type = "dataset.uploaded"
    title = "Uploaded dataset"
    description = (
        "A dataset you uploaded: a zip of class folders, a zip with a CSV of path,label rows, "
        "or Quick Draw style .npy files (one per class)."
    )
    params_model = UploadedParams

    def describe(self, params: UploadedParams, ctx: DataContext) -> DatasetInfo:
        entry, path = _entry(params, ctx)
        try:
            if entry.kind == "folder":
                return describe_folder(path, ctx.cache_dir)
            if entry.kind == "csv":
                return describe_csv(csv_file(path))
            return describe_bitmaps(path)
        except DatasetError as exc:
            exc.field = _FIELD
            raise

    def open(self, params: UploadedParams, ctx: DataContext) -> ImageSource:
        entry, path = _entry(params, ctx)
        try:
            if entry.kind == "folder":
                return open_folder(path, ctx.cache_dir)
            if entry.kind == "csv":
                return open_csv(csv_file(path))
            return open_bitmaps(path)
        except DatasetError as exc:
            exc.field = _FIELD
            raise

    def codegen(self, params: UploadedParams) -> str:
        return uploaded_code(params.dataset_id)


def inline_uploaded(graph: Graph, ctx: DataContext) -> Graph:
    """A copy of `graph` whose uploaded-dataset nodes are the reader nodes they stand for.

    The exported script then reads the dataset's own files by path (relative to the data dir when
    they lie under it) instead of looking for them. Ids missing from `ctx.uploaded` stay as they
    are, so validation still reports them.
    """
    graph = graph.model_copy(deep=True)
    for node in graph.nodes:
        if node.type != UploadedDatasetNode.type:
            continue
        entry = ctx.uploaded.get(str(node.params.get("dataset_id", "")))
        if entry is None or entry.kind not in KINDS:
            continue
        path = entry.path if entry.path.is_absolute() else ctx.data_dir / entry.path
        if path.is_relative_to(ctx.data_dir):
            path = path.relative_to(ctx.data_dir)
        node.type = f"dataset.{entry.kind}"
        node.params = {"path": path.as_posix()}
    return graph


def uploaded_code(dataset_id: str) -> str:
    """Script body reading the dataset from the server's layout under DATA_DIR.

    The kind is not in the graph (only the id is), so the script looks at the stored files: the
    server keeps every uploaded dataset in `datasets/<id>/data`, with an image list's CSV named
    `labels.csv` and bitmap arrays as `<class>.npy` at the top.
    """
    root = f"datasets/{dataset_id}/data"
    loaders = {
        "load_csv": csv_code(f"{root}/{CSV_NAME}", None, "path", "label", "auto"),
        "load_bitmaps": bitmaps_code(root, DEFAULT_MAX_PER_CLASS, False),
        "load_folder": folder_code(root, "auto"),
    }
    imports: list[str] = []
    functions: list[str] = []
    for name, body in loaders.items():
        lines: list[str] = []
        for line in body.strip("\n").splitlines():
            if line.startswith(("import ", "from ")):
                if line not in imports:
                    imports.append(line)
            else:
                lines.append(f"    {line}" if line else "")
        text = "\n".join(lines).strip("\n")
        while "\n\n\n" in text:
            text = text.replace("\n\n\n", "\n\n")
        functions.append(f"def {name}():\n{text}\n")
    dispatch = f"""# Uploaded dataset {dataset_id}, as the DragDL server stored it.
root = DATA_DIR / "datasets" / "{dataset_id}" / "data"
if (root / "{CSV_NAME}").is_file():
    return load_csv()
if any(root.glob("*.npy")):
    return load_bitmaps()
return load_folder()
"""
    return "\n".join(imports) + "\n\n" + "\n\n".join(functions) + "\n" + dispatch

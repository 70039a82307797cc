"""The sequence dataset node, `dataset.sequence`: T steps of F features per sample, on the `sequence` port.

Built-in sets need no files (`data/sequence_builtin.py`); files on the server, and sequence sets
uploaded to it (`source: uploaded`, by dataset id, as `dataset.table` reads tables), are read by
`data/ts_format.py` and `data/sequence_files.py` within `SequenceLimits`, whose errors name the file
and line. A reader's error without a field of its own is put on `path`, so the canvas marks the
parameter that chose the file.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.data.base import DataContext, DatasetError, DatasetInfo
from dragdl.engine.data.sequence_builtin import (
    SequenceBuiltinName,
    describe_sequence_builtin,
    open_sequence_builtin,
)
from dragdl.engine.data.sequence_files import detect_sequence_format, open_recording, open_sequence_folder
from dragdl.engine.data.sequences import SequenceSource
from dragdl.engine.inputs.base import InputType
from dragdl.engine.inputs.sequence_upload import (
    DEFAULT_STRIDE,
    DEFAULT_WINDOW,
    MAX_WINDOW,
    SEQUENCE_KIND,
    open_uploaded_recording,
)
from dragdl.engine.inputs.sequences import SEQUENCES
from dragdl.engine.nodes.base import DatasetNode
from dragdl.engine.nodes.datasets import resolve_path
from dragdl.engine.nodes.datasets_code import sequence_code
from dragdl.engine.nodes.registry import OptionalServerPath, register


class SequenceParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Literal["builtin", "file", "uploaded"] = Field(
        "builtin",
        title="Sequences",
        description="A built-in set ('builtin', chosen by Dataset), files on the server ('file', "
        "named by Path), or one of your uploaded sequence sets ('uploaded', chosen by Uploaded "
        "sequences).",
    )
    name: SequenceBuiltinName = Field(
        "waves",
        title="Dataset",
        json_schema_extra={"x-show-if": {"source": ["builtin"]}},
        description="With source 'builtin': 'seq-mnist', 5,000 MNIST digits read row by row (28 steps "
        "of 28 features); 'waves', 1,500 noisy sine, square and sawtooth waves (64 steps, 3 classes); "
        "'waves-frequency', the same waves with their frequency to predict (a value).",
    )
    path: OptionalServerPath = Field(
        None,
        title="Path",
        json_schema_extra={"x-show-if": {"source": ["file"]}},
        description="With source 'file': a .ts file (or a folder with a _TRAIN.ts and _TEST.ts pair), "
        "a folder of class folders holding one CSV per sequence, a folder with X.npy and its labels, or "
        "one CSV recording to cut into windows. Relative paths are taken under the data dir.",
    )
    dataset_id: str | None = Field(
        None,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        title="Uploaded sequences",
        json_schema_extra={"x-show-if": {"source": ["uploaded"]}},
        description="With source 'uploaded': the id of one of your uploaded sequence sets (Datasets page).",
    )
    label_column: str | None = Field(
        None,
        max_length=200,
        title="Label column",
        json_schema_extra={"x-show-if": {"source": ["file", "uploaded"]}},
        description="For a CSV recording: the column holding each step's label (or value); a window "
        "takes the label of its last step.",
    )
    window: int = Field(
        DEFAULT_WINDOW,
        ge=1,
        le=MAX_WINDOW,
        title="Window",
        json_schema_extra={"x-show-if": {"source": ["file", "uploaded"]}},
        description="For a CSV recording: steps per sequence cut from it.",
    )
    stride: int = Field(
        DEFAULT_STRIDE,
        ge=1,
        le=MAX_WINDOW,
        title="Stride",
        json_schema_extra={"x-show-if": {"source": ["file", "uploaded"]}},
        description="For a CSV recording: steps from the start of one window to the start of the next "
        "(equal to Window: windows side by side; smaller: overlapping).",
    )


def open_sequences(params: SequenceParams, ctx: DataContext) -> SequenceSource:
    """The sequences the params name; raises DatasetError on the field concerned."""
    if params.source == "builtin":
        return open_sequence_builtin(params.name, ctx.cache_dir)
    if params.source == "uploaded":
        return _open_uploaded(params, ctx)
    if not params.path:
        raise DatasetError("choose the sequence files (source 'file')", field="path")
    path = resolve_path(params.path, ctx)
    if not path.exists():
        raise DatasetError(f"sequence path {path} does not exist", field="path")
    try:
        if detect_sequence_format(path) == "recording":
            if not params.label_column:
                raise DatasetError(
                    f"{path.name} is a recording: name its label column, window and stride",
                    field="label_column",
                )
            return open_recording(path, params.label_column, params.window, params.stride)
        return open_sequence_folder(path)
    except DatasetError as exc:
        if exc.field is None:
            exc.field = "path"
        raise


def _open_uploaded(params: SequenceParams, ctx: DataContext) -> SequenceSource:
    """An uploaded sequence set: what the server stored (`datasets/<id>/data`), read as a folder; an
    uploaded recording is cut by the node's label column, window and stride (the Datasets page's
    node carries those it was uploaded with)."""
    dataset_id = params.dataset_id
    entry = ctx.uploaded.get(dataset_id or "")
    if not dataset_id or entry is None:
        raise DatasetError(f"dataset {dataset_id or '(none)'} not found", field="dataset_id")
    if entry.kind != SEQUENCE_KIND:
        raise DatasetError(
            f"dataset {dataset_id} is not a sequence set ({entry.kind}); open it with the node its "
            "Datasets page entry names",
            field="dataset_id",
        )
    path = entry.path if entry.path.is_absolute() else ctx.data_dir / entry.path
    try:
        if detect_sequence_format(path) == "recording":
            if not params.label_column:
                raise DatasetError(
                    f"dataset {dataset_id} is a recording: name its label column, window and stride",
                    field="label_column",
                )
            return open_uploaded_recording(path, params.label_column, params.window, params.stride)
        return open_sequence_folder(path)
    except DatasetError as exc:
        if exc.field is None:
            exc.field = "dataset_id"
        raise


@register
class SequenceDataset(DatasetNode[SequenceParams]):
    type = "dataset.sequence"
    title = "Sequences"
    description = (
        "Time series and sensor traces: T steps of F features per sample, with a class or a value to "
        "predict. Built-in sets, UCR/UEA .ts files, CSVs in class folders, .npy arrays, or one long "
        "recording cut into windows."
    )
    params_model = SequenceParams
    input_type: ClassVar[InputType] = SEQUENCES

    def describe(self, params: SequenceParams, ctx: DataContext) -> DatasetInfo:
        if params.source == "builtin":
            return describe_sequence_builtin(params.name)  # static facts: nothing is generated
        # Files are read within SequenceLimits: their lengths and labels are the description.
        return open_sequences(params, ctx).info

    def open(self, params: SequenceParams, ctx: DataContext) -> SequenceSource:
        return open_sequences(params, ctx)

    def codegen(self, params: SequenceParams) -> str:
        return sequence_code(params.source, params.name)

"""model.json: everything needed to use trained weights without the dataset, as plain JSON.

A bundle is a run directory holding `model.safetensors` (the weights) and `model.json` (this
manifest). Nothing in it is pickled, so opening a bundle from someone else never runs their code.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.graph.spec import Graph
from dragdl.engine.payloads import ColumnInfo

BUNDLE_FORMAT: Literal["dragdl.bundle"] = "dragdl.bundle"
BUNDLE_VERSION = 1
MANIFEST_NAME = "model.json"
WEIGHTS_NAME = "model.safetensors"
ONNX_NAME = "model.onnx"
TORCHSCRIPT_NAME = "model.torchscript.pt"

Dims = list[int | None]
"""A per-sample shape; None where the size is not fixed (images of varying size)."""

BackgroundField = Annotated[
    Literal["dark", "light", "mixed"] | None,
    Field(
        description=(
            "The training images' paper, from their borders: dark (light ink on dark, as MNIST), light "
            "(dark ink on light), mixed (no rule). An input with the opposite paper is inverted "
            "(255 - value) before the steps. Null in bundles written before it was recorded: never inverted."
        )
    ),
]


class _Section(BaseModel):
    # Unknown keys are tolerated so that an older DragDL can read bundles written by a newer one.
    model_config = ConfigDict(extra="allow")


class DatasetDescription(_Section):
    node_id: str
    type: str
    classes: list[str]
    count: int
    channels: int
    size: list[int] | None = Field(description="[height, width] when every image had it.")


class InputSpec(_Section):
    """What a raw image must become before the evaluation transforms run."""

    channels: Literal[1, 3] = Field(description="1: grayscale (PIL mode L), 3: RGB.")
    size: list[int] | None = Field(
        description="[height, width] every image is resized to (the dataset's fixed size); null: kept."
    )
    dtype: Literal["uint8"] = "uint8"
    layout: Literal["CHW"] = "CHW"
    alpha: Literal["white"] = Field("white", description="Transparent pixels are composited on this.")
    resize: Literal["bilinear-antialias"] = "bilinear-antialias"
    background: BackgroundField = None
    network_input: Dims = Field(description="Per-sample shape entering the network, e.g. [1, 28, 28].")


class EvalTransform(_Section):
    """One deterministic data operator of the graph, as the catalog rebuilds it."""

    node_id: str
    type: str
    params: dict[str, Any]
    in_shape: Dims
    needs_float: bool
    fitted: dict[str, Any] | None = Field(
        None, description="What the op learned from the training images, e.g. {'mean': [...], 'std': [...]}."
    )


class PreprocessStep(_Section):
    """A step a non-Python client (a browser) follows; `op` is one of the names below or a node type."""

    op: str
    """resize | center_crop | grayscale | to_float | normalize, or the node type when not portable."""


class Preprocessing(_Section):
    """The whole path from a decoded image to the network input, with numbers only."""

    channels: Literal[1, 3]
    size: list[int] | None
    alpha: Literal["white"] = "white"
    background: BackgroundField = None
    steps: list[PreprocessStep]
    portable: bool = Field(description="False when a step cannot be described by numbers (Lambda, blur).")
    input_shape: Dims
    mean: list[float] | None = Field(None, description="Normalisation of the last Normalize, if any.")
    std: list[float] | None = None


class ExportInfo(_Section):
    file: str
    format: Literal["onnx", "torchscript"]
    input_name: str = "images"
    output_name: str = "logits"
    input_shape: list[int | str] = Field(description="'batch' marks the dynamic batch axis.")
    opset: int | None = None
    exporter: str | None = None
    max_abs_diff: float = Field(description="Largest logit difference to PyTorch on a check batch.")
    preprocessing: Preprocessing
    outputs: str = "logits: unnormalised class scores; softmax over the last axis gives probabilities."


class TableOp(_Section):
    """One table operator as the catalog rebuilds it, with what it learned on the training rows."""

    node_id: str
    type: str
    params: dict[str, Any]
    fitted: dict[str, Any]


class TableSpec(_Section):
    """A table model's input: the columns a caller provides and the operators that turn them into
    the network's (N, F) features (the ONNX export's input)."""

    columns: list[ColumnInfo] = Field(description="The input columns, as in training (the target left out).")
    inputs: list[str] | None = Field(
        None,
        description="The columns a caller must provide: those the network's features come from (a "
        "column dropped by Select columns is not). Absent in older bundles: every column.",
    )
    target: str
    ops: list[TableOp]
    features: int = Field(description="F: the width of the feature vector entering the network.")


class Versions(_Section):
    dragdl: str
    torch: str
    torchvision: str
    python: str


class Manifest(_Section):
    format: Literal["dragdl.bundle"] = BUNDLE_FORMAT
    format_version: int = BUNDLE_VERSION
    name: str
    created: str
    graph: Graph = Field(description="The trained graph, train node params as actually used.")
    classes: list[str]
    dataset: DatasetDescription
    input: InputSpec
    eval_transforms: list[EvalTransform]
    preprocessing: Preprocessing
    metrics: dict[str, Any] = Field(description="Test metrics and averages from report.json.")
    weights: dict[str, Any] = Field(description="File name, sha256 and tensor count of the weights.")
    versions: Versions
    exports: dict[str, ExportInfo] = Field(default_factory=dict)
    task: str = Field(
        "classification", description="The task kind (classification, regression); absent in older bundles."
    )
    output_scale: tuple[float, float] | None = Field(
        None,
        description="(shift, scale) of a regressor that learned its target standardized: the "
        "network's output z answers z * scale + shift. Absent when the output is used as it is.",
    )
    trained_with: dict[str, str] | None = Field(
        None,
        description="The precision and memory format training ran in (report.json's fast_path); "
        "absent in older bundles. Prediction uses bf16 only for a model trained in it.",
    )
    table: TableSpec | None = Field(
        None,
        description="Set for table models. Their `input` and `preprocessing` then describe only the "
        "(F,) feature vector (channels 1, no size, no image steps).",
    )

"""The input sections of model.json: what a raw sample must become before the network sees it.

Each input type (`engine/inputs/`) writes its part of a bundle's manifest with these models
(`InputType.bundle_fields`); `bundle/spec.py` assembles the whole manifest from them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.payloads import ColumnInfo


class _Section(BaseModel):
    # Unknown keys are tolerated so that an older DragDL can read bundles written by a newer one.
    model_config = ConfigDict(extra="allow")


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


class DatasetDescription(_Section):
    node_id: str
    type: str
    classes: list[str]
    count: int
    channels: int
    size: list[int] | None = Field(description="[height, width] when every image had it.")
    shape: Dims | None = Field(
        None,
        description="One sample's shape for input types whose samples are not images or table rows "
        "(sequences: [T, F], T null when lengths vary); absent for the others and in older bundles.",
    )


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

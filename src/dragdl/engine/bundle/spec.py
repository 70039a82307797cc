"""model.json: everything needed to use trained weights without the dataset, as plain JSON.

A bundle is a run directory holding `model.safetensors` (the weights) and `model.json` (this
manifest). Nothing in it is pickled, so opening a bundle from someone else never runs their code.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from dragdl.engine.graph.spec import Graph
from dragdl.engine.inputs.sections import (
    DatasetDescription,
    EvalTransform,
    InputSpec,
    Preprocessing,
    TableSpec,
    _Section,
)

BUNDLE_FORMAT: Literal["dragdl.bundle"] = "dragdl.bundle"
BUNDLE_VERSION = 1
MANIFEST_NAME = "model.json"
WEIGHTS_NAME = "model.safetensors"
ONNX_NAME = "model.onnx"
TORCHSCRIPT_NAME = "model.torchscript.pt"


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

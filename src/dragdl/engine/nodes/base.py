"""Category base classes: the hooks each kind of node provides to validation and the compiler."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel
from torch import nn

from dragdl.engine.data.base import DataContext, DatasetInfo, Source
from dragdl.engine.data.stages import OpStage
from dragdl.engine.inputs.base import InputType
from dragdl.engine.models.families import ScriptHelper
from dragdl.engine.nodes.calls import Call
from dragdl.engine.nodes.registry import ANY_DATA, NodeType, P, Port
from dragdl.engine.tasks.base import TaskKind

Shape = tuple[int | None, ...]
"""A per-sample shape: (C, H, W) for images and feature maps, (F,) for flat features. None = unknown."""


def format_shape(shape: Shape) -> str:
    return "x".join("?" if dim is None else str(dim) for dim in shape)


@dataclass(frozen=True)
class ShapeContext:
    """Graph-wide facts a layer may need when inferring its shape or building itself."""

    num_outputs: int | None
    """Width of the network's last layer for the train node's task kind (classes, or 1 value)."""
    data_dir: Path
    """The DataContext's data dir: model nodes resolve a relative weights_path and cache weights there."""
    node_id: str = ""
    input_nodes: tuple[str, ...] = ()
    """Ids of the nodes feeding each input, in order (for messages naming both sides)."""


class DatasetNode(NodeType[P]):
    """A source of labelled samples of one input type, which names its output port's type."""

    category: ClassVar = "dataset"
    input_type: ClassVar[InputType]
    """The kind of data it produces (`engine/inputs/`): what validation, the run, bundles and
    prediction ask about it, as a train node's task kind is for the target."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "input_type" in cls.__dict__:
            name = cls.input_type.name
            cls.outputs = (Port("out", (name,), label=name),)

    @abstractmethod
    def describe(self, params: P, ctx: DataContext) -> DatasetInfo:
        """Cheap facts about the dataset (classes, channels, size); raises DatasetError."""

    @abstractmethod
    def open(self, params: P, ctx: DataContext) -> Source:
        """Open the dataset for training; raises DatasetError."""

    def codegen(self, params: P) -> str:
        """Python source of a `load_dataset()` body for the standalone script."""
        raise NotImplementedError(f"{self.type} cannot be exported as code yet")


class OperatorNode(NodeType[P]):
    """A data operator of any input type: the compiler asks each for the runtime object its input
    type's pipeline runs (`operator`), and hands them to the input type in pipeline order."""

    category: ClassVar = "op"

    @abstractmethod
    def operator(self, node_id: str, params: P, in_shape: Shape, label: str) -> Any:
        """The operator bound to its params, as its input type's pipeline takes it."""


class OpNode(OperatorNode[P]):
    """An image operator: image -> image, built on torchvision.transforms.v2."""

    inputs: ClassVar = (Port("in", ("images",), label="images"),)
    outputs: ClassVar = (Port("out", ("images",), label="images"),)
    needs_float: ClassVar[bool] = False
    """True when the op works on float images in [0, 1] (uint8 input is converted first)."""

    def infer(self, params: P, shape: Shape) -> Shape:
        """Output (C, H, W) for an input (C, H, W). Most ops keep the shape."""
        return shape

    @abstractmethod
    def transform(self, params: P, shape: Shape) -> Call:
        """The transform's constructor call (torchvision v2, or an nn.Module acting like one):
        `build` runs it, `codegen` prints it."""

    def build(self, params: P, shape: Shape) -> nn.Module:
        built: nn.Module = self.transform(params, shape).build()
        return built

    def operator(self, node_id: str, params: P, in_shape: Shape, label: str) -> OpStage:
        return OpStage(
            node_id=node_id,
            transform=self.build(params, in_shape),
            random=self.random,
            needs_float=self.needs_float,
            label=label,
            type=self.type,
            params=params.model_dump(mode="json"),
            in_shape=in_shape,
            portable=partial(self.portable_step, params, in_shape),
        )

    def codegen(self, params: P, shape: Shape) -> str:
        """A Python expression constructing the same transform, e.g. `v2.Resize([32, 32])`."""
        return self.transform(params, shape).code()

    def script_helpers(self, params: P) -> tuple[ScriptHelper, ...]:
        """The definitions and imports the exported script needs for `codegen`'s expression (a
        module of DragDL's own, carried whole); none for torchvision's transforms."""
        return ()

    def portable_step(
        self, params: P, in_shape: Shape, fitted: Mapping[str, Any] | None
    ) -> dict[str, Any] | None:
        """This operator at evaluation as a step of numbers a client without DragDL repeats (a
        browser before in-browser ONNX prediction): `{"op": "resize", ...}` in the vocabulary of
        model.json's `preprocessing` (`bundle/spec.PreprocessStep`); `fitted` is what the operator
        learned from the training images. None (the default): it cannot be described so."""
        return None


class LayerNode(NodeType[P]):
    """A network layer: tensor -> tensor. The first layer receives the dataset's batch, whatever its
    input type (images, a table's (N, F) features, ...): its shape decides whether the layer fits."""

    category: ClassVar = "layer"
    inputs: ClassVar = (Port("in", (ANY_DATA, "tensor"), label="input"),)
    outputs: ClassVar = (Port("out", ("tensor",), label="output"),)

    @abstractmethod
    def infer(self, params: P, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        """Output shape for the input shapes; raises NodeError naming the field and both shapes."""

    @abstractmethod
    def module(self, params: P, inputs: list[Shape], ctx: ShapeContext) -> Call:
        """The module's constructor call: `build` runs it, `codegen` prints it (one declaration).
        Multi-input layers receive their inputs as positional arguments of `forward`."""

    def build(self, params: P, inputs: list[Shape], ctx: ShapeContext) -> nn.Module:
        built: nn.Module = self.module(params, inputs, ctx).build()
        return built

    def codegen(self, params: P, inputs: list[Shape], ctx: ShapeContext) -> str:
        """A Python expression constructing the same module, e.g. `nn.Conv2d(1, 16, kernel_size=3)`."""
        return self.module(params, inputs, ctx).code()

    def script_helpers(self, params: P) -> tuple[ScriptHelper, ...]:
        """The definitions and imports the exported script needs for `codegen`'s expression (a
        module of DragDL's own, carried whole); none for torch.nn's layers."""
        return ()

    def adds_loss(self, params: P) -> bool:
        """Whether the built module adds a term of its own to the training loss (`added_loss` after
        its forward pass in training, which `TaskKind.step` adds): the exported script then adds it
        too (`TaskBlocks.loss_expression`)."""
        return False

    inline: ClassVar[bool] = False
    """True when the script's forward() writes the layer as `forward_code(values)` (Add: `a + b`)
    instead of calling a module attribute."""

    def forward_code(self, values: list[str]) -> str:
        raise NotImplementedError(f"{self.type} is not written inline")


class TrainNode(NodeType[P]):
    """The sink: how to train what flows into it, for the task kind it names."""

    category: ClassVar = "train"
    inputs: ClassVar = (Port("in", ("tensor", "logits"), label="model output"),)
    task: ClassVar[TaskKind]

    def catalog_entry(self) -> dict[str, Any]:
        return {**super().catalog_entry(), "task": self.task.name}


class EmptyParams(BaseModel):
    model_config = {"extra": "forbid"}


def literal_repr(value: Any) -> str:
    """repr() for code generation of plain JSON values (floats keep a readable form)."""
    return repr(value)


class ModelNode(NodeType[P]):
    """A pretrained backbone with its classifier cut off and a new head for the dataset's classes."""

    category: ClassVar = "model"
    inputs: ClassVar = (Port("in", ("images",), label="images"),)
    outputs: ClassVar = (Port("out", ("logits",), label="logits"),)

    @abstractmethod
    def infer(self, params: P, shape: Shape, ctx: ShapeContext) -> Shape:
        """Output shape: (num_classes,). Raises NodeError (for example when weights are missing)."""

    @abstractmethod
    def build(self, params: P, shape: Shape, ctx: ShapeContext) -> nn.Module:
        """The torch module taking the image batch and returning logits."""

    def codegen(self, params: P, shape: Shape, ctx: ShapeContext) -> str:
        raise NotImplementedError(f"{self.type} cannot be exported as code yet")

    def script_helpers(self, params: P) -> tuple[ScriptHelper, ...]:
        """The definitions and imports the exported script needs for `codegen`'s expression."""
        return ()

    def describe_input(self, params: P) -> dict[str, Any]:
        """What the backbone expects (input size, channels, normalization), shown by validation."""
        return {}

    def cache_identity(self, params: P) -> dict[str, Any]:
        """The params that change the backbone's features: part of the feature cache's key (the
        head's params are not, so changing them reuses cached features)."""
        return params.model_dump(mode="json")

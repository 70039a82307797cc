"""Network layer nodes: build a CNN layer by layer.

Each layer infers its output shape from its input shapes, so nobody types `in_channels` or
`in_features`; a Linear with `out_features: "auto"` takes the dataset's class count.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from torch import nn

from dragdl.engine.graph.errors import NodeError
from dragdl.engine.nodes.base import EmptyParams, LayerNode, Shape, ShapeContext, format_shape
from dragdl.engine.nodes.calls import Call, nn_call
from dragdl.engine.nodes.registry import register

_STRICT = ConfigDict(extra="forbid")


def _image(node: LayerNode[Any], shape: Shape, ctx: ShapeContext) -> tuple[int, int | None, int | None]:
    if len(shape) != 3 or shape[0] is None:
        raise NodeError(
            "shape_mismatch",
            f"{node.title} expects a feature map CxHxW but receives {format_shape(shape)}"
            + _from(ctx, 0)
            + "; it must come before Flatten / global pooling",
            input_shape=format_shape(shape),
        )
    return shape[0], shape[1], shape[2]


def _from(ctx: ShapeContext, index: int) -> str:
    return f" from node {ctx.input_nodes[index]}" if len(ctx.input_nodes) > index else ""


def _spatial_out(size: int | None, kernel: int, stride: int, padding: int, dilation: int = 1) -> int | None:
    if size is None:
        return None
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _check_spatial(
    node: LayerNode[Any], shape: Shape, out: tuple[int | None, int | None], field: str
) -> None:
    if any(dim is not None and dim < 1 for dim in out):
        raise NodeError(
            "shape_mismatch",
            f"{node.title}: input {format_shape(shape)} is too small for this {field}; "
            "the output would be empty. Use a smaller kernel or fewer pooling layers, or resize the images",
            field=field,
            input_shape=format_shape(shape),
        )


# --- convolution -------------------------------------------------------------------------------


class Conv2dParams(BaseModel):
    model_config = _STRICT
    out_channels: int = Field(
        16,
        ge=1,
        le=4096,
        title="Filters (output channels)",
        description="Number of filters (output channels).",
    )
    kernel_size: int = Field(3, ge=1, le=15, title="Kernel size", description="Filter size (square).")
    stride: int = Field(1, ge=1, le=8, title="Stride", description="Step between filter positions.")
    padding: Literal["same", "valid"] | int = Field(
        "same",
        title="Padding",
        description="'same' keeps HxW (divided by the stride), 'valid' adds none, or a number of pixels.",
    )
    bias: bool = Field(True, title="Bias", description="Learn an additive bias per output channel.")


def _conv_padding(params: Conv2dParams) -> int | str:
    if params.padding == "valid":
        return 0
    if params.padding == "same":
        if params.kernel_size % 2 == 1:
            return params.kernel_size // 2
        if params.stride == 1:
            return "same"
        raise NodeError(
            "param_invalid",
            f"padding 'same' with an even kernel_size ({params.kernel_size}) needs stride 1",
            field="padding",
        )
    if not 0 <= params.padding <= 32:
        raise NodeError("param_invalid", f"padding ({params.padding}) must be in 0..32", field="padding")
    return params.padding


@register
class Conv2d(LayerNode[Conv2dParams]):
    type = "layer.Conv2d"
    title = "Conv2d"
    description = "2-D convolution: learns filters that respond to local patterns such as edges and strokes."
    params_model = Conv2dParams

    def infer(self, params: Conv2dParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        _, h, w = _image(self, inputs[0], ctx)
        padding = _conv_padding(params)
        if padding == "same":
            out = (h, w)
        else:
            assert isinstance(padding, int)
            k, s = params.kernel_size, params.stride
            out = (_spatial_out(h, k, s, padding), _spatial_out(w, k, s, padding))
        _check_spatial(self, inputs[0], out, "kernel_size")
        return (params.out_channels, *out)

    def module(self, params: Conv2dParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        channels = _image(self, inputs[0], ctx)[0]
        options: dict[str, Any] = {"kernel_size": params.kernel_size}
        if params.stride != 1:
            options["stride"] = params.stride
        padding = _conv_padding(params)
        if padding != 0:
            options["padding"] = padding
        if not params.bias:
            options["bias"] = False
        return nn_call(nn.Conv2d, channels, params.out_channels, **options)


# --- pooling -----------------------------------------------------------------------------------


class PoolParams(BaseModel):
    model_config = _STRICT
    kernel_size: int = Field(2, ge=1, le=16, title="Kernel size", description="Window size (square).")
    stride: int | None = Field(
        None, ge=1, le=16, title="Stride", description="Step between windows; empty = kernel_size."
    )
    padding: int = Field(
        0, ge=0, le=8, title="Padding", description="Zero padding on each side (at most half the kernel)."
    )


class _Pool(LayerNode[PoolParams]):
    params_model = PoolParams
    torch_module: ClassVar[type[nn.Module]]

    def infer(self, params: PoolParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        channels, h, w = _image(self, inputs[0], ctx)
        if params.padding * 2 > params.kernel_size:
            raise NodeError(
                "param_invalid",
                f"padding ({params.padding}) must be at most half of kernel_size ({params.kernel_size})",
                field="padding",
            )
        stride = params.stride or params.kernel_size
        out = (
            _spatial_out(h, params.kernel_size, stride, params.padding),
            _spatial_out(w, params.kernel_size, stride, params.padding),
        )
        _check_spatial(self, inputs[0], out, "kernel_size")
        return (channels, *out)

    def module(self, params: PoolParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        options: dict[str, Any] = {}
        if params.stride and params.stride != params.kernel_size:  # torch's default stride is the kernel
            options["stride"] = params.stride
        if params.padding:
            options["padding"] = params.padding
        return nn_call(self.torch_module, params.kernel_size, **options)


@register
class MaxPool2d(_Pool):
    type = "layer.MaxPool2d"
    title = "MaxPool2d"
    description = "Keeps the strongest response in each window, halving HxW with the default 2x2 window."
    torch_module = nn.MaxPool2d


@register
class AvgPool2d(_Pool):
    type = "layer.AvgPool2d"
    title = "AvgPool2d"
    description = "Averages each window, shrinking HxW."
    torch_module = nn.AvgPool2d


class AdaptivePoolParams(BaseModel):
    model_config = _STRICT
    output_size: int = Field(
        1, ge=1, le=64, title="Output size", description="Output height and width, whatever the input size."
    )


@register
class AdaptiveAvgPool2d(LayerNode[AdaptivePoolParams]):
    type = "layer.AdaptiveAvgPool2d"
    title = "AdaptiveAvgPool2d"
    description = "Averages the feature map down to a fixed HxW, so any input size works."
    params_model = AdaptivePoolParams

    def infer(self, params: AdaptivePoolParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        channels = _image(self, inputs[0], ctx)[0]
        return (channels, params.output_size, params.output_size)

    def module(self, params: AdaptivePoolParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        return nn_call(nn.AdaptiveAvgPool2d, params.output_size)


@register
class GlobalAvgPool(LayerNode[EmptyParams]):
    type = "layer.GlobalAvgPool"
    title = "GlobalAvgPool"
    description = "Averages each channel over the whole image: CxHxW becomes C features (no Flatten needed)."
    params_model = EmptyParams

    def infer(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        return (_image(self, inputs[0], ctx)[0],)

    def module(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        return nn_call(nn.Sequential, nn_call(nn.AdaptiveAvgPool2d, 1), nn_call(nn.Flatten))


# --- normalisation, regularisation, reshaping --------------------------------------------------


@register
class BatchNorm2d(LayerNode[EmptyParams]):
    type = "layer.BatchNorm2d"
    title = "BatchNorm2d"
    description = "Normalises each channel over the batch; speeds up and stabilises training of deep CNNs."
    params_model = EmptyParams

    def infer(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        _image(self, inputs[0], ctx)
        return inputs[0]

    def module(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        return nn_call(nn.BatchNorm2d, _image(self, inputs[0], ctx)[0])


class DropoutParams(BaseModel):
    model_config = _STRICT
    p: float = Field(
        0.5,
        ge=0.0,
        lt=1.0,
        title="Probability",
        description="Probability of zeroing each value during training.",
    )


@register
class Dropout(LayerNode[DropoutParams]):
    type = "layer.Dropout"
    title = "Dropout"
    description = "Randomly zeroes values while training to reduce overfitting; does nothing at evaluation."
    params_model = DropoutParams

    def infer(self, params: DropoutParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        return inputs[0]

    def module(self, params: DropoutParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        return nn_call(nn.Dropout, params.p)


@register
class Flatten(LayerNode[EmptyParams]):
    type = "layer.Flatten"
    title = "Flatten"
    description = "Turns a CxHxW feature map into one flat vector of C*H*W features for Linear layers."
    params_model = EmptyParams

    def infer(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        shape = inputs[0]
        if any(dim is None for dim in shape):
            raise NodeError(
                "shape_unknown",
                f"Flatten needs a fixed image size but receives {format_shape(shape)}{_from(ctx, 0)}: "
                "the images differ in size, so add a Resize or CenterCrop operator after the dataset",
                input_shape=format_shape(shape),
            )
        size = 1
        for dim in shape:
            assert dim is not None
            size *= dim
        return (size,)

    def module(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        return nn_call(nn.Flatten)


class LinearParams(BaseModel):
    model_config = _STRICT
    out_features: Literal["auto"] | int = Field(
        "auto",
        title="Outputs",
        description="Number of outputs. 'auto' = the dataset's number of classes "
        "(use it for the last layer).",
    )
    bias: bool = Field(True, title="Bias", description="Learn an additive bias per output.")


def _features(node: LayerNode[Any], shape: Shape, ctx: ShapeContext) -> int:
    if len(shape) != 1 or shape[0] is None:
        # Steps x features (a sequence, or what a recurrent or 1-D layer gives) end in one vector per
        # sequence by taking its last step or pooling over time; maps (C, H, W) by flattening or pooling.
        over_time = len(shape) == 2
        fix = "a Last step or a Global pooling over time" if over_time else "a Flatten or GlobalAvgPool"
        raise NodeError(
            "shape_mismatch",
            f"{node.title} expects a flat feature vector but receives {format_shape(shape)}{_from(ctx, 0)}: "
            f"add {fix} before it",
            input_shape=format_shape(shape),
            suggest="pool_time" if over_time else "flatten",
        )
    return shape[0]


@register
class Linear(LayerNode[LinearParams]):
    type = "layer.Linear"
    title = "Linear (Dense)"
    description = "Fully connected layer. The last one gives one score (logit) per class."
    params_model = LinearParams

    def _out(self, params: LinearParams, ctx: ShapeContext) -> int:
        if params.out_features != "auto":
            if not 1 <= params.out_features <= 65536:
                raise NodeError(
                    "param_invalid",
                    f"out_features ({params.out_features}) must be in 1..65536 or 'auto'",
                    field="out_features",
                )
            return params.out_features
        if ctx.num_outputs is None:
            raise NodeError(
                "shape_unknown",
                "out_features 'auto' needs the number of classes, but no dataset reaches this node",
                field="out_features",
            )
        return ctx.num_outputs

    def infer(self, params: LinearParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        _features(self, inputs[0], ctx)
        return (self._out(params, ctx),)

    def module(self, params: LinearParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        options = {} if params.bias else {"bias": False}
        return nn_call(nn.Linear, _features(self, inputs[0], ctx), self._out(params, ctx), **options)


class BatchNorm1dParams(EmptyParams):
    pass


@register
class BatchNorm1d(LayerNode[BatchNorm1dParams]):
    type = "layer.BatchNorm1d"
    title = "BatchNorm1d"
    description = "Normalises each feature of a flat vector over the batch (use after Linear)."
    params_model = BatchNorm1dParams

    def infer(self, params: BatchNorm1dParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        _features(self, inputs[0], ctx)
        return inputs[0]

    def module(self, params: BatchNorm1dParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        return nn_call(nn.BatchNorm1d, _features(self, inputs[0], ctx))

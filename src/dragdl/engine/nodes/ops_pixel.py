"""Pixel-value data operators: normalisation, colour, blur, erasing and the Lambda expression.

Normalize and Grayscale describe themselves as portable steps (`portable_step`), which a browser
repeats before in-browser prediction; the others cannot be described by numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import nn
from torchvision.transforms import v2

from dragdl.engine.data.stages import FittedTransform
from dragdl.engine.graph.errors import NodeError
from dragdl.engine.graph.expr import ExprError, Expression, parse_expression
from dragdl.engine.nodes.base import OpNode, Shape
from dragdl.engine.nodes.calls import Call, Code, v2_call
from dragdl.engine.nodes.registry import register

_STRICT = ConfigDict(extra="forbid")
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class FittedNormalize(FittedTransform):
    """Normalize with per-channel mean and std measured on the training images.

    The data pipeline calls `fit()` once with the training split (after the preceding deterministic
    operators); the statistics are then kept as buffers so they travel with checkpoints and bundles.
    """

    mean: torch.Tensor
    std: torch.Tensor

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(channels, 1, 1))
        self.register_buffer("std", torch.ones(channels, 1, 1))

    def fit(self, images: torch.Tensor) -> None:
        images = images.float()
        self.mean.copy_(images.mean(dim=(0, 2, 3)).view(-1, 1, 1))
        self.std.copy_(images.std(dim=(0, 2, 3)).clamp_min(1e-6).view(-1, 1, 1))
        self.fitted = True

    def state(self) -> dict[str, Any]:
        return {"mean": self.mean.flatten().tolist(), "std": self.std.flatten().tolist()}

    def load(self, state: dict[str, Any]) -> None:
        for name, buffer in (("mean", self.mean), ("std", self.std)):
            if name not in state:
                raise ValueError(f"the fitted statistics lack {name!r}")
            try:
                buffer.copy_(torch.as_tensor(state[name], dtype=buffer.dtype).view_as(buffer))
            except (RuntimeError, TypeError, ValueError) as exc:
                raise ValueError(
                    f"the fitted {name} does not fit the {buffer.numel()} channels ({exc})"
                ) from None
        self.fitted = True

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        if not self.fitted:
            raise RuntimeError("Normalize (preset 'dataset') was used before its statistics were computed")
        return (image - self.mean) / self.std


def _fitted_normalize(channels: int, mean: Any, std: Any) -> FittedNormalize:
    # Built as Normalize(mean=DATASET_MEAN, std=DATASET_STD) is written in the script: the
    # statistics come from fitting on the training images, not from the arguments.
    return FittedNormalize(channels)


class NormalizeParams(BaseModel):
    model_config = _STRICT
    preset: Literal["dataset", "imagenet", "custom"] = Field(
        "dataset",
        title="Statistics",
        description="'dataset' measures mean/std on your training images; 'imagenet' uses ImageNet's "
        "(for 3-channel images); 'custom' uses the numbers below.",
    )
    mean: list[float] | None = Field(
        None,
        json_schema_extra={"x-show-if": {"preset": ["custom"]}},
        title="Mean",
        description="Per-channel mean (custom preset).",
        max_length=3,
    )
    std: list[float] | None = Field(
        None,
        json_schema_extra={"x-show-if": {"preset": ["custom"]}},
        title="Standard deviation",
        description="Per-channel standard deviation (custom preset).",
        max_length=3,
    )


def _normalize_stats(params: NormalizeParams, channels: int) -> tuple[list[float], list[float]] | None:
    if params.preset == "imagenet":
        if channels != 3:
            raise NodeError(
                "param_invalid",
                f"ImageNet statistics are for 3-channel images but the input has {channels}: "
                "use preset 'dataset', or a Grayscale operator with 3 output channels before this",
                field="preset",
            )
        return list(IMAGENET_MEAN), list(IMAGENET_STD)
    if params.preset == "dataset":
        return None
    for name, values in (("mean", params.mean), ("std", params.std)):
        if values is None or len(values) not in (1, channels):
            raise NodeError(
                "param_invalid",
                f"{name} needs 1 or {channels} values for the custom preset, got {values}",
                field=name,
            )
    assert params.mean is not None and params.std is not None
    if any(s <= 0 for s in params.std):
        raise NodeError("param_invalid", f"std values must be positive, got {params.std}", field="std")
    return params.mean * (channels // len(params.mean)), params.std * (channels // len(params.std))


@register
class Normalize(OpNode[NormalizeParams]):
    type = "op.Normalize"
    title = "Normalize"
    description = "Shifts and scales pixel values to zero mean and unit variance per channel; helps training."
    params_model = NormalizeParams
    needs_float = True

    def infer(self, params: NormalizeParams, shape: Shape) -> Shape:
        if shape[0] is not None:
            _normalize_stats(params, shape[0])
        return shape

    def transform(self, params: NormalizeParams, shape: Shape) -> Call:
        channels = shape[0] or 3
        stats = _normalize_stats(params, channels)
        if stats is None:  # the dataset's own statistics, fitted on the training images
            mean, std = Code(None, "DATASET_MEAN"), Code(None, "DATASET_STD")
            return Call(
                partial(_fitted_normalize, channels), "v2.Normalize", kwargs={"mean": mean, "std": std}
            )
        return Call(v2.Normalize, "v2.Normalize", kwargs={"mean": stats[0], "std": stats[1]})

    def portable_step(
        self, params: NormalizeParams, in_shape: Shape, fitted: Mapping[str, Any] | None
    ) -> dict[str, Any] | None:
        stats = _normalize_stats(params, in_shape[0] or 3)
        if stats is None:  # the dataset's statistics, as fitted (float32 values)
            if fitted is None:
                return None
            mean, std = list(fitted["mean"]), list(fitted["std"])
        else:
            # The numbers the built transform computes with: float32, as the fitted ones are.
            mean, std = (torch.tensor(values, dtype=torch.float32).tolist() for values in stats)
        return {"op": "normalize", "mean": mean, "std": std}


class ColorJitterParams(BaseModel):
    model_config = _STRICT
    brightness: float = Field(
        0.2, ge=0.0, le=1.0, title="Brightness", description="Random brightness change (fraction)."
    )
    contrast: float = Field(
        0.2, ge=0.0, le=1.0, title="Contrast", description="Random contrast change (fraction)."
    )
    saturation: float = Field(
        0.2, ge=0.0, le=1.0, title="Saturation", description="Random saturation change (colour images)."
    )
    hue: float = Field(0.0, ge=0.0, le=0.5, title="Hue", description="Random hue shift (colour images).")


@register
class ColorJitter(OpNode[ColorJitterParams]):
    type = "op.ColorJitter"
    title = "ColorJitter"
    description = "Randomly changes brightness, contrast, saturation and hue. Training only."
    params_model = ColorJitterParams
    random = True

    def transform(self, params: ColorJitterParams, shape: Shape) -> Call:
        p = params
        return v2_call(v2.ColorJitter, p.brightness, p.contrast, p.saturation, p.hue)


class GrayscaleParams(BaseModel):
    model_config = _STRICT
    channels: Literal[1, 3] = Field(
        1, title="Output channels", description="1 for a gray image, 3 to keep an RGB layout of gray."
    )


@register
class Grayscale(OpNode[GrayscaleParams]):
    type = "op.Grayscale"
    title = "Grayscale"
    description = "Converts images to gray (with 1 or 3 channels)."
    params_model = GrayscaleParams

    def infer(self, params: GrayscaleParams, shape: Shape) -> Shape:
        return (params.channels, *shape[1:])

    def transform(self, params: GrayscaleParams, shape: Shape) -> Call:
        return v2_call(v2.Grayscale, params.channels)

    def portable_step(
        self, params: GrayscaleParams, in_shape: Shape, fitted: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        return {"op": "grayscale", "channels": params.channels}


class BlurParams(BaseModel):
    model_config = _STRICT
    kernel_size: int = Field(3, ge=1, le=31, title="Kernel size", description="Blur window size (odd).")
    sigma: float = Field(
        1.0, gt=0.0, le=10.0, title="Blur strength (sigma)", description="Strength of the blur."
    )


@register
class GaussianBlur(OpNode[BlurParams]):
    type = "op.GaussianBlur"
    title = "GaussianBlur"
    description = "Softens images with a Gaussian filter of fixed strength."
    params_model = BlurParams

    def infer(self, params: BlurParams, shape: Shape) -> Shape:
        if params.kernel_size % 2 == 0:
            raise NodeError(
                "param_invalid", f"kernel_size ({params.kernel_size}) must be odd", field="kernel_size"
            )
        return shape

    def transform(self, params: BlurParams, shape: Shape) -> Call:
        return v2_call(v2.GaussianBlur, params.kernel_size, sigma=(params.sigma, params.sigma))


class ErasingParams(BaseModel):
    model_config = _STRICT
    p: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        title="Probability",
        description="Probability of erasing a rectangle in each image.",
    )
    scale_min: float = Field(
        0.02, gt=0.0, lt=1.0, title="Minimum scale", description="Smallest erased fraction of the image."
    )
    scale_max: float = Field(
        0.2, gt=0.0, lt=1.0, title="Maximum scale", description="Largest erased fraction of the image."
    )


@register
class RandomErasing(OpNode[ErasingParams]):
    type = "op.RandomErasing"
    title = "RandomErasing"
    description = "Blanks out a random rectangle, so the model learns not to rely on one spot. Training only."
    params_model = ErasingParams
    random = True
    needs_float = True

    def transform(self, params: ErasingParams, shape: Shape) -> Call:
        return v2_call(v2.RandomErasing, params.p, scale=(params.scale_min, params.scale_max))


class LambdaParams(BaseModel):
    model_config = _STRICT
    expression: str = Field(
        "x",
        max_length=500,
        title="Formula",
        description="A formula over the image x (values 0..1), e.g. 'clamp(x * 1.5, 0, 1)' or '1 - x'. "
        "Allowed: + - * / ** comparisons, numbers, and functions such as clamp, abs, sqrt, exp, log, "
        "where, minimum, maximum, mean, std, hflip, vflip.",
    )


class ExpressionTransform(nn.Module):
    def __init__(self, expression: Expression) -> None:
        super().__init__()
        self.expression = expression

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        return self.expression(image)


def _parse(params: LambdaParams, shape: Shape | None = None) -> Expression:
    try:
        expression = parse_expression(params.expression)
        if shape is not None and all(dim is not None for dim in shape):
            expression.check_shape(tuple(dim for dim in shape if dim is not None))
    except ExprError as exc:
        raise NodeError("expression_invalid", str(exc), field="expression") from exc
    return expression


@register
class Lambda(OpNode[LambdaParams]):
    type = "op.Lambda"
    title = "Lambda"
    description = "Applies your own formula to every pixel, in a small safe expression language."
    params_model = LambdaParams
    needs_float = True

    def infer(self, params: LambdaParams, shape: Shape) -> Shape:
        _parse(params, shape)
        return shape

    def transform(self, params: LambdaParams, shape: Shape) -> Call:
        # DragDL runs the formula with its own interpreter; the script, being the user's own code,
        # writes it as a Python lambda.
        expr = _parse(params)
        return Call(ExpressionTransform, "v2.Lambda", (Code(expr, f"lambda x: {expr.to_code('x')}"),))

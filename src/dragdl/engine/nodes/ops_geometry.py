"""Geometric data operators: resize, crop, flip, rotate, affine.

Random ones (`random = True`) run on training samples only; evaluation and prediction use the
deterministic ones in order. Resize and CenterCrop describe themselves as portable steps
(`portable_step`), which a browser repeats before in-browser prediction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from torchvision.transforms import v2

from dragdl.engine.graph.errors import NodeError
from dragdl.engine.nodes.base import OpNode, Shape, format_shape
from dragdl.engine.nodes.calls import Call, Code, v2_call
from dragdl.engine.nodes.registry import register

_STRICT = ConfigDict(extra="forbid")
Interpolation = Literal["bilinear", "nearest", "bicubic"]
_MODES = {
    "bilinear": v2.InterpolationMode.BILINEAR,
    "nearest": v2.InterpolationMode.NEAREST,
    "bicubic": v2.InterpolationMode.BICUBIC,
}


class SizeParams(BaseModel):
    model_config = _STRICT
    height: int = Field(32, ge=1, le=4096, title="Height", description="Output height in pixels.")
    width: int | None = Field(
        None, ge=1, le=4096, title="Width", description="Output width in pixels; empty = same as height."
    )

    @property
    def size(self) -> tuple[int, int]:
        return (self.height, self.width or self.height)


class ResizeParams(SizeParams):
    interpolation: Interpolation = Field(
        "bilinear", title="Interpolation", description="How new pixels are computed."
    )


def _with_size(shape: Shape, size: tuple[int, int]) -> Shape:
    return (shape[0], *size)


def _check_fits(title: str, shape: Shape, size: tuple[int, int]) -> None:
    h, w = shape[1], shape[2]
    if (h is not None and size[0] > h) or (w is not None and size[1] > w):
        raise NodeError(
            "shape_mismatch",
            f"{title} of {size[0]}x{size[1]} is larger than the incoming images ({format_shape(shape)}); "
            "add a Resize before it or crop smaller",
            field="height",
        )


@register
class Resize(OpNode[ResizeParams]):
    type = "op.Resize"
    title = "Resize"
    description = "Scales every image to height x width."
    params_model = ResizeParams

    def infer(self, params: ResizeParams, shape: Shape) -> Shape:
        return _with_size(shape, params.size)

    def transform(self, params: ResizeParams, shape: Shape) -> Call:
        mode = Code(_MODES[params.interpolation], f"v2.InterpolationMode.{params.interpolation.upper()}")
        return v2_call(v2.Resize, params.size, interpolation=mode, antialias=True)

    def portable_step(
        self, params: ResizeParams, in_shape: Shape, fitted: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        return {
            "op": "resize",
            "size": list(params.size),
            "interpolation": params.interpolation,
            "antialias": True,
        }


@register
class CenterCrop(OpNode[SizeParams]):
    type = "op.CenterCrop"
    title = "CenterCrop"
    description = "Cuts height x width out of the middle of each image."
    params_model = SizeParams

    def infer(self, params: SizeParams, shape: Shape) -> Shape:
        _check_fits(self.title, shape, params.size)
        return _with_size(shape, params.size)

    def transform(self, params: SizeParams, shape: Shape) -> Call:
        return v2_call(v2.CenterCrop, params.size)

    def portable_step(
        self, params: SizeParams, in_shape: Shape, fitted: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        return {"op": "center_crop", "size": list(params.size)}


class RandomCropParams(SizeParams):
    padding: int = Field(
        0, ge=0, le=256, title="Padding", description="Zero padding added on each side before cropping."
    )


@register
class RandomCrop(OpNode[RandomCropParams]):
    type = "op.RandomCrop"
    title = "RandomCrop"
    description = "Cuts height x width at a random place (after optional padding). Training only."
    params_model = RandomCropParams
    random = True

    def infer(self, params: RandomCropParams, shape: Shape) -> Shape:
        padded: Shape = (
            shape[0],
            *(None if dim is None else dim + 2 * params.padding for dim in shape[1:]),
        )
        _check_fits(self.title, padded, params.size)
        return _with_size(shape, params.size)

    def transform(self, params: RandomCropParams, shape: Shape) -> Call:
        options = {"padding": params.padding} if params.padding else {}
        return v2_call(v2.RandomCrop, params.size, **options)


class RandomResizedCropParams(SizeParams):
    scale_min: float = Field(
        0.08,
        gt=0.0,
        le=1.0,
        title="Minimum scale",
        description="Smallest fraction of the image area to crop.",
    )
    scale_max: float = Field(
        1.0, gt=0.0, le=1.0, title="Maximum scale", description="Largest fraction of the image area to crop."
    )

    @model_validator(mode="after")
    def _ordered(self) -> RandomResizedCropParams:
        if self.scale_min > self.scale_max:
            raise ValueError(f"scale_min ({self.scale_min}) must not exceed scale_max ({self.scale_max})")
        return self


@register
class RandomResizedCrop(OpNode[RandomResizedCropParams]):
    type = "op.RandomResizedCrop"
    title = "RandomResizedCrop"
    description = "Crops a random area and aspect ratio, then resizes to height x width. Training only."
    params_model = RandomResizedCropParams
    random = True

    def infer(self, params: RandomResizedCropParams, shape: Shape) -> Shape:
        return _with_size(shape, params.size)

    def transform(self, params: RandomResizedCropParams, shape: Shape) -> Call:
        scale = (params.scale_min, params.scale_max)
        return v2_call(v2.RandomResizedCrop, params.size, scale=scale, antialias=True)


class FlipParams(BaseModel):
    model_config = _STRICT
    p: float = Field(
        0.5, ge=0.0, le=1.0, title="Probability", description="Probability of flipping each image."
    )


@register
class RandomHorizontalFlip(OpNode[FlipParams]):
    type = "op.RandomHorizontalFlip"
    title = "RandomHorizontalFlip"
    description = "Mirrors images left-right with probability p. Training only (not for digits or text!)."
    params_model = FlipParams
    random = True

    def transform(self, params: FlipParams, shape: Shape) -> Call:
        return v2_call(v2.RandomHorizontalFlip, params.p)


@register
class RandomVerticalFlip(OpNode[FlipParams]):
    type = "op.RandomVerticalFlip"
    title = "RandomVerticalFlip"
    description = "Flips images upside down with probability p. Training only."
    params_model = FlipParams
    random = True

    def transform(self, params: FlipParams, shape: Shape) -> Call:
        return v2_call(v2.RandomVerticalFlip, params.p)


class RotationParams(BaseModel):
    model_config = _STRICT
    degrees: float = Field(
        15.0,
        ge=0.0,
        le=180.0,
        title="Rotation (degrees)",
        description="Rotate by a random angle in [-degrees, degrees].",
    )


@register
class RandomRotation(OpNode[RotationParams]):
    type = "op.RandomRotation"
    title = "RandomRotation"
    description = "Rotates images by a random angle. Training only."
    params_model = RotationParams
    random = True

    def transform(self, params: RotationParams, shape: Shape) -> Call:
        return v2_call(v2.RandomRotation, params.degrees)


class AffineParams(BaseModel):
    model_config = _STRICT
    degrees: float = Field(
        10.0,
        ge=0.0,
        le=180.0,
        title="Rotation (degrees)",
        description="Random rotation in [-degrees, degrees].",
    )
    translate: float = Field(
        0.1, ge=0.0, le=0.5, title="Shift", description="Random shift, as a fraction of width/height."
    )
    scale_min: float = Field(
        0.9, gt=0.0, le=4.0, title="Minimum scale", description="Smallest random zoom factor."
    )
    scale_max: float = Field(
        1.1, gt=0.0, le=4.0, title="Maximum scale", description="Largest random zoom factor."
    )
    shear: float = Field(
        0.0,
        ge=0.0,
        le=45.0,
        title="Shear (degrees)",
        description="Random shear angle in [-shear, shear] degrees.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> AffineParams:
        if self.scale_min > self.scale_max:
            raise ValueError(f"scale_min ({self.scale_min}) must not exceed scale_max ({self.scale_max})")
        return self


@register
class RandomAffine(OpNode[AffineParams]):
    type = "op.RandomAffine"
    title = "RandomAffine"
    description = "Random rotation, shift, zoom and shear in one step. Training only."
    params_model = AffineParams
    random = True

    def transform(self, params: AffineParams, shape: Shape) -> Call:
        options = {"shear": params.shear} if params.shear else {}
        translate, scale = (params.translate, params.translate), (params.scale_min, params.scale_max)
        return v2_call(v2.RandomAffine, params.degrees, translate=translate, scale=scale, **options)

"""Sequence data operators: sequence -> sequence, each sample T steps of F features.

Standardize features learns each feature's mean and deviation on the training split (a
`FittedTransform`: its state is JSON in model.json). The random ones (`random = True`) run on
training samples only, drawing from the generator the pipeline seeds per sample; evaluation and
prediction run the deterministic ones in order. Random crop changes the length in training only,
so it is paired with Center crop of the same length, which evaluation keeps.

Their modules (`data/sequence_ops.py`) import only torch: the exported script carries that file's
source once (`script_helpers`), as it carries the sequence layers'.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.data import sequence_ops
from dragdl.engine.data.sequence_ops import (
    CenterCropSteps,
    GaussianNoise,
    RandomCropSteps,
    RandomTimeShift,
    ResampleSteps,
    StandardizeFeatures,
    feature_stats,
)
from dragdl.engine.data.stages import FittedTransform
from dragdl.engine.graph.errors import NodeError
from dragdl.engine.models.families import ScriptHelper
from dragdl.engine.nodes.base import EmptyParams, OpNode, Shape, format_shape
from dragdl.engine.nodes.calls import Call, Code
from dragdl.engine.nodes.registry import Port, register
from dragdl.engine.nodes.sequence_layers import carried_module

_STRICT = ConfigDict(extra="forbid")
OPS_HELPER = carried_module(sequence_ops, "the sequence operators' modules")
FITTED_NAMES = ("FEATURE_MEAN", "FEATURE_STD")
"""How the exported script names the standardization's statistics, which it measures on the
training steps (`feature_stats`) before building the operator."""


class SequenceOpNode(OpNode[Any]):
    """An operator on sequences: its module takes a float (T, F) sample (or an (N, T, F) batch)."""

    inputs: ClassVar = (Port("in", ("sequence",), label="sequence"),)
    outputs: ClassVar = (Port("out", ("sequence",), label="sequence"),)

    def infer(self, params: Any, shape: Shape) -> Shape:
        _steps(self, shape)
        return shape

    def script_helpers(self, params: Any) -> tuple[ScriptHelper, ...]:
        return (OPS_HELPER,)


def _steps(node: OpNode[Any], shape: Shape) -> tuple[int | None, int]:
    if len(shape) != 2 or shape[1] is None:
        raise NodeError(
            "shape_mismatch",
            f"{node.title} expects sequences TxF (steps x features) but receives {format_shape(shape)}",
            input_shape=format_shape(shape),
        )
    return shape[0], shape[1]


def _check_length(node: OpNode[Any], shape: Shape, length: int, field: str) -> None:
    steps = shape[0]
    if steps is not None and length > steps:
        raise NodeError(
            "shape_mismatch",
            f"{node.title}: {field} ({length}) is longer than the incoming sequences "
            f"({format_shape(shape)}: {steps} steps); choose at most {steps}, or resample them first",
            field=field,
            input_shape=format_shape(shape),
        )


# --- standardization, fitted on the training split ---------------------------------------------


class FittedStandardize(FittedTransform, StandardizeFeatures):
    """StandardizeFeatures whose statistics the pipeline measures on the training split (`fit`)."""

    def fit(self, images: torch.Tensor) -> None:
        """`images`: the training steps that reach this operator, float (..., F): (N, T, F) samples
        of one length, or the valid steps of sequences of several lengths stacked as (S, F)."""
        mean, std = feature_stats(images)
        self.mean.copy_(mean)
        self.std.copy_(std)
        self.fitted = True

    def state(self) -> dict[str, Any]:
        return {"mean": self.mean.tolist(), "std": self.std.tolist()}

    def load(self, state: dict[str, Any]) -> None:
        for name, buffer in (("mean", self.mean), ("std", self.std)):
            values = state.get(name)
            if not isinstance(values, list) or len(values) != buffer.numel():
                raise ValueError(
                    f"the fitted {name} must be a list of {buffer.numel()} numbers (one per feature), "
                    f"got {str(values)[:60]}"
                )
            buffer.copy_(torch.tensor(values, dtype=buffer.dtype))
        self.fitted = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.fitted:
            raise RuntimeError("Standardize features was used before its statistics were measured")
        return super().forward(x)


def _fitted_standardize(features: int, mean: Any, std: Any) -> FittedStandardize:
    # Built as the script writes StandardizeFeatures(F, mean=FEATURE_MEAN, std=FEATURE_STD): the
    # statistics come from fitting on the training split, not from the arguments.
    return FittedStandardize(features)


@register
class StandardizeFeaturesOp(SequenceOpNode):
    type = "op.StandardizeFeatures"
    title = "Standardize features"
    description = (
        "Shifts and scales each feature of the sequences to mean 0 and standard deviation 1, measured "
        "on the training steps; features in very different units then train equally well."
    )
    params_model = EmptyParams

    def transform(self, params: EmptyParams, shape: Shape) -> Call:
        _, features = _steps(self, shape)
        mean, std = (Code(None, name) for name in FITTED_NAMES)
        return Call(_fitted_standardize, "StandardizeFeatures", (features,), {"mean": mean, "std": std})


# --- random augmentation (training only) -------------------------------------------------------


class TimeShiftParams(BaseModel):
    model_config = _STRICT
    max_shift: int = Field(
        5,
        ge=1,
        le=100_000,
        title="Most steps",
        description="Shift by a random number of steps up to this, earlier or later.",
    )
    fill: Literal["zeros", "wrap"] = Field(
        "zeros",
        title="Fill",
        description="'zeros' fills the steps left empty with zeros; 'wrap' brings the steps pushed "
        "out back in at the other end.",
    )


@register
class RandomTimeShiftOp(SequenceOpNode):
    type = "op.RandomTimeShift"
    title = "Random time shift"
    description = (
        "Moves each sequence earlier or later by a random number of steps, so the model does not rely "
        "on when a pattern happens. Training only."
    )
    params_model = TimeShiftParams
    random = True

    def infer(self, params: TimeShiftParams, shape: Shape) -> Shape:
        steps, _ = _steps(self, shape)
        if steps is not None and params.max_shift >= steps:
            raise NodeError(
                "param_invalid",
                f"max_shift ({params.max_shift}) must be smaller than the {steps} steps of the incoming "
                f"sequences ({format_shape(shape)})",
                field="max_shift",
                input_shape=format_shape(shape),
            )
        return shape

    def transform(self, params: TimeShiftParams, shape: Shape) -> Call:
        options = {"fill": params.fill} if params.fill != "zeros" else {}
        return Call(RandomTimeShift, "RandomTimeShift", (params.max_shift,), options)


class CropParams(BaseModel):
    model_config = _STRICT
    length: int = Field(24, ge=1, le=100_000, title="Steps", description="Steps to keep.")


@register
class RandomCropStepsOp(SequenceOpNode):
    type = "op.RandomCropSteps"
    title = "Random crop (steps)"
    description = (
        "Keeps a window of this many steps at a random place of each sequence (a shorter one stays "
        "whole). Training only: add Center crop (steps) of the same length after it, so that evaluation "
        "sees sequences of that length too."
    )
    params_model = CropParams
    random = True

    def infer(self, params: CropParams, shape: Shape) -> Shape:
        steps, features = _steps(self, shape)
        _check_length(self, shape, params.length, "length")
        return (None if steps is None else params.length, features)

    def transform(self, params: CropParams, shape: Shape) -> Call:
        return Call(RandomCropSteps, "RandomCropSteps", (params.length,))


@register
class CenterCropStepsOp(SequenceOpNode):
    type = "op.CenterCropSteps"
    title = "Center crop (steps)"
    description = "Keeps the middle steps of each sequence (a shorter one stays whole)."
    params_model = CropParams

    def infer(self, params: CropParams, shape: Shape) -> Shape:
        steps, features = _steps(self, shape)
        _check_length(self, shape, params.length, "length")
        return (None if steps is None else params.length, features)

    def transform(self, params: CropParams, shape: Shape) -> Call:
        return Call(CenterCropSteps, "CenterCropSteps", (params.length,))


class NoiseParams(BaseModel):
    model_config = _STRICT
    std: float = Field(
        0.1,
        gt=0.0,
        le=100.0,
        title="Noise strength",
        description="Standard deviation of the noise, in the data's units (after Standardize features: "
        "a fraction of each feature's deviation).",
    )


@register
class GaussianNoiseOp(SequenceOpNode):
    type = "op.GaussianNoise"
    title = "Gaussian noise"
    description = (
        "Adds random noise to every value, so the model learns to ignore small wiggles. Training only."
    )
    params_model = NoiseParams
    random = True

    def transform(self, params: NoiseParams, shape: Shape) -> Call:
        return Call(GaussianNoise, "GaussianNoise", (params.std,))


# --- fixed length ------------------------------------------------------------------------------


class ResampleParams(BaseModel):
    model_config = _STRICT
    length: int = Field(
        64, ge=2, le=100_000, title="Steps", description="Steps every sequence has afterwards."
    )


@register
class ResampleStepsOp(SequenceOpNode):
    type = "op.ResampleSteps"
    title = "Resample (steps)"
    description = (
        "Stretches or squeezes every sequence to the same number of steps, drawing straight lines "
        "between neighbouring steps; sequences of different lengths then fit Flatten and Linear."
    )
    params_model = ResampleParams

    def infer(self, params: ResampleParams, shape: Shape) -> Shape:
        return (params.length, _steps(self, shape)[1])

    def transform(self, params: ResampleParams, shape: Shape) -> Call:
        return Call(ResampleSteps, "ResampleSteps", (params.length,))

"""Point clouds: float32 (N, 3 + F) samples, N points of x, y, z and F features, through the point
operators (`data/point_ops.py`).

A batch is `input` (B, N, C) float32, point-major as the dataset holds a cloud and as the point
layers (`network/point_layers.py`) take and give it; the edge reads `1024 pts x 3`. The clouds
reaching the network have one size (Sample points makes it so; the built-in set has one), so
batches carry no lengths.

Operators run as the sequence operators do: the deterministic prefix once per split, all clouds
together in chunks (an operator takes a batch (B, N, C) as it takes one cloud); random operators per
sample on training batches, from the generator the sample's seed sets, so a run and its resume see
the same augmentation. None of the point operators learns from data, so nothing is fitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor

from dragdl.engine.data.base import DatasetInfo, Source
from dragdl.engine.data.batch import INPUT, Batch
from dragdl.engine.data.batches import BatchSource, ImageFetch, LoaderBatches, SampleDataset, TensorBatches
from dragdl.engine.data.pipeline import Pipeline
from dragdl.engine.data.points import PointSource
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.stages import OpStage, apply_batch_stages
from dragdl.engine.inputs.base import (
    BatchSettings,
    InputType,
    Prepared,
    RequestLimits,
    Shape,
    operators_as,
    source_as,
)
from dragdl.engine.inputs.point_decode import SUFFIXES, decode_points
from dragdl.engine.inputs.sections import InputSpec

_CHUNK_VALUES = 8 * 2**20
"""Floats run through the deterministic operators at once (32 MB)."""


class Points(InputType):
    name: ClassVar[str] = "points"
    title: ClassVar[str] = "Point clouds"
    export_input_name: ClassVar[str] = "points"
    samples_name: ClassVar[str] = "point clouds"

    def edge_label(self, shape: Shape) -> str:
        """'1024 pts x 3'; '? pts x 6' when the clouds differ in size."""
        if len(shape) != 2:
            return super().edge_label(shape)
        points, channels = ("?" if dim is None else str(dim) for dim in shape)
        return f"{points} pts x {channels}"

    def sample_shape(self, info: DatasetInfo) -> Shape:
        if info.shape is None or len(info.shape) != 2:
            raise ValueError(f"a point cloud dataset describes one sample as (N, C), not {info.shape}")
        return info.shape

    def describe_sample(self, shape: Shape) -> str:
        """'1024 points x 3 channels'."""
        if len(shape) != 2:
            return super().describe_sample(shape)
        points, channels = ("?" if dim is None else str(dim) for dim in shape)
        return f"{points} points x {channels} channel{'' if channels == '1' else 's'}"

    def prepare(self, source: Source, operators: Sequence[Any], train_rows: np.ndarray) -> Prepared:
        return Prepared(tuple(_stages(operators)))

    def pipeline(
        self, source: Source, splits: Splits, prepared: Prepared, settings: BatchSettings
    ) -> Pipeline:
        return build_point_pipeline(_clouds(source), splits, _stages(prepared.operators), settings)

    def dynamic_axes(self, network_input: Sequence[int | None]) -> dict[int, str]:
        axes = {0: "batch"}
        if network_input and network_input[0] is None:
            axes[1] = "points"
        return axes

    # -- prediction (inputs/point_decode.py) ------------------------------------------------------

    sample_files: ClassVar[tuple[str, ...]] = SUFFIXES

    def decode_file(self, name: str, data: bytes, spec: InputSpec, limits: RequestLimits) -> list[Tensor]:
        """A .npy array of one cloud or several, an .xyz/.pts/.txt text file, an .off mesh's vertices,
        or a .ply file's vertices (ASCII or binary): each (N_i, C)."""
        return decode_points(name, data, spec, limits)

    def predict_batch(self, samples: Sequence[Tensor]) -> Batch:
        """Stacked; clouds of different sizes are brought to the largest by repeating their own
        points in turn, which leaves a max-pooled network's answer as it was."""
        largest = max(len(x) for x in samples)
        filled = [x if len(x) == largest else x[torch.arange(largest) % len(x)] for x in samples]
        return {INPUT: torch.stack(filled)}


def build_point_pipeline(
    source: PointSource, splits: Splits, stages: Sequence[OpStage], settings: BatchSettings
) -> Pipeline:
    """Run the deterministic operators once per split, and batch."""
    if len(splits.train) == 0:
        raise ValueError("the training split is empty")
    stages = tuple(stages)
    first_random = next((i for i, s in enumerate(stages) if s.random), len(stages))
    prefix, tail = stages[:first_random], stages[first_random:]
    eval_stages = tuple(s for s in stages if not s.random)
    targets = np.asarray(settings.targets)

    def make(indices: np.ndarray, training: bool) -> BatchSource | None:
        if len(indices) == 0:
            return None
        head, rest = (prefix, tail) if training else (eval_stages, ())
        values = run_operators(source, indices, head)
        if not rest:
            labels = torch.from_numpy(np.asarray(targets[indices]))
            return TensorBatches(values, labels, settings.batch_size, training, settings.seed)
        dataset = SampleDataset(_CloudFetch(values, indices), np.asarray(targets[indices]), rest)
        # Clouds are in memory and their operators cheap: worker processes would cost more than
        # they save.
        return LoaderBatches(
            dataset,
            settings.batch_size,
            training,
            settings.seed,
            num_workers=0,
            pin_memory=settings.device.type == "cuda",
            persistent=False,
        )

    train = make(splits.train, True)
    assert train is not None
    sample = run_operators(source, splits.train[:1], eval_stages)
    return Pipeline(
        train=train,
        val=make(splits.val, False),
        test=make(splits.test, False),
        stages=stages,
        input_shape=tuple(sample.shape[1:]),
    )


class _CloudFetch(ImageFetch):
    """Row `row` of a split's precomputed clouds, (N, C)."""

    def __init__(self, values: Tensor, indices: np.ndarray) -> None:
        super().__init__(None, None, indices, ())
        self.values = values

    def __call__(self, row: int) -> Tensor:
        return self.values[row]


def run_operators(source: PointSource, indices: np.ndarray, stages: tuple[OpStage, ...]) -> Tensor:
    """Clouds `indices` through deterministic `stages`, together in chunks: float32 (n, N', C')."""
    indices = np.asarray(indices, dtype=np.int64)
    values = source.values[indices]
    if not stages:
        return torch.from_numpy(values)
    chunk = max(1, _CHUNK_VALUES // max(1, values[0].size))
    parts = []
    for start in range(0, len(indices), chunk):
        x = torch.from_numpy(values[start : start + chunk])
        with torch.no_grad():
            parts.append(apply_batch_stages(stages, x, indices[start : start + chunk], "point cloud"))
    return torch.cat(parts)


def _clouds(source: Source) -> PointSource:
    return source_as(source, PointSource, Points.name)


def _stages(operators: Sequence[Any]) -> list[OpStage]:
    return operators_as(operators, OpStage, Points.name)


POINTS = Points()

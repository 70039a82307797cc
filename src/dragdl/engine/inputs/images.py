"""Images: uint8 (C, H, W) samples, decoded from files or held in memory, through image operators."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor

from dragdl.engine.data.base import DatasetInfo, ImageSource, Source
from dragdl.engine.data.pipeline import Pipeline, build_pipeline
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.stages import OpStage
from dragdl.engine.inputs.base import (
    BatchSettings,
    BundleFacts,
    InputType,
    Prepared,
    Shape,
    _deterministic,
    _eval_transform,
)
from dragdl.engine.inputs.image_decode import POLARITY_SAMPLE, Background, dataset_background
from dragdl.engine.inputs.sections import EvalTransform, InputSpec, Preprocessing, PreprocessStep


class Images(InputType):
    name: ClassVar[str] = "images"
    title: ClassVar[str] = "Images"
    export_input_name: ClassVar[str] = "images"

    samples_name: ClassVar[str] = "images"
    upload_fallback: ClassVar[bool] = True

    def sample_shape(self, info: DatasetInfo) -> Shape:
        return (info.channels, *(info.size or (None, None)))

    def describe_sample(self, shape: Shape) -> str:
        channels, height, width = shape
        size = "varies" if height is None or width is None else f"{height}x{width}"
        return f"{channels} channel(s), size {size}"

    def summary(self, info: DatasetInfo) -> dict[str, Any]:
        size = None if info.size is None else f"{info.size[0]}x{info.size[1]}"
        return {**super().summary(info), "size": size}

    def pipeline(
        self, source: Source, splits: Splits, prepared: Prepared, settings: BatchSettings
    ) -> Pipeline:
        # Fittable image operators (Normalize from the dataset) learn inside the pipeline, on the
        # training images as the operators before them leave them.
        return build_pipeline(
            _images(source),
            splits,
            prepared.operators,
            settings.batch_size,
            settings.seed,
            settings.device,
            targets=settings.targets,
            collate=self.collate(),
        )

    def bundle_fields(self, facts: BundleFacts) -> dict[str, Any]:
        """The raw image's channels and size, the training images' paper, the evaluation operators
        with what they learned, and the same path as numbers for a browser (where each operator's
        node can describe itself: `OpNode.portable_step`)."""
        info = facts.info
        spec = InputSpec(
            channels=3 if info.channels == 3 else 1,
            size=list(info.size) if info.size is not None else None,
            network_input=list(facts.network_input),
            background=training_background(_images(facts.source)),
        )
        stages = [op for op in facts.operators if isinstance(op, OpStage) and _deterministic(op)]
        transforms = [_eval_transform(stage, facts.fitted) for stage in stages]
        portable = [
            None if stage.portable is None else stage.portable(facts.fitted.get(stage.node_id))
            for stage in stages
        ]
        return {
            "input": spec,
            "eval_transforms": transforms,
            "preprocessing": describe_preprocessing(spec, transforms, portable),
        }

    def check_batch(
        self, spec: InputSpec, n: int, generator: torch.Generator, preprocess: Callable[[Tensor], Tensor]
    ) -> Tensor:
        """`n` noise images through the bundle's own preprocessing: realistic value ranges and shapes
        (64x64 where the images had no fixed size)."""
        height, width = spec.size or (64, 64)
        images = torch.randint(
            0, 256, (n, spec.channels, height, width), generator=generator, dtype=torch.uint8
        )
        return torch.stack([preprocess(image) for image in images])

    # -- uploads (inputs/image_upload.py) --------------------------------------------------------

    def detect_upload(self, root: Path, options: Mapping[str, str] | None = None) -> str | None:
        """'csv' (a listing with its images), 'bitmaps' (.npy files) or 'folder' (class folders): any
        unpacked upload, as the last guess (`upload_fallback`). An upload sent with options (a
        recording's) is not images."""
        from dragdl.engine.inputs.image_upload import detect_image_upload

        return None if options else detect_image_upload(root)

    def describe_upload(
        self, kind: str, root: Path, options: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Classes, counts, channels, size statistics and sample paths, each image decoded whole."""
        from dragdl.engine.inputs.image_upload import describe_image_upload

        return describe_image_upload(kind, root)


def training_background(source: ImageSource) -> Background:
    """The paper of the dataset's images, from up to POLARITY_SAMPLE of them spread over it."""
    count = len(source)
    indices = np.unique(np.linspace(0, count - 1, min(count, POLARITY_SAMPLE)).astype(np.int64))
    return dataset_background(source.image(int(i)) for i in indices)


def describe_preprocessing(
    spec: InputSpec, transforms: list[EvalTransform], portable_steps: list[dict[str, Any] | None]
) -> Preprocessing:
    """The evaluation path as numbers, for clients that cannot run the catalog (a browser, ONNX users).

    `portable_steps` are what each transform's node declares (`OpNode.portable_step`); a transform
    without one is named by its type and makes the path not portable. The top-level mean and std
    are the last step's that has them (a Normalize's).
    """
    steps: list[PreprocessStep] = []
    portable = True
    floated = False
    mean: list[float] | None = None
    std: list[float] | None = None
    for entry, declared in zip(transforms, portable_steps, strict=True):
        if entry.needs_float and not floated:
            steps.append(PreprocessStep(op="to_float", scale=1 / 255))
            floated = True
        if declared is None:
            steps.append(PreprocessStep(op=entry.type, params=entry.params))
            portable = False
            continue
        steps.append(PreprocessStep(**declared))
        if "mean" in declared and "std" in declared:
            mean, std = list(declared["mean"]), list(declared["std"])
    if not floated:
        steps.append(PreprocessStep(op="to_float", scale=1 / 255))
    return Preprocessing(
        channels=spec.channels,
        size=spec.size,
        background=spec.background,
        steps=steps,
        portable=portable,
        input_shape=spec.network_input,
        mean=mean,
        std=std,
    )


def _images(source: Source) -> ImageSource:
    # Spelled out: ImageSource is abstract, which `source_as(..., type[T], ...)` does not take.
    if not isinstance(source, ImageSource):
        raise TypeError(f"an images input needs an ImageSource, not {type(source).__name__}")
    return source


IMAGES = Images()

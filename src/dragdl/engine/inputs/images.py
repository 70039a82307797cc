"""Images: uint8 (C, H, W) samples, decoded from files or held in memory, through image operators."""

from __future__ import annotations

from typing import ClassVar

from dragdl.engine.data.base import DatasetInfo, ImageSource
from dragdl.engine.data.pipeline import Pipeline, build_pipeline
from dragdl.engine.data.splits import Splits
from dragdl.engine.inputs.base import BatchSettings, InputType, Prepared, Shape


class Images(InputType):
    name: ClassVar[str] = "images"
    title: ClassVar[str] = "Images"
    export_input_name: ClassVar[str] = "images"

    def sample_shape(self, info: DatasetInfo) -> Shape:
        return (info.channels, *(info.size or (None, None)))

    def pipeline(
        self, source: ImageSource, splits: Splits, prepared: Prepared, settings: BatchSettings
    ) -> Pipeline:
        # Fittable image operators (Normalize from the dataset) learn inside the pipeline, on the
        # training images as the operators before them leave them.
        return build_pipeline(
            source,
            splits,
            prepared.operators,
            settings.batch_size,
            settings.seed,
            settings.device,
            targets=settings.targets,
            collate=self.collate(),
        )


IMAGES = Images()

"""From an image source and the compiled data operators to batches for training and evaluation.

Training applies every stage in order; evaluation and prediction apply only the deterministic
stages. Work that is the same every epoch (the deterministic stages before the first random one)
is done once up front, so that a graph without augmentation trains from an in-memory tensor.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import DataLoader

from dragdl.engine.data.base import ImageSource
from dragdl.engine.data.batch import INPUT, Collate, Sample, stack
from dragdl.engine.data.batches import (
    BatchSource,
    ImageFetch,
    LoaderBatches,
    SampleDataset,
    TensorBatches,
    default_num_workers,
    worker_init,
)
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.stages import FittedTransform, OpStage, apply_stages, derive_seed, to_float

log = logging.getLogger(__name__)

DEFAULT_MEMORY_BUDGET = 2 * 2**30
"""Bytes the precomputed images may take in memory (all splits together)."""
FIT_MAX_IMAGES = 20_000
FIT_MEMORY_BUDGET = 2**30
"""Fitting sees at most this many bytes of float images; statistics converge long before."""
_CHUNK_BYTES = 64 * 2**20


@dataclass
class Pipeline:
    """What the trainer and prediction need from the data side of a graph."""

    train: BatchSource
    val: BatchSource | None
    test: BatchSource | None
    stages: tuple[OpStage, ...]
    input_shape: tuple[int, ...]
    fitted: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per node id, what a FittedTransform learned (for example {"mean": [...], "std": [...]})."""
    cpu_threads: int | None = None
    """Intra-op threads to train with on the CPU; None: PyTorch's default (tables use 1)."""
    batch_shape: tuple[int, ...] | None = None
    """One sample's shape as the batches hold it, where that is not `input_shape` (the feature cache:
    batches of a frozen backbone's features, while the model's input is the image)."""

    @property
    def sample_shape(self) -> tuple[int, ...]:
        """One sample's shape as the trained network receives it."""
        return self.batch_shape if self.batch_shape is not None else self.input_shape

    @property
    def eval_stages(self) -> tuple[OpStage, ...]:
        return tuple(s for s in self.stages if not s.random)

    def eval_transform(self, image: Tensor) -> Tensor:
        """A uint8 (C, H, W) image as the model sees it in evaluation: deterministic stages, then float."""
        with torch.no_grad():
            return to_float(apply_stages(self.eval_stages, image))

    def close(self) -> None:
        for src in (self.train, self.val, self.test):
            if src is not None:
                src.close()


class _Precompute:
    """Runs deterministic stages over many images, batched where the stages allow it."""

    def __init__(self, source: ImageSource, num_workers: int) -> None:
        self.source = source
        self.num_workers = num_workers
        self.all_images = source.images()
        self._batch_safe: dict[tuple[str, ...], bool] = {}

    def _is_batch_safe(self, stages: tuple[OpStage, ...], chunk: Tensor, samples: list[int]) -> bool:
        # A compiled op is only promised to accept one (C, H, W) image. Running it on a batch is far
        # faster, so check once per stage list that the batch result equals the per-image one.
        key = tuple(s.node_id for s in stages)
        if key not in self._batch_safe:
            try:
                batched = apply_stages(stages, chunk[:2], samples)
                single = torch.stack(
                    [apply_stages(stages, img, samples[i : i + 1]) for i, img in enumerate(chunk[:2])]
                )
                # Vectorised kernels may round the last bit differently for a batch than for one
                # image; that is not a semantic difference.
                safe = (
                    batched.shape == single.shape
                    and batched.dtype == single.dtype
                    and (
                        torch.allclose(batched, single, rtol=1e-5, atol=1e-6)
                        if batched.is_floating_point()
                        else torch.equal(batched, single)
                    )
                )
            except (RuntimeError, ValueError, TypeError):
                safe = False
            self._batch_safe[key] = safe
        return self._batch_safe[key]

    def run(
        self, indices: np.ndarray, stages: tuple[OpStage, ...], budget: int, finish: bool = False
    ) -> Tensor | None:
        """Images `indices` through `stages` as one tensor, or None when over `budget` bytes or ragged."""
        if len(indices) == 0:
            return None
        with torch.no_grad():
            if self.all_images is not None:
                return self._run_in_memory(self.all_images, indices, stages, budget, finish)
            return self._run_files(indices, stages, budget, finish)

    def _run_in_memory(
        self, images: Tensor, indices: np.ndarray, stages: tuple[OpStage, ...], budget: int, finish: bool
    ) -> Tensor | None:
        def step(x: Tensor, samples: list[int]) -> Tensor:
            y = apply_stages(stages, x, samples)
            return to_float(y) if finish else y

        first = step(images[int(indices[0])], [int(indices[0])])
        if first.numel() * first.element_size() * len(indices) > budget:
            return None
        out = torch.empty((len(indices), *first.shape), dtype=first.dtype)
        per_image = max(1, images[0].numel() * 4, first.numel() * first.element_size())
        chunk = max(2, _CHUNK_BYTES // per_image)
        idx = torch.from_numpy(np.asarray(indices, dtype=np.int64))
        for start in range(0, len(indices), chunk):
            part = images[idx[start : start + chunk]]
            samples = [int(i) for i in indices[start : start + chunk]]
            if self._is_batch_safe(stages, part, samples):
                out[start : start + len(part)] = step(part, samples)
            else:
                for j, img in enumerate(part):
                    y = step(img, samples[j : j + 1])
                    if y.shape != first.shape:
                        return None
                    out[start + j] = y
        return out

    def _run_files(
        self, indices: np.ndarray, stages: tuple[OpStage, ...], budget: int, finish: bool
    ) -> Tensor | None:
        fetch = ImageFetch(None, self.source, indices, stages)
        dataset = SampleDataset(fetch, np.zeros(len(indices), dtype=np.int64), (), finish=finish)
        # Decoding is the slow part of file datasets: spread it over workers once, up front.
        loader: DataLoader[Sample] = DataLoader(
            dataset,
            batch_size=None,
            sampler=[(i, 0) for i in range(len(indices))],
            num_workers=self.num_workers,
            worker_init_fn=worker_init if self.num_workers > 0 else None,
        )
        out: Tensor | None = None
        for row, sample in enumerate(loader):
            raw = sample[INPUT]
            if out is None:
                if raw.numel() * raw.element_size() * len(indices) > budget:
                    return None
                out = torch.empty((len(indices), *raw.shape), dtype=raw.dtype)
            if raw.shape != out.shape[1:]:
                return None
            out[row] = raw
        return out


def _fit_stages(
    source: ImageSource,
    splits: Splits,
    stages: tuple[OpStage, ...],
    seed: int,
    pre: _Precompute,
) -> dict[str, dict[str, Any]]:
    fitted: dict[str, dict[str, Any]] = {}
    for i, stage in enumerate(stages):
        if not isinstance(stage.transform, FittedTransform):
            continue
        preceding = tuple(s for s in stages[:i] if not s.random)
        train = splits.train
        probe = to_float(apply_stages(preceding, source.image(int(train[0])), [int(train[0])]))
        limit = min(FIT_MAX_IMAGES, max(1, FIT_MEMORY_BUDGET // (probe.numel() * 4)))
        if len(train) > limit:
            rng = np.random.default_rng(derive_seed(seed, 3))
            train = np.sort(rng.choice(train, size=limit, replace=False))
        images = pre.run(train, preceding, budget=2**62, finish=True)
        if images is None:
            raise ValueError(f"cannot fit {stage.node_id}: the images reaching it differ in size")
        stage.transform.fit(images)
        fitted[stage.node_id] = stage.transform.state()
        log.debug("fitted %s on %d images", stage.node_id, len(images))
    return fitted


def fit_stages(
    source: ImageSource,
    splits: Splits,
    stages: Sequence[OpStage],
    seed: int,
    *,
    num_workers: int | None = None,
) -> dict[str, dict[str, Any]]:
    """Fit the fittable stages on training images only, as `build_pipeline` does first."""
    workers = default_num_workers() if num_workers is None else num_workers
    return _fit_stages(source, splits, tuple(stages), seed, _Precompute(source, workers))


def eval_chunks(
    source: ImageSource,
    stages: Sequence[OpStage],
    *,
    chunk_bytes: int = 4 * _CHUNK_BYTES,
    num_workers: int | None = None,
) -> Iterator[Tensor]:
    """Every image of `source`, in index order, through the deterministic `stages` as float
    (N, C, H, W) chunks of at most about `chunk_bytes`, for a pass over the whole dataset."""
    eval_stages = tuple(s for s in stages if not s.random)
    workers = default_num_workers() if num_workers is None else num_workers
    pre = _Precompute(source, workers)
    probe = to_float(apply_stages(eval_stages, source.image(0), [0]))
    chunk = max(1, chunk_bytes // max(1, probe.numel() * probe.element_size()))
    for start in range(0, len(source), chunk):
        indices = np.arange(start, min(len(source), start + chunk))
        images = pre.run(indices, eval_stages, budget=2**62, finish=True)
        if images is None:
            raise ValueError("the images reaching the network differ in size; add a Resize")
        yield images


def build_pipeline(
    source: ImageSource,
    splits: Splits,
    stages: Sequence[OpStage],
    batch_size: int,
    seed: int,
    device: torch.device,
    *,
    targets: np.ndarray | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    num_workers: int | None = None,
    collate: Collate = stack,
) -> Pipeline:
    """Fit fittable stages, precompute what does not change between epochs, and set up batching.

    `targets` are the task kind's training targets (default: the source's class labels).
    `num_workers` defaults to min(4, cpus - 1) (0 on one CPU); it only matters when samples are
    processed per epoch (random stages, or images over `memory_budget`). `collate` makes a batch of
    such samples (default: each key stacked; an input type whose samples differ in size pads them).
    """
    if len(splits.train) == 0:
        raise ValueError("the training split is empty")
    stages = tuple(stages)
    all_targets = np.asarray(source.labels, dtype=np.int64) if targets is None else targets
    workers = default_num_workers() if num_workers is None else num_workers
    pre = _Precompute(source, workers)
    fitted = _fit_stages(source, splits, stages, seed, pre)

    first_random = next((i for i, s in enumerate(stages) if s.random), len(stages))
    prefix, rest = stages[:first_random], stages[first_random:]
    eval_stages = tuple(s for s in stages if not s.random)
    cuda = device.type == "cuda"
    gpu_budget = _gpu_budget(device)
    remaining = memory_budget

    def make(indices: np.ndarray, training: bool) -> BatchSource | None:
        nonlocal remaining, gpu_budget
        if len(indices) == 0:
            return None
        head, tail = (prefix, rest) if training else (eval_stages, ())
        cache = pre.run(indices, head, remaining)
        labels = np.asarray(all_targets[indices])
        if cache is not None:
            nbytes = cache.numel() * cache.element_size()
            if not tail and cuda and nbytes <= gpu_budget:
                # Batches are then gathered on the GPU: no host-to-device copy per step.
                gpu_budget -= nbytes
                cache = cache.to(device)
            else:
                remaining -= nbytes
            if not tail:
                return TensorBatches(cache, torch.from_numpy(labels), batch_size, training, seed)
        fetch = ImageFetch(cache, source, indices, head)
        dataset = SampleDataset(fetch, labels, tail)
        return LoaderBatches(
            dataset, batch_size, training, seed, workers, cuda, persistent=training, collate=collate
        )

    train = make(splits.train, training=True)
    assert train is not None
    val = make(splits.val, training=False)
    test = make(splits.test, training=False)
    first = int(splits.train[0])
    sample = to_float(apply_stages(eval_stages, source.image(first), [first]))
    return Pipeline(
        train=train,
        val=val,
        test=test,
        stages=stages,
        input_shape=tuple(sample.shape),
        fitted=fitted,
    )


def _gpu_budget(device: torch.device) -> int:
    """Bytes of precomputed data to keep on the GPU: a share of free memory, leaving room to train."""
    if device.type != "cuda" or not torch.cuda.is_available():
        return 0
    free, _ = torch.cuda.mem_get_info(device)
    return int(free * 0.3)


__all__ = [
    "BatchSource",
    "FittedTransform",
    "LoaderBatches",
    "OpStage",
    "Pipeline",
    "TensorBatches",
    "apply_stages",
    "build_pipeline",
    "derive_seed",
    "eval_chunks",
    "fit_stages",
    "to_float",
]

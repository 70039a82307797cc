"""Sequences: float32 (T, F) samples, T time steps of F features, through the sequence operators.

A batch is `input` (N, T, F) float32 and, when the sequences reaching the network differ in length,
`lengths` int64 (N,): each one's valid steps, the rest of it zero padding, cut to the longest of the
batch. A set of one length carries no lengths, so its graph runs the plain paths (and `TensorBatches`,
as images held in memory do).

Operators run as image operators do (`data/pipeline.py`): those learned from data (Standardize
features) are fitted first, on the training split only and on its valid steps only (padding would pull
a mean towards 0); the deterministic prefix is computed once per split, sequences of one length
together; random operators run per sample on training batches, from the generator the sample's seed
sets, so a run and its resume see the same augmentation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from dragdl.engine.data.base import DatasetInfo, Source
from dragdl.engine.data.batch import INPUT, LENGTHS, TARGET, Batch, Collate, Sample
from dragdl.engine.data.batches import (
    BatchSource,
    ImageFetch,
    LoaderBatches,
    SampleDataset,
    TensorBatches,
    epoch_order,
)
from dragdl.engine.data.pipeline import FIT_MAX_IMAGES, Pipeline
from dragdl.engine.data.sequences import SequenceSource
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.stages import (
    FittedTransform,
    OpStage,
    apply_batch_stages,
    derive_seed,
)
from dragdl.engine.inputs.base import (
    BatchSettings,
    InputType,
    Prepared,
    RequestLimits,
    Shape,
    operators_as,
    source_as,
)
from dragdl.engine.inputs.sections import InputSpec
from dragdl.engine.inputs.sequence_decode import SUFFIXES, decode_sequences

_CHUNK_VALUES = 8 * 2**20
"""Floats run through the deterministic operators at once (32 MB)."""


class Sequences(InputType):
    name: ClassVar[str] = "sequence"
    title: ClassVar[str] = "Sequences"
    export_input_name: ClassVar[str] = "sequence"
    samples_name: ClassVar[str] = "sequences"

    def edge_label(self, shape: Shape) -> str:
        if len(shape) != 2:
            return super().edge_label(shape)
        steps, features = ("?" if dim is None else str(dim) for dim in shape)
        return f"{steps} x {features} seq"

    def sample_shape(self, info: DatasetInfo) -> Shape:
        if info.shape is None or len(info.shape) != 2:
            raise ValueError(f"a sequence dataset describes one sample as (T, F), not {info.shape}")
        return info.shape

    def describe_sample(self, shape: Shape) -> str:
        """'28 steps x 28 features'; '? steps x 3 features' when the lengths vary."""
        if len(shape) != 2:
            return super().describe_sample(shape)
        steps, features = ("?" if dim is None else str(dim) for dim in shape)
        return f"{steps} steps x {features} feature{'' if features == '1' else 's'}"

    def prepare(self, source: Source, operators: Sequence[Any], train_rows: np.ndarray) -> Prepared:
        # Standardize features learns inside the pipeline, as an image Normalize does: nothing before
        # the network depends on what it learns.
        return Prepared(tuple(_stages(operators)))

    def pipeline(
        self, source: Source, splits: Splits, prepared: Prepared, settings: BatchSettings
    ) -> Pipeline:
        return build_sequence_pipeline(_sequences(source), splits, _stages(prepared.operators), settings)

    def collate(self) -> Collate:
        return pad_collate

    def dynamic_axes(self, network_input: Sequence[int | None]) -> dict[int, str]:
        axes = {0: "batch"}
        if network_input and network_input[0] is None:
            axes[1] = "time"
        return axes

    # -- prediction (inputs/sequence_decode.py) ---------------------------------------------------

    sample_files: ClassVar[tuple[str, ...]] = SUFFIXES

    def decode_file(self, name: str, data: bytes, spec: InputSpec, limits: RequestLimits) -> list[Tensor]:
        """A .ts file's series, a CSV of one sequence, or an .npy array's sequences, each (T_i, F)."""
        return decode_sequences(name, data, spec, limits)

    def predict_batch(self, samples: Sequence[Tensor]) -> Batch:
        """Zero-padded to the longest, with `lengths` when they differ (as training batches are)."""
        lengths = torch.tensor([len(x) for x in samples], dtype=torch.int64)
        if bool((lengths == lengths[0]).all()):
            return {INPUT: torch.stack(list(samples))}
        return {INPUT: pad_sequence(list(samples), batch_first=True), LENGTHS: lengths}

    # -- uploads (inputs/sequence_upload.py) -----------------------------------------------------

    def detect_upload(self, root: Path, options: Mapping[str, str] | None = None) -> str | None:
        """'sequence' for a `.ts` file or pair, class folders of CSVs, `X.npy` with its labels, or one
        CSV recording sent with its label column, window or stride."""
        from dragdl.engine.inputs.sequence_upload import detect_sequence_upload

        return detect_sequence_upload(root, options)

    def describe_upload(
        self, kind: str, root: Path, options: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Counts, classes or target statistics, lengths, features and a bounded preview of line plots."""
        from dragdl.engine.inputs.sequence_upload import describe_sequence_upload

        return describe_sequence_upload(root, options)


def pad_collate(samples: Sequence[Sample], with_lengths: bool = False) -> Batch:
    """(T_i, F) samples as one (N, T_max, F) batch, zero-padded, with their `lengths` when asked
    (`with_lengths`: the set's lengths vary) or when this batch's lengths differ."""
    inputs = [sample[INPUT] for sample in samples]
    target = torch.stack([sample[TARGET] for sample in samples])
    lengths = torch.tensor([len(x) for x in inputs], dtype=torch.int64)
    if not with_lengths and bool((lengths == lengths[0]).all()):
        return {INPUT: torch.stack(inputs), TARGET: target}
    return {INPUT: pad_sequence(inputs, batch_first=True), TARGET: target, LENGTHS: lengths}


class SequenceBatches(BatchSource):
    """Batches of padded sequences held in memory, each cut to its longest, with their lengths."""

    def __init__(
        self, values: Tensor, lengths: Tensor, targets: Tensor, batch_size: int, shuffle: bool, seed: int
    ) -> None:
        self.values, self.lengths, self.targets = values, lengths, targets
        self.num_samples = len(targets)
        self.batch_size, self.shuffle, self.seed = batch_size, shuffle, seed

    def batches(self, epoch: int, skip: int = 0) -> Iterator[Batch]:
        order = epoch_order(self.num_samples, self.shuffle, self.seed, epoch)
        for b in range(skip, len(self)):
            idx = order[b * self.batch_size : (b + 1) * self.batch_size][self.rank :: self.world]
            lengths = self.lengths.index_select(0, idx)
            steps = int(lengths.max())
            # index_select, as TensorBatches gathers: the rows of values[idx, :steps], faster.
            values = self.values[:, :steps].index_select(0, idx)
            yield {INPUT: values, TARGET: self.targets.index_select(0, idx), LENGTHS: lengths}


class _SequenceFetch(ImageFetch):
    """Row `row` of a split's precomputed sequences: its valid steps, (T_i, F)."""

    def __init__(self, values: Tensor, lengths: Tensor, indices: np.ndarray) -> None:
        super().__init__(None, None, indices, ())
        self.values, self.lengths = values, lengths

    def __call__(self, row: int) -> Tensor:
        return self.values[row, : int(self.lengths[row])]


def build_sequence_pipeline(
    source: SequenceSource, splits: Splits, stages: Sequence[OpStage], settings: BatchSettings
) -> Pipeline:
    """Fit the fitted operators on the training split, precompute the deterministic ones, and batch."""
    if len(splits.train) == 0:
        raise ValueError("the training split is empty")
    stages = tuple(stages)
    fitted = fit_operators(source, splits.train, stages, settings.seed)
    first_random = next((i for i, s in enumerate(stages) if s.random), len(stages))
    prefix, tail = stages[:first_random], stages[first_random:]
    eval_stages = tuple(s for s in stages if not s.random)
    targets = np.asarray(settings.targets)

    heads: dict[str, tuple[np.ndarray, tuple[Tensor, Tensor], tuple[OpStage, ...]]] = {}
    for name, indices, training in (
        ("train", splits.train, True),
        ("val", splits.val, False),
        ("test", splits.test, False),
    ):
        if len(indices):
            head, rest = (prefix, tail) if training else (eval_stages, ())
            heads[name] = (indices, run_operators(source, indices, head), rest)
    # The network gets lengths when the sequences of some split differ in length after the
    # deterministic operators; one length everywhere (Resample, or a fixed-length set) runs without.
    varying = any(bool((lengths != lengths[0]).any()) for _, (_, lengths), _ in heads.values())

    def make(name: str) -> BatchSource | None:
        if name not in heads:
            return None
        indices, (values, lengths), rest = heads[name]
        training = name == "train"
        labels = torch.from_numpy(np.asarray(targets[indices]))
        if not rest:
            if varying:
                return SequenceBatches(values, lengths, labels, settings.batch_size, training, settings.seed)
            return TensorBatches(values, labels, settings.batch_size, training, settings.seed)
        dataset = SampleDataset(_SequenceFetch(values, lengths, indices), np.asarray(targets[indices]), rest)
        # Sequences are in memory and their operators cheap: worker processes would cost more than
        # they save.
        return LoaderBatches(
            dataset,
            settings.batch_size,
            training,
            settings.seed,
            num_workers=0,
            pin_memory=settings.device.type == "cuda",
            persistent=False,
            collate=partial(pad_collate, with_lengths=varying),
        )

    train = make("train")
    assert train is not None
    first = splits.train[:1]
    sample, _ = run_operators(source, first, eval_stages)
    return Pipeline(
        train=train,
        val=make("val"),
        test=make("test"),
        stages=stages,
        input_shape=tuple(sample.shape[1:]),
        fitted=fitted,
    )


def fit_operators(
    source: SequenceSource, train: np.ndarray, stages: tuple[OpStage, ...], seed: int
) -> dict[str, dict[str, Any]]:
    """Fit each operator learned from data (`FittedTransform`) on the valid steps of the training
    sequences as the deterministic operators before it leave them; what each learned, by node id."""
    fitted: dict[str, dict[str, Any]] = {}
    if len(train) > FIT_MAX_IMAGES:  # statistics converge long before; the same subset every time
        rng = np.random.default_rng(derive_seed(seed, 3))
        train = np.sort(rng.choice(train, size=FIT_MAX_IMAGES, replace=False))
    for i, stage in enumerate(stages):
        if not isinstance(stage.transform, FittedTransform):
            continue
        preceding = tuple(s for s in stages[:i] if not s.random)
        values, lengths = run_operators(source, train, preceding)
        valid = torch.arange(values.shape[1])[None, :] < lengths[:, None]
        stage.transform.fit(values[valid])  # (S, F): every valid step, never the padding
        fitted[stage.node_id] = stage.transform.state()
    return fitted


def run_operators(
    source: SequenceSource, indices: np.ndarray, stages: tuple[OpStage, ...]
) -> tuple[Tensor, Tensor]:
    """Sequences `indices` through deterministic `stages`: padded float32 (n, T', F) and lengths (n,).

    Sequences of one length go through each operator together, in chunks (an operator takes a batch
    (N, T, F) as it takes one sequence), so a fixed-length set is a few calls per operator."""
    indices = np.asarray(indices, dtype=np.int64)
    lengths = source.lengths[indices]
    if not stages:
        steps = int(lengths.max()) if len(indices) else 0
        return torch.from_numpy(source.values[indices, :steps]), torch.from_numpy(lengths.copy())
    outputs: list[Tensor | None] = [None] * len(indices)
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        chunk = max(1, _CHUNK_VALUES // max(1, int(length) * source.features))
        for start in range(0, len(rows), chunk):
            part = rows[start : start + chunk]
            x = torch.from_numpy(source.values[indices[part], : int(length)])
            with torch.no_grad():
                y = apply_batch_stages(stages, x, indices[part], "sequence")
            for j, row in enumerate(part):
                outputs[row] = y[j]
    done = [out for out in outputs if out is not None]
    assert len(done) == len(indices)
    return pad_sequence(done, batch_first=True), torch.tensor([len(out) for out in done], dtype=torch.int64)


def _sequences(source: Source) -> SequenceSource:
    return source_as(source, SequenceSource, Sequences.name)


def _stages(operators: Sequence[Any]) -> list[OpStage]:
    return operators_as(operators, OpStage, Sequences.name)


SEQUENCES = Sequences()

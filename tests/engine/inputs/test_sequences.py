"""The `sequence` input type: edge labels, shapes, padded batches with lengths only where they vary,
operators fitted on the training split's valid steps, random ones on training batches only."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dragdl.engine.data.base import DatasetInfo
from dragdl.engine.data.batch import INPUT, LENGTHS, TARGET
from dragdl.engine.data.batches import TensorBatches
from dragdl.engine.data.sequence_ops import GaussianNoise
from dragdl.engine.data.sequences import SequenceSource, sequence_info
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.stages import OpStage
from dragdl.engine.inputs import find_input_type, get_input_type
from dragdl.engine.inputs.base import BatchSettings, Prepared
from dragdl.engine.inputs.sequences import SEQUENCES, SequenceBatches, pad_collate, run_operators
from dragdl.engine.nodes.ops_sequence import FittedStandardize


def source_of(lengths: list[int], features: int = 2, seed: int = 0) -> SequenceSource:
    rng = np.random.default_rng(seed)
    values = np.zeros((len(lengths), max(lengths), features), dtype=np.float32)
    for i, length in enumerate(lengths):
        values[i, :length] = rng.normal(3.0, 2.0, (length, features))
    labels = np.arange(len(lengths)) % 2
    return SequenceSource(values, np.asarray(lengths), labels=labels, classes=("a", "b"))


def splits_of(n: int) -> Splits:
    order = np.random.default_rng(1).permutation(n)
    return Splits(
        train=np.sort(order[: n // 2]),
        val=np.sort(order[n // 2 : 3 * n // 4]),
        test=np.sort(order[3 * n // 4 :]),
    )


def settings(source: SequenceSource, batch_size: int = 4) -> BatchSettings:
    assert source.labels is not None
    return BatchSettings(batch_size=batch_size, seed=7, device=torch.device("cpu"), targets=source.labels)


def test_the_type_is_registered_under_its_port_type_and_labels_edges() -> None:
    assert get_input_type("sequence") is SEQUENCES and find_input_type("sequence") is SEQUENCES
    assert SEQUENCES.export_input_name == "sequence"
    assert SEQUENCES.edge_label((28, 28)) == "28 x 28 seq"
    assert SEQUENCES.edge_label((None, 3)) == "? x 3 seq"
    assert SEQUENCES.edge_label((16,)) == "16"  # after global pooling: a plain vector


def test_sample_shape_and_dynamic_axes_follow_whether_lengths_vary() -> None:
    assert SEQUENCES.sample_shape(source_of([5, 5, 5]).info) == (5, 2)
    assert SEQUENCES.sample_shape(source_of([5, 2, 3]).info) == (None, 2)
    assert SEQUENCES.dynamic_axes((5, 2)) == {0: "batch"}
    assert SEQUENCES.dynamic_axes((None, 2)) == {0: "batch", 1: "time"}
    with pytest.raises(ValueError, match=r"\(T, F\)"):
        SEQUENCES.sample_shape(DatasetInfo(classes=("a",), channels=1, size=(4, 4), count=1))
    assert SEQUENCES.summary(sequence_info(("a", "b"), 3, None, 2)) == {
        "channels": 0,
        "size": None,
        "shape": [None, 2],
        "sample": "? steps x 2 features",
        "samples_name": "sequences",
    }
    assert SEQUENCES.summary(sequence_info(("a", "b"), 3, 28, 1))["sample"] == "28 steps x 1 feature"


def test_collate_pads_and_adds_lengths_only_when_they_differ() -> None:
    same = [{INPUT: torch.ones(3, 2), TARGET: torch.tensor(i)} for i in range(2)]
    batch = pad_collate(same)
    assert batch.keys() == {INPUT, TARGET} and batch[INPUT].shape == (2, 3, 2)
    assert pad_collate(same, with_lengths=True)[LENGTHS].tolist() == [3, 3]
    mixed = [
        {INPUT: torch.ones(3, 2), TARGET: torch.tensor(0)},
        {INPUT: torch.ones(1, 2), TARGET: torch.tensor(1)},
    ]
    batch = pad_collate(mixed)
    assert batch[LENGTHS].tolist() == [3, 1]
    assert batch[INPUT].shape == (2, 3, 2) and batch[INPUT][1, 1:].abs().sum() == 0


def test_a_fixed_length_set_batches_from_a_tensor_without_lengths() -> None:
    source = source_of([6] * 12)
    pipeline = SEQUENCES.pipeline(source, splits_of(12), Prepared(), settings(source))
    assert isinstance(pipeline.train, TensorBatches) and pipeline.input_shape == (6, 2)
    batches = list(pipeline.train.batches(0))
    assert [b[INPUT].shape[0] for b in batches] == [4, 2]
    assert all(b.keys() == {INPUT, TARGET} for b in batches)


def test_a_variable_length_set_gives_each_batch_its_lengths_cut_to_its_longest() -> None:
    lengths = [2, 9, 4, 4, 7, 3, 5, 8, 6, 2, 9, 5]
    source = source_of(lengths)
    splits = splits_of(len(lengths))
    pipeline = SEQUENCES.pipeline(source, splits, Prepared(), settings(source))
    assert isinstance(pipeline.train, SequenceBatches)
    seen = []
    for batch in pipeline.train.batches(0):
        steps = batch[LENGTHS]
        assert batch[INPUT].shape[1] == int(steps.max())
        for x, length in zip(batch[INPUT], steps.tolist(), strict=True):
            assert x[length:].abs().sum() == 0  # padding stays zero
            seen.append(length)
    assert sorted(seen) == sorted(lengths[i] for i in splits.train)
    assert pipeline.val is not None and all(LENGTHS in b for b in pipeline.val.batches(0))


def test_standardization_is_fitted_on_the_valid_training_steps_only() -> None:
    lengths = [2, 9, 4, 4, 7, 3, 5, 8, 6, 2, 9, 5]
    source = source_of(lengths)
    splits = splits_of(len(lengths))
    stage = OpStage("std", FittedStandardize(2), random=False, needs_float=False)
    pipeline = SEQUENCES.pipeline(
        source, splits, SEQUENCES.prepare(source, [stage], splits.train), settings(source)
    )
    steps = np.concatenate([source.sequence(int(i)) for i in splits.train])
    assert pipeline.fitted["std"]["mean"] == pytest.approx(steps.mean(axis=0).tolist(), rel=1e-5)
    assert pipeline.fitted["std"]["std"] == pytest.approx(steps.std(axis=0).tolist(), rel=1e-5)
    valid = torch.cat([b[INPUT][i, :n] for b in pipeline.train.batches(0) for i, n in enumerate(b[LENGTHS])])
    assert valid.mean(0).abs().max() < 1e-5  # the training steps come out standardized


def test_random_operators_run_on_training_batches_only_and_repeat_with_the_seed() -> None:
    source = source_of([6] * 12)
    splits = splits_of(12)
    noise = OpStage("noise", GaussianNoise(0.5), random=True, needs_float=False)
    pipeline = SEQUENCES.pipeline(source, splits, Prepared((noise,)), settings(source))
    first = [b[INPUT] for b in pipeline.train.batches(0)]
    again = [b[INPUT] for b in pipeline.train.batches(0)]
    other = [b[INPUT] for b in pipeline.train.batches(1)]
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    clean, _ = run_operators(source, splits.train, ())
    assert sorted(round(float(b.sum()), 3) for b in first) != sorted(round(float(b.sum()), 3) for b in other)
    assert not torch.equal(torch.cat(first).sum(), clean.sum())
    assert pipeline.val is not None
    val = torch.cat([b[INPUT] for b in pipeline.val.batches(0)])
    expected, _ = run_operators(source, splits.val, ())
    assert torch.equal(val.sort(0).values, expected.sort(0).values)  # evaluation: no noise


def test_an_operator_giving_nan_is_named_with_the_sequence() -> None:
    from dragdl.engine.data.stages import NonFiniteError

    class Log(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.log(x)

    source = source_of([4, 4, 3])
    np.abs(source.values, out=source.values)
    source.values[1, 0, 0] = -1.0  # log(-1) is NaN
    with pytest.raises(
        NonFiniteError, match="the operator log produced NaN or infinite values for sequence 1"
    ):
        run_operators(source, np.arange(3), (OpStage("log", Log(), random=False, needs_float=False),))

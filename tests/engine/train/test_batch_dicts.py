"""Batches as dicts: a task kind's step decides the loss (even inside the network), and a collate
hook's padded sequences reach the network with their lengths."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dragdl.engine.data.base import DatasetInfo, ImageSource
from dragdl.engine.data.batch import INPUT, LENGTHS, TARGET, Batch, Sample
from dragdl.engine.data.pipeline import LoaderBatches, build_pipeline
from dragdl.engine.data.splits import split_indices
from dragdl.engine.tasks.classification import Classification
from dragdl.engine.tasks.settings import TrainConfig
from dragdl.engine.train.reporter import ListReporter
from dragdl.engine.train.trainer import train

from .conftest import CLASSES, make_model, make_pipeline

CPU = torch.device("cpu")


class LossInside(Classification):
    """A kind whose network computes its own loss from the targets (as a detector does)."""

    def step(self, model: nn.Module, batch: Batch, criterion: nn.Module) -> tuple[Tensor, Tensor]:
        logits, loss = model(batch[INPUT], batch[TARGET])
        return loss, logits


class SelfLossNet(nn.Module):
    """The conftest CNN, returning its logits and their cross-entropy against the targets it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.net = make_model()
        self.targets_seen = 0

    def forward(self, x: Tensor, targets: Tensor) -> tuple[Tensor, Tensor]:
        self.targets_seen += len(targets)
        logits: Tensor = self.net(x)
        return logits, F.cross_entropy(logits, targets)


def test_a_kind_whose_network_computes_the_loss_trains_through_train(tmp_path: Path) -> None:
    model, reporter = SelfLossNet(), ListReporter()
    config = TrainConfig(epochs=6, batch_size=16, lr=0.05, device="cpu", early_stopping=False)
    pipeline = make_pipeline(random_stage=False)
    result = train(model, pipeline, config, CLASSES, tmp_path, reporter, task=LossInside())
    losses = [h["loss"] for h in result.history]
    assert losses[-1] < losses[0] * 0.5, losses
    assert result.test is not None and result.test["test_accuracy"] >= 0.9
    # Every training sample of every epoch, and the validation and test passes, gave the network its targets.
    assert model.targets_seen >= pipeline.train.num_samples * config.epochs


class Sequences(ImageSource):
    """Sequences of 3 to 12 steps of 2 features, not held as one tensor: a class's sign, plus noise."""

    def __init__(self, n: int = 120) -> None:
        gen = torch.Generator().manual_seed(0)
        self.labels = np.arange(n) % 2
        lengths = torch.randint(3, 13, (n,), generator=gen).tolist()
        self.items = [
            (float(label) * 2 - 1) + 0.3 * torch.randn(length, 2, generator=gen)
            for label, length in zip(self.labels, lengths, strict=True)
        ]
        self.info = DatasetInfo(classes=("low", "high"), channels=2, size=None, count=n)

    def image(self, index: int) -> Tensor:
        return self.items[index]


def pad(samples: Sequence[Sample]) -> Batch:
    """Zero-pads each input to the longest of the batch and says how long each one was."""
    inputs = [s[INPUT] for s in samples]
    return {
        INPUT: nn.utils.rnn.pad_sequence(inputs, batch_first=True),
        LENGTHS: torch.tensor([len(x) for x in inputs]),
        TARGET: torch.stack([s[TARGET] for s in samples]),
    }


class MeanOverTime(nn.Module):
    """The mean of the valid steps of each sequence (padding left out), then a linear layer."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)
        self.seen: list[tuple[int, Tensor]] = []

    def forward(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        if lengths is None:  # the fast path's operation count calls the network with its input alone
            lengths = torch.full((len(x),), x.shape[1])
        else:
            self.seen.append((x.shape[1], lengths.clone()))
        valid = torch.arange(x.shape[1])[None, :] < lengths[:, None]
        mean = (x * valid[..., None]).sum(1) / lengths[:, None]
        out: Tensor = self.linear(mean)
        return out


def test_a_collate_hook_pads_variable_length_samples_and_the_network_gets_their_lengths(
    tmp_path: Path,
) -> None:
    source = Sequences()
    splits = split_indices(source.labels, 0.2, 0.2, seed=0)
    pipeline = build_pipeline(source, splits, [], 8, seed=0, device=CPU, num_workers=0, collate=pad)
    assert isinstance(pipeline.train, LoaderBatches)  # ragged: per sample, then the collate
    model = MeanOverTime()
    torch.manual_seed(0)
    config = TrainConfig(epochs=5, batch_size=8, lr=0.1, device="cpu", early_stopping=False)
    result = train(model, pipeline, config, ["low", "high"], tmp_path, ListReporter(), task=Classification())
    assert result.test is not None and result.test["test_accuracy"] >= 0.9
    assert model.seen, "the network never received lengths"
    true_lengths = {len(item) for item in source.items}
    for padded, lengths in model.seen:
        assert padded == int(lengths.max())  # padded to the longest of its batch, no further
        assert set(lengths.tolist()) <= true_lengths
    assert len({int(length) for _, lengths in model.seen for length in lengths}) > 3

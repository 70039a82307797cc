"""Prediction serves in bf16 only where its probabilities stay within 1e-2 of fp32's."""

from __future__ import annotations

import torch
from torch import nn

from dragdl.engine.bundle.bundle import bf16_probabilities_agree


def small_cnn() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)
    ).eval()


def test_a_small_classifier_keeps_its_probabilities_in_bf16() -> None:
    assert bf16_probabilities_agree(small_cnn(), (1, 8, 8))


def test_a_classifier_whose_logits_bf16_rounds_away_is_kept_in_fp32() -> None:
    model = small_cnn()
    last = model[3]
    assert isinstance(last, nn.Linear)
    with torch.no_grad():
        # Logits in the hundreds: bf16's 8-bit mantissa rounds them by whole units, which moves
        # the softmax far more than 1e-2.
        last.weight.mul_(300.0)
    assert not bf16_probabilities_agree(model, (1, 8, 8))

"""Fine-tuning Lite0 from its ImageNet weights beats training it from random initialization."""

from __future__ import annotations

import pytest
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch.nn import functional as F

from dragdl.engine.models import InputAdapter, TransferModel, backbone_info, create_features, make_head


def _digits_64() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32)[:, None] / 16.0
    images = F.interpolate(images, size=(64, 64), mode="bilinear", align_corners=False)
    labels = torch.tensor(digits.target)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=0.25, random_state=0, stratify=labels
    )
    return x_train, x_test, y_train, y_test


def _fine_tune_accuracy(pretrained: bool) -> float:
    x_train, x_test, y_train, y_test = _digits_64()
    info = backbone_info("efficientnet_lite0", "efficientnet_lite0")
    torch.manual_seed(0)
    model = TransferModel(
        # Kept at 64x64 (no upscaling to 224) so the test stays within a few CPU minutes.
        InputAdapter(1, (64, 64), (64, 64), info.mean, info.std),
        create_features("efficientnet_lite0", "efficientnet_lite0", pretrained=pretrained),
        make_head(info.feature_dim, 10, hidden_units=None, dropout=0.2),
        freeze_features=False,
        backbone_lr_scale=1.0,
    )
    optimizer = torch.optim.AdamW(model.param_groups(lr=1e-3))
    generator = torch.Generator().manual_seed(0)
    for _ in range(3):
        model.train()
        order = torch.randperm(len(x_train), generator=generator)
        for start in range(0, len(x_train), 64):
            batch = order[start : start + 64]
            loss = F.cross_entropy(model(x_train[batch]), y_train[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    with torch.no_grad():
        predictions = torch.cat([model(x_test[i : i + 256]).argmax(-1) for i in range(0, len(x_test), 256)])
    return (predictions == y_test).float().mean().item()


@pytest.mark.slow
@pytest.mark.timeout(2400)  # about 4 CPU minutes alone, much more when the cores are shared
def test_imagenet_weights_beat_random_init_on_digits() -> None:
    # Measured on CPU: 97.3% from ImageNet weights vs 84.7% from random init.
    pretrained = _fine_tune_accuracy(pretrained=True)
    scratch = _fine_tune_accuracy(pretrained=False)
    assert pretrained >= 0.93, pretrained
    assert pretrained > scratch + 0.05, (pretrained, scratch)

"""The transfer model: input adapter -> pretrained features -> new classification head.

Everything that depends on the input (channel repeat, resize) is decided at build time from the
known per-sample shape, so `forward` has no data-dependent branches and exports to ONNX.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F


class InputAdapter(nn.Module):
    """Make a float image batch in [0, 1] fit a backbone: 1 -> 3 channels, resize, normalize."""

    mean: torch.Tensor
    std: torch.Tensor

    def __init__(
        self,
        in_channels: int,
        in_size: tuple[int | None, int | None],
        target_size: tuple[int, int],
        mean: tuple[float, float, float],
        std: tuple[float, float, float],
    ) -> None:
        super().__init__()
        if in_channels not in (1, 3):
            raise ValueError(f"in_channels ({in_channels}) must be 1 or 3")
        self.in_channels = in_channels
        # An unknown input size resizes unconditionally: interpolating to a fixed size is also
        # correct (and exportable) when the size happens to match already.
        self.resize_to: tuple[int, int] | None = None if tuple(in_size) == tuple(target_size) else target_size
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, 3, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.in_channels == 1:
            x = x.expand(-1, 3, -1, -1)
        if self.resize_to is not None:
            x = F.interpolate(x, size=self.resize_to, mode="bilinear", align_corners=False, antialias=True)
        return (x - self.mean) / self.std

    def extra_repr(self) -> str:
        return f"in_channels={self.in_channels}, resize_to={self.resize_to}"


def make_head(feature_dim: int, num_classes: int, hidden_units: int | None, dropout: float) -> nn.Sequential:
    """[Dropout, (Linear hidden, ReLU, Dropout)?, Linear num_classes]."""
    layers: list[nn.Module] = [nn.Dropout(dropout)]
    width = feature_dim
    if hidden_units is not None:
        layers += [nn.Linear(feature_dim, hidden_units), nn.ReLU(inplace=True), nn.Dropout(dropout)]
        width = hidden_units
    layers.append(nn.Linear(width, num_classes))
    return nn.Sequential(*layers)


class TransferModel(nn.Module):
    """adapter -> features -> head, with a frozen or lower-learning-rate backbone.

    When `features_frozen`, the backbone's parameters never require gradients and `train()`
    leaves it in eval mode, so BatchNorm running statistics and dropout stay as pretrained.
    """

    def __init__(
        self,
        adapter: InputAdapter,
        features: nn.Module,
        head: nn.Module,
        freeze_features: bool = True,
        backbone_lr_scale: float = 0.1,
    ) -> None:
        super().__init__()
        if not 0.0 <= backbone_lr_scale <= 1.0:
            raise ValueError(f"backbone_lr_scale ({backbone_lr_scale}) must be between 0 and 1")
        self.adapter = adapter
        self.features = features
        self.head = head
        self.backbone_lr_scale = backbone_lr_scale
        self._frozen = freeze_features
        if freeze_features:
            self.features.requires_grad_(False)
            self.features.eval()

    @property
    def features_frozen(self) -> bool:
        return self._frozen

    def train(self, mode: bool = True) -> TransferModel:
        super().train(mode)
        if self._frozen:
            self.features.eval()
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(self.adapter(x)))  # type: ignore[no-any-return]

    def param_groups(self, lr: float) -> list[dict[str, Any]]:
        """Optimizer groups: backbone at lr * backbone_lr_scale, head at lr; frozen params left out."""
        groups: list[dict[str, Any]] = []
        backbone = [p for p in self.features.parameters() if p.requires_grad]
        if backbone and self.backbone_lr_scale > 0:
            groups.append({"params": backbone, "lr": lr * self.backbone_lr_scale, "name": "backbone"})
        head = [p for p in self.head.parameters() if p.requires_grad]
        groups.append({"params": head, "lr": lr, "name": "head"})
        return groups

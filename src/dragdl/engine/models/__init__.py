"""Pretrained backbones for transfer learning: families, weights resolution, the transfer model."""

from dragdl.engine.models.backbones import (
    TORCHVISION_BACKBONES,
    BackboneInfo,
    Family,
    TorchvisionName,
    UnknownBackbone,
    backbone_info,
    check_weights,
    create_features,
    validate_timm_name,
)
from dragdl.engine.models.head import InputAdapter, TransferModel, make_head
from dragdl.engine.models.lite0 import create_imagenet_classifier
from dragdl.engine.models.weights import WeightsError, WeightsInvalid, WeightsUnavailable

__all__ = [
    "TORCHVISION_BACKBONES",
    "BackboneInfo",
    "Family",
    "InputAdapter",
    "TorchvisionName",
    "TransferModel",
    "UnknownBackbone",
    "WeightsError",
    "WeightsInvalid",
    "WeightsUnavailable",
    "backbone_info",
    "check_weights",
    "create_features",
    "create_imagenet_classifier",
    "make_head",
    "validate_timm_name",
]

"""Pretrained backbones for transfer learning: the family registry, weights resolution, the transfer model.

Importing this package registers every backbone family (one `family_<name>.py` module each).
"""

from dragdl.engine.models import (  # noqa: F401  (imported for their registrations)
    family_lite0,
    family_timm,
    family_torchvision,
)
from dragdl.engine.models.backbones import backbone_info, check_weights, create_features
from dragdl.engine.models.families import (
    BackboneFamily,
    BackboneInfo,
    Family,
    ScriptHelper,
    UnknownBackbone,
    family_names,
    get_family,
    register_family,
)
from dragdl.engine.models.family_lite0 import create_imagenet_classifier
from dragdl.engine.models.family_timm import validate_timm_name
from dragdl.engine.models.family_torchvision import TORCHVISION_BACKBONES, TorchvisionName
from dragdl.engine.models.head import InputAdapter, TransferModel, make_head
from dragdl.engine.models.weights import WeightsError, WeightsInvalid, WeightsUnavailable

__all__ = [
    "TORCHVISION_BACKBONES",
    "BackboneFamily",
    "BackboneInfo",
    "Family",
    "InputAdapter",
    "ScriptHelper",
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
    "family_names",
    "get_family",
    "make_head",
    "register_family",
    "validate_timm_name",
]

"""The torchvision family: a fixed list of ImageNet classifiers, their weights from torchvision's URLs.

torchvision is imported inside the methods: it takes seconds to import and the node catalog must
load fast.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal, get_args

import torch
from torch import nn

from dragdl.engine.models.families import (
    BackboneFamily,
    BackboneInfo,
    ScriptHelper,
    UnknownBackbone,
    load_checked,
    register_family,
    suggest,
    triple,
)
from dragdl.engine.models.weights import WeightsSpec

TorchvisionName = Literal[
    "resnet18",
    "resnet34",
    "resnet50",
    "vgg11",
    "vgg16",
    "mobilenet_v3_small",
    "mobilenet_v3_large",
    "efficientnet_b0",
    "densenet121",
]
TORCHVISION_BACKBONES: tuple[str, ...] = get_args(TorchvisionName)

# Per backbone: the classifier module cut off and the width of what remains. VGG and MobileNetV3
# keep their pretrained hidden fully-connected layers (only the last Linear goes), as
# torchvision's fine-tuning recipes do; the others end in global pooling already.
_CUT: dict[str, tuple[str, int]] = {
    "resnet18": ("fc", 512),
    "resnet34": ("fc", 512),
    "resnet50": ("fc", 2048),
    "vgg11": ("classifier.6", 4096),
    "vgg16": ("classifier.6", 4096),
    "mobilenet_v3_small": ("classifier.3", 1024),
    "mobilenet_v3_large": ("classifier.3", 1280),
    "efficientnet_b0": ("classifier", 1280),
    "densenet121": ("classifier", 1024),
}

FEATURES_HELPER = '''
def torchvision_features(name: str, classifier: str, pretrained: bool) -> nn.Module:
    """A torchvision ImageNet model, its last classifier layer replaced by Identity."""
    weights = "DEFAULT" if pretrained else None
    model = torchvision.models.get_model(name, weights=weights)
    parent, _, leaf = classifier.rpartition(".")
    setattr(model.get_submodule(parent), leaf, nn.Identity())
    return model
'''


def torchvision_classifier(name: str) -> str:
    """The dotted path of the module a torchvision backbone loses (replaced by Identity)."""
    return _CUT[name][0]


def _published(name: str) -> Any:
    from torchvision.models import get_model_weights

    return get_model_weights(name).DEFAULT


class TorchvisionFamily(BackboneFamily):
    name: ClassVar[str] = "torchvision"
    script_helper: ClassVar[ScriptHelper] = ScriptHelper(FEATURES_HELPER, ("import torchvision",))

    def check_name(self, name: str) -> str:
        if name not in TORCHVISION_BACKBONES:
            raise UnknownBackbone(
                f"torchvision backbone {name!r} is not supported{suggest(name, TORCHVISION_BACKBONES)}"
            )
        return name

    def info(self, name: str) -> BackboneInfo:
        preset: dict[str, Any] = dict(getattr(_published(name).transforms, "keywords", {}))
        crop = int(preset.get("crop_size", 224))
        resize = int(preset.get("resize_size", 256))
        interpolation = preset.get("interpolation")
        return BackboneInfo(
            family=self.name,
            name=name,
            feature_dim=_CUT[name][1],
            input_size=(3, crop, crop),
            mean=triple(preset.get("mean", (0.485, 0.456, 0.406))),
            std=triple(preset.get("std", (0.229, 0.224, 0.225))),
            interpolation=str(getattr(interpolation, "value", "bilinear")),
            crop_pct=crop / resize,
        )

    def weights_spec(self, name: str) -> WeightsSpec:
        return WeightsSpec(backbone=f"{self.name} {name}", url=str(_published(name).url))

    def build(self, name: str, state: dict[str, torch.Tensor] | None) -> nn.Module:
        from torchvision.models import get_model

        model: nn.Module = get_model(name, weights=None)
        cut = torchvision_classifier(name)
        if state is not None:
            if name.startswith("densenet"):
                state = _fix_densenet_keys(state)
            load_checked(model, state, (cut,), f"{self.name} {name}")
        parent_path, _, leaf = cut.rpartition(".")
        parent = model.get_submodule(parent_path) if parent_path else model
        setattr(parent, leaf, nn.Identity())
        return model

    def features_code(self, name: str, pretrained: bool) -> str:
        cut = torchvision_classifier(name)
        return f"torchvision_features({name!r}, {cut!r}, pretrained={pretrained})"


def _fix_densenet_keys(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    # torchvision's DenseNet checkpoints predate a module rename ("norm.1" -> "norm1"); torchvision
    # fixes the keys the same way in densenet._load_state_dict.
    pattern = re.compile(
        r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var|num_batches_tracked))$"
    )
    fixed: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        match = pattern.match(key)
        fixed[match.group(1) + match.group(2) if match else key] = value
    return fixed


register_family(TorchvisionFamily())

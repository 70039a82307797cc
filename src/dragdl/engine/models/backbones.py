"""The backbone families: torchvision, timm, and EfficientNet-Lite0 with offline weights.

A backbone here is a pretrained network with its classifier cut off, mapping (B, 3, H, W) to
(B, feature_dim). `backbone_info` answers what a backbone expects without loading weights, so
validation stays cheap; `create_features` builds it and loads weights through `weights.py`.
torchvision and timm are imported inside functions: they take seconds to import and the node
catalog must load fast.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, cast, get_args

import torch
from torch import nn

from dragdl.engine.models import lite0
from dragdl.engine.models.weights import (
    WeightsInvalid,
    WeightsSpec,
    WeightsUnavailable,
    downloads_allowed,
    load_state_dict_file,
    locate,
    resolve,
    resolve_user_path,
    weights_cache_dir,
)
from dragdl.paths import default_data_dir

Family = Literal["torchvision", "timm", "efficientnet_lite0"]
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

# Per torchvision backbone: the classifier module cut off and the width of what remains. VGG and
# MobileNetV3 keep their pretrained hidden fully-connected layers (only the last Linear goes),
# as torchvision's fine-tuning recipes do; the others end in global pooling already.
_TORCHVISION_CUT: dict[str, tuple[str, int]] = {
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


def torchvision_classifier(name: str) -> str:
    """The dotted path of the module a torchvision backbone loses (replaced by Identity)."""
    return _TORCHVISION_CUT[name][0]


@dataclass(frozen=True)
class BackboneInfo:
    """What a backbone expects and produces, from its published weights' metadata."""

    family: Family
    name: str
    feature_dim: int
    input_size: tuple[int, int, int]
    """(C, H, W) the weights were trained at."""
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    interpolation: str
    crop_pct: float
    """Evaluation crop: resize the short side to H / crop_pct, then center-crop H x W."""


class UnknownBackbone(ValueError):
    """The family or model name is not known; the message suggests close names."""


def suggest(name: str, choices: list[str] | tuple[str, ...], limit: int = 3) -> str:
    close = difflib.get_close_matches(name, choices, n=limit, cutoff=0.6)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


@lru_cache(maxsize=1)
def _timm_names() -> frozenset[str]:
    import timm

    # Architectures and architecture.tag names (e.g. resnet50.a1_in1k) are both accepted.
    return frozenset(timm.list_models()) | frozenset(timm.list_models(pretrained=True))


def validate_timm_name(name: str) -> str:
    """Return `name` when timm knows it, else raise UnknownBackbone with close names."""
    names = _timm_names()
    if name in names:
        return name
    architectures = sorted(n for n in names if "." not in n)
    raise UnknownBackbone(f"timm has no model named {name!r}{suggest(name, architectures)}")


def _check_name(family: Family, name: str) -> None:
    if family == "torchvision" and name not in TORCHVISION_BACKBONES:
        raise UnknownBackbone(
            f"torchvision backbone {name!r} is not supported{suggest(name, TORCHVISION_BACKBONES)}"
        )
    if family == "timm":
        validate_timm_name(name)
    if family == "efficientnet_lite0" and name != lite0.LITE0_NAME:
        raise UnknownBackbone(f"family efficientnet_lite0 has one backbone, {lite0.LITE0_NAME!r}")
    if family not in get_args(Family):
        raise UnknownBackbone(f"unknown backbone family {family!r}{suggest(family, get_args(Family))}")


@lru_cache(maxsize=64)
def backbone_info(family: Family, name: str) -> BackboneInfo:
    """Input size, normalization and feature width; loads no weights."""
    _check_name(family, name)
    if family == "torchvision":
        return _torchvision_info(name)
    if family == "timm":
        return _timm_info(name)
    return BackboneInfo(
        family="efficientnet_lite0",
        name=lite0.LITE0_NAME,
        feature_dim=lite0.LITE0_FEATURE_DIM,
        input_size=lite0.LITE0_INPUT_SIZE,
        mean=lite0.LITE0_MEAN,
        std=lite0.LITE0_STD,
        interpolation=lite0.LITE0_INTERPOLATION,
        crop_pct=lite0.LITE0_CROP_PCT,
    )


def _torchvision_info(name: str) -> BackboneInfo:
    weights = _torchvision_weights(name)
    preset: dict[str, Any] = dict(getattr(weights.transforms, "keywords", {}))
    crop = int(preset.get("crop_size", 224))
    resize = int(preset.get("resize_size", 256))
    interpolation = preset.get("interpolation")
    return BackboneInfo(
        family="torchvision",
        name=name,
        feature_dim=_TORCHVISION_CUT[name][1],
        input_size=(3, crop, crop),
        mean=_triple(preset.get("mean", (0.485, 0.456, 0.406))),
        std=_triple(preset.get("std", (0.229, 0.224, 0.225))),
        interpolation=str(getattr(interpolation, "value", "bilinear")),
        crop_pct=crop / resize,
    )


def _timm_info(name: str) -> BackboneInfo:
    import timm

    cfg = _timm_pretrained_cfg(name)
    # The feature width is only known from the built model; on the meta device construction
    # allocates nothing, so this costs milliseconds even for large models.
    with torch.device("meta"):
        model = timm.create_model(name, pretrained=False, num_classes=0)
    channels, height, width = cfg.get("input_size") or (3, 224, 224)
    return BackboneInfo(
        family="timm",
        name=name,
        feature_dim=int(cast(Any, model).num_features),
        input_size=(int(channels), int(height), int(width)),
        mean=_triple(cfg.get("mean") or (0.485, 0.456, 0.406)),
        std=_triple(cfg.get("std") or (0.229, 0.224, 0.225)),
        interpolation=str(cfg.get("interpolation") or "bicubic"),
        crop_pct=float(cfg.get("crop_pct") or 0.875),
    )


def _triple(values: Any) -> tuple[float, float, float]:
    items = [float(v) for v in values]
    if len(items) == 1:
        items *= 3
    return (items[0], items[1], items[2])


def _torchvision_weights(name: str) -> Any:
    from torchvision.models import get_model_weights

    return get_model_weights(name).DEFAULT


def _timm_pretrained_cfg(name: str) -> dict[str, Any]:
    import timm

    cfg = timm.models.get_pretrained_cfg(name)
    return dataclasses.asdict(cfg) if cfg is not None else {}


def weights_spec(family: Family, name: str) -> WeightsSpec:
    """Where the published weights of a torchvision or timm backbone can be found."""
    label = f"{family} {name}"
    if family == "torchvision":
        return WeightsSpec(backbone=label, url=str(_torchvision_weights(name).url))
    cfg = _timm_pretrained_cfg(name)
    hf_id = cfg.get("hf_hub_id") or None
    revision = None
    if hf_id and "@" in hf_id:
        hf_id, revision = hf_id.split("@", 1)
    explicit = cfg.get("hf_hub_filename")
    filenames = (explicit,) if explicit else ("model.safetensors", "pytorch_model.bin")
    return WeightsSpec(
        backbone=label,
        url=cfg.get("url") or None,
        hf_repo=hf_id,
        hf_filenames=filenames,
        hf_revision=revision,
    )


def check_weights(
    family: Family,
    name: str,
    weights_path: str | None = None,
    allow_download: bool | None = None,
    data_dir: Path | None = None,
) -> None:
    """Cheap pre-flight for validation: raise WeightsUnavailable when `create_features` would."""
    _check_name(family, name)
    if weights_path is not None:
        path = resolve_user_path(weights_path, _data_dir(data_dir))
        if not path.is_file():
            raise WeightsUnavailable(f"{family} {name}", [str(path)], "the given weights_path does not exist")
        return
    if family == "efficientnet_lite0":
        lite0.package_weights_file()
        return
    allowed = downloads_allowed() if allow_download is None else allow_download
    locate(weights_spec(family, name), allowed)


def create_features(
    family: Family,
    name: str,
    pretrained: bool = True,
    weights_path: str | None = None,
    allow_download: bool | None = None,
    data_dir: Path | None = None,
) -> nn.Module:
    """The backbone without its classifier: (B, 3, H, W) -> (B, feature_dim).

    `weights_path` (safetensors or a torch state dict, with or without the original classifier)
    wins over every other source; `allow_download=None` follows `downloads_allowed()`;
    `data_dir` (a DataContext's) is where a relative `weights_path` starts and under which
    Lite0's converted weights are cached (`cache/weights`).
    """
    _check_name(family, name)
    allowed = downloads_allowed() if allow_download is None else allow_download
    root = _data_dir(data_dir)
    state: dict[str, torch.Tensor] | None = None
    if pretrained and weights_path is not None:
        state = load_state_dict_file(resolve_user_path(weights_path, root))
    if family == "efficientnet_lite0":
        if state is None:
            return lite0.create_lite0_features(pretrained=pretrained, cache_dir=weights_cache_dir(root))
        model = lite0.build_lite0(num_classes=0)
        _load_checked(model, state, ("classifier",), f"{family} {name}")
        return model
    if pretrained and state is None:
        state = load_state_dict_file(resolve(weights_spec(family, name), allowed))
    if family == "torchvision":
        return _torchvision_features(name, state)
    return _timm_features(name, state)


def _data_dir(data_dir: Path | None) -> Path:
    # Model nodes always pass their DataContext's data dir; the default is for callers without
    # one (a notebook building a backbone by hand).
    return data_dir if data_dir is not None else default_data_dir()


def _torchvision_features(name: str, state: dict[str, torch.Tensor] | None) -> nn.Module:
    from torchvision.models import get_model

    model: nn.Module = get_model(name, weights=None)
    cut, _ = _TORCHVISION_CUT[name]
    if state is not None:
        if name.startswith("densenet"):
            state = _fix_densenet_keys(state)
        _load_checked(model, state, (cut,), f"torchvision {name}")
    parent_path, _, leaf = cut.rpartition(".")
    parent = model.get_submodule(parent_path) if parent_path else model
    setattr(parent, leaf, nn.Identity())
    return model


def _timm_features(name: str, state: dict[str, torch.Tensor] | None) -> nn.Module:
    import timm

    model: nn.Module = timm.create_model(name, pretrained=False, num_classes=0)
    if state is not None:
        classifier = _timm_pretrained_cfg(name).get("classifier") or ()
        heads = (classifier,) if isinstance(classifier, str) else tuple(classifier)
        _load_checked(model, state, heads, f"timm {name}")
    return model


def _load_checked(
    model: nn.Module, state: dict[str, torch.Tensor], heads: tuple[str, ...], label: str
) -> None:
    """Load every non-classifier tensor strictly; the old classifier's tensors are dropped.

    A file with or without the original head loads, and one with a head for another number of
    classes too; a missing or unexpected backbone tensor fails loudly instead of leaving
    randomly initialized layers behind.
    """

    def is_head(key: str) -> bool:
        return any(key == head or key.startswith(head + ".") for head in heads)

    kept = {key: value for key, value in state.items() if not is_head(key)}
    try:
        result = model.load_state_dict(kept, strict=False)
    except RuntimeError as exc:
        raise WeightsInvalid(f"weights do not fit {label}: {exc}") from exc
    missing = [key for key in result.missing_keys if not is_head(key)]
    if missing or result.unexpected_keys:
        raise WeightsInvalid(
            f"weights do not fit {label}: missing {missing[:5]} ({len(missing)} in all), "
            f"unexpected {result.unexpected_keys[:5]} ({len(result.unexpected_keys)} in all)"
        )


def _fix_densenet_keys(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    # torchvision's DenseNet checkpoints predate a module rename ("norm.1" -> "norm1"); torchvision
    # fixes the keys the same way in densenet._load_state_dict.
    import re

    pattern = re.compile(
        r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var|num_batches_tracked))$"
    )
    fixed: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        match = pattern.match(key)
        fixed[match.group(1) + match.group(2) if match else key] = value
    return fixed

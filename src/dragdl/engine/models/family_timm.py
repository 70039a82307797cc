"""The timm family: any timm model by name, its weights from the Hugging Face hub or a URL.

timm is imported inside the methods: it takes seconds to import and the node catalog must load
fast.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any, ClassVar, cast

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


def _pretrained_cfg(name: str) -> dict[str, Any]:
    import timm

    cfg = timm.models.get_pretrained_cfg(name)
    return dataclasses.asdict(cfg) if cfg is not None else {}


class TimmFamily(BackboneFamily):
    name: ClassVar[str] = "timm"
    # timm's own constructor builds the extractor (num_classes=0): no definition to add.
    script_helper: ClassVar[ScriptHelper] = ScriptHelper("", ("import timm",))

    def check_name(self, name: str) -> str:
        return validate_timm_name(name)

    def info(self, name: str) -> BackboneInfo:
        import timm

        cfg = _pretrained_cfg(name)
        # The feature width is only known from the built model; on the meta device construction
        # allocates nothing, so this costs milliseconds even for large models.
        with torch.device("meta"):
            model = timm.create_model(name, pretrained=False, num_classes=0)
        channels, height, width = cfg.get("input_size") or (3, 224, 224)
        return BackboneInfo(
            family=self.name,
            name=name,
            feature_dim=int(cast(Any, model).num_features),
            input_size=(int(channels), int(height), int(width)),
            mean=triple(cfg.get("mean") or (0.485, 0.456, 0.406)),
            std=triple(cfg.get("std") or (0.229, 0.224, 0.225)),
            interpolation=str(cfg.get("interpolation") or "bicubic"),
            crop_pct=float(cfg.get("crop_pct") or 0.875),
        )

    def weights_spec(self, name: str) -> WeightsSpec:
        cfg = _pretrained_cfg(name)
        hf_id = cfg.get("hf_hub_id") or None
        revision = None
        if hf_id and "@" in hf_id:
            hf_id, revision = hf_id.split("@", 1)
        explicit = cfg.get("hf_hub_filename")
        filenames = (explicit,) if explicit else ("model.safetensors", "pytorch_model.bin")
        return WeightsSpec(
            backbone=f"{self.name} {name}",
            url=cfg.get("url") or None,
            hf_repo=hf_id,
            hf_filenames=filenames,
            hf_revision=revision,
        )

    def build(self, name: str, state: dict[str, torch.Tensor] | None) -> nn.Module:
        import timm

        model: nn.Module = timm.create_model(name, pretrained=False, num_classes=0)
        if state is not None:
            classifier = _pretrained_cfg(name).get("classifier") or ()
            heads = (classifier,) if isinstance(classifier, str) else tuple(classifier)
            load_checked(model, state, heads, f"{self.name} {name}")
        return model

    def features_code(self, name: str, pretrained: bool) -> str:
        return f"timm.create_model({name!r}, pretrained={pretrained}, num_classes=0)"


register_family(TimmFamily())

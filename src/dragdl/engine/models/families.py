"""The backbone family registry: what a family of pretrained networks must say about itself.

A family (torchvision, timm, EfficientNet-Lite0) is one module, `family_<name>.py`, holding a
`BackboneFamily` and one `register_family` line: the names it knows, each backbone's input size and
normalization, where its weights come from, how its feature extractor is built with the classifier
cut off, and the helper code the exported training script needs to build the same extractor. The
model nodes, the feature cache and the code generator ask `get_family(name)` and never test for a
particular family, so a new family is one new module (imported by `models/__init__.py`).
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import nn

from dragdl.engine.models.weights import WeightsInvalid, WeightsSpec, load_state_dict_file, locate, resolve

Family = str
"""The name of a registered backbone family (`BackboneFamily.name`)."""


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


@dataclass(frozen=True)
class ScriptHelper:
    """What the exported script needs to build a family's feature extractor."""

    code: str
    """Definitions to add to the script (may be empty when a library call is enough)."""
    imports: tuple[str, ...]


class UnknownBackbone(ValueError):
    """The family or model name is not known; the message suggests close names."""


class BackboneFamily(ABC):
    """One family of pretrained backbones. Every method takes a backbone name `check_name` accepted."""

    name: ClassVar[str]
    script_helper: ClassVar[ScriptHelper]
    """The script's definitions and imports that `features_code` calls."""

    @abstractmethod
    def check_name(self, name: str) -> str:
        """`name` when the family knows it, else raise UnknownBackbone with close names."""

    @abstractmethod
    def info(self, name: str) -> BackboneInfo:
        """Input size, normalization and feature width; loads no weights."""

    @abstractmethod
    def weights_spec(self, name: str) -> WeightsSpec:
        """Where the published weights can be found (caches, then a download)."""

    def check_weights(self, name: str, allow_download: bool) -> None:
        """Raise WeightsUnavailable when `published_weights` would; cheap (validation calls it)."""
        locate(self.weights_spec(name), allow_download)

    def published_weights(self, name: str, allow_download: bool, cache_dir: Path) -> dict[str, torch.Tensor]:
        """The published weights' state dict (`cache_dir`: where converted weights are cached)."""
        return load_state_dict_file(resolve(self.weights_spec(name), allow_download))

    @abstractmethod
    def build(self, name: str, state: dict[str, torch.Tensor] | None) -> nn.Module:
        """The backbone without its classifier, (B, 3, H, W) -> (B, feature_dim), with `state`
        loaded (checked with `load_checked`; its classifier tensors dropped) or random weights."""

    @abstractmethod
    def features_code(self, name: str, pretrained: bool) -> str:
        """An expression building the same extractor in the exported script."""


_FAMILIES: dict[str, BackboneFamily] = {}


def register_family(family: BackboneFamily) -> BackboneFamily:
    """Add a family to the registry (exactly once)."""
    if family.name in _FAMILIES:
        raise ValueError(f"backbone family {family.name!r} is registered twice")
    _FAMILIES[family.name] = family
    return family


def get_family(name: str) -> BackboneFamily:
    """The registered family `name`; UnknownBackbone (suggesting close names) otherwise."""
    family = _FAMILIES.get(name)
    if family is None:
        raise UnknownBackbone(f"unknown backbone family {name!r}{suggest(name, family_names())}")
    return family


def family_names() -> list[str]:
    return list(_FAMILIES)


def suggest(name: str, choices: Iterable[str], limit: int = 3) -> str:
    close = difflib.get_close_matches(name, list(choices), n=limit, cutoff=0.6)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def triple(values: Any) -> tuple[float, float, float]:
    """Three channel values from published metadata (a single value is repeated)."""
    items = [float(v) for v in values]
    if len(items) == 1:
        items *= 3
    return (items[0], items[1], items[2])


def load_checked(
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

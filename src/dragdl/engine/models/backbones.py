"""A backbone by (family, name): what it expects, whether its weights can be had, the extractor.

A backbone here is a pretrained network with its classifier cut off, mapping (B, 3, H, W) to
(B, feature_dim). `backbone_info` answers what a backbone expects without loading weights, so
validation stays cheap; `create_features` builds it and loads weights (a user's file first, else
the family's published ones through `weights.py`). Everything particular to a family is in its
module (`family_*.py`), found through `families.get_family`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch
from torch import nn

from dragdl.engine.models.families import BackboneInfo, Family, get_family
from dragdl.engine.models.weights import (
    WeightsUnavailable,
    downloads_allowed,
    load_state_dict_file,
    resolve_user_path,
    weights_cache_dir,
)
from dragdl.paths import default_data_dir


@lru_cache(maxsize=64)
def backbone_info(family: Family, name: str) -> BackboneInfo:
    """Input size, normalization and feature width; loads no weights."""
    kind = get_family(family)
    return kind.info(kind.check_name(name))


def check_weights(
    family: Family,
    name: str,
    weights_path: str | None = None,
    allow_download: bool | None = None,
    data_dir: Path | None = None,
) -> None:
    """Cheap pre-flight for validation: raise WeightsUnavailable when `create_features` would."""
    kind = get_family(family)
    kind.check_name(name)
    if weights_path is not None:
        path = resolve_user_path(weights_path, _data_dir(data_dir))
        if not path.is_file():
            raise WeightsUnavailable(f"{family} {name}", [str(path)], "the given weights_path does not exist")
        return
    kind.check_weights(name, downloads_allowed() if allow_download is None else allow_download)


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
    converted weights (Lite0's) are cached (`cache/weights`).
    """
    kind = get_family(family)
    kind.check_name(name)
    allowed = downloads_allowed() if allow_download is None else allow_download
    root = _data_dir(data_dir)
    state: dict[str, torch.Tensor] | None = None
    if pretrained:
        if weights_path is not None:
            state = load_state_dict_file(resolve_user_path(weights_path, root))
        else:
            state = kind.published_weights(name, allowed, weights_cache_dir(root))
    return kind.build(name, state)


def _data_dir(data_dir: Path | None) -> Path:
    # Model nodes always pass their DataContext's data dir; the default is for callers without
    # one (a notebook building a backbone by hand).
    return data_dir if data_dir is not None else default_data_dir()

"""The backbone family registry: a family is one module, and nothing outside it names it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
import torch
from torch import nn

import dragdl.engine
from dragdl.engine.models import (
    UnknownBackbone,
    backbone_info,
    check_weights,
    create_features,
    family_names,
    get_family,
    register_family,
)
from dragdl.engine.models import families as registry
from dragdl.engine.models.families import BackboneFamily, BackboneInfo, ScriptHelper, load_checked
from dragdl.engine.models.weights import WeightsSpec, WeightsUnavailable

ENGINE = Path(dragdl.engine.__file__).parent


class TinyFamily(BackboneFamily):
    """A family of one small network whose published weights are a file in a folder."""

    name: ClassVar[str] = "tiny"
    script_helper: ClassVar[ScriptHelper] = ScriptHelper("def tiny_features(): ...\n", ("import tiny",))

    def __init__(self, published: Path) -> None:
        self.published = published

    def check_name(self, name: str) -> str:
        if name != "tiny4":
            raise UnknownBackbone(f"family tiny has no backbone {name!r}")
        return name

    def info(self, name: str) -> BackboneInfo:
        return BackboneInfo("tiny", name, 4, (3, 8, 8), (0.5,) * 3, (0.5,) * 3, "bilinear", 1.0)

    def weights_spec(self, name: str) -> WeightsSpec:
        return WeightsSpec(backbone=f"tiny {name}")

    def check_weights(self, name: str, allow_download: bool) -> None:
        if not self.published.is_file():
            raise WeightsUnavailable(f"tiny {name}", [str(self.published)], "not there")

    def published_weights(self, name: str, allow_download: bool, cache_dir: Path) -> dict[str, torch.Tensor]:
        return dict(torch.load(self.published, weights_only=True))

    def build(self, name: str, state: dict[str, torch.Tensor] | None) -> nn.Module:
        model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 10))
        if state is not None:
            load_checked(model, state, ("3",), f"tiny {name}")
        model[3] = nn.Identity()
        return model

    def features_code(self, name: str, pretrained: bool) -> str:
        return f"tiny_features({name!r}, pretrained={pretrained})"


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TinyFamily]:
    monkeypatch.setattr(registry, "_FAMILIES", dict(registry._FAMILIES))
    backbone_info.cache_clear()
    family = TinyFamily(tmp_path / "tiny4.pt")
    register_family(family)
    yield family
    backbone_info.cache_clear()


def test_the_three_families_are_registered() -> None:
    assert {"torchvision", "timm", "efficientnet_lite0"} <= set(family_names())
    assert get_family("timm").script_helper.imports == ("import timm",)


def test_an_unknown_family_is_refused_with_close_names() -> None:
    with pytest.raises(UnknownBackbone, match=re.escape("did you mean 'torchvision'")):
        get_family("torchvison")


def test_a_family_registered_twice_is_refused(tiny: TinyFamily) -> None:
    with pytest.raises(ValueError, match="'tiny' is registered twice"):
        register_family(TinyFamily(tiny.published))


def test_a_new_family_is_served_through_the_registry_alone(tiny: TinyFamily) -> None:
    assert backbone_info("tiny", "tiny4").feature_dim == 4
    with pytest.raises(UnknownBackbone, match="no backbone 'tiny5'"):
        backbone_info("tiny", "tiny5")
    with pytest.raises(WeightsUnavailable, match="tiny tiny4"):
        check_weights("tiny", "tiny4")
    torch.manual_seed(0)
    published = tiny.build("tiny4", None)
    published_state = {**published.state_dict(), "3.weight": torch.zeros(10, 4), "3.bias": torch.zeros(10)}
    torch.save(published_state, tiny.published)
    check_weights("tiny", "tiny4")
    features = create_features("tiny", "tiny4", pretrained=True)
    assert torch.equal(features.state_dict()["0.weight"], published_state["0.weight"])
    assert features(torch.rand(2, 3, 8, 8)).shape == (2, 4)


def test_no_code_outside_a_family_module_tests_for_a_family() -> None:
    # A family is one module: a comparison with a family name anywhere else would need an edit
    # there for every new family.
    compared = re.compile(r"\bfamily\s*(==|!=|\bin\b)|==\s*['\"](torchvision|timm|efficientnet_lite0)['\"]")
    offenders = [
        f"{path.relative_to(ENGINE)}:{number}"
        for path in ENGINE.rglob("*.py")
        if not path.name.startswith("family_")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if compared.search(line)
    ]
    assert offenders == []

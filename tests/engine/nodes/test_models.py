"""Model nodes: params, shape inference, weight errors, and the built transfer model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

import dragdl.engine.nodes.models  # noqa: F401  (registers the model node types)
from dragdl.engine.graph.errors import NodeError
from dragdl.engine.models import TransferModel, create_features, weights
from dragdl.engine.nodes.base import ModelNode, ShapeContext
from dragdl.engine.nodes.registry import get_node_type

MODEL_TYPES = ("model.torchvision", "model.timm", "model.efficientnet_lite0")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One data dir for the module, so Lite0's weights are converted once.
    return tmp_path_factory.mktemp("dragdl-data")


@pytest.fixture
def ctx(data_dir: Path) -> ShapeContext:
    return ShapeContext(num_outputs=10, data_dir=data_dir, node_id="m1")


@pytest.fixture
def env_data_dir(tmp_path: Path) -> Path:
    """What $DRAGDL_DATA_DIR names: model nodes must use their context's data dir instead."""
    return tmp_path / "env-data"


@pytest.fixture(autouse=True)
def offline(tmp_path: Path, env_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DRAGDL_DATA_DIR", str(env_data_dir))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("DRAGDL_OFFLINE", "1")
    weights._probe_results.clear()
    yield


def _node(type_name: str) -> ModelNode[Any]:
    node = get_node_type(type_name)
    assert isinstance(node, ModelNode)
    return node


def _params(node: ModelNode[Any], raw: dict[str, Any]) -> Any:
    params, errors = node.parse_params(raw, node_id="m1")
    assert not errors, errors
    return params


@pytest.mark.parametrize("type_name", MODEL_TYPES)
def test_catalog_entry_documents_every_param(type_name: str) -> None:
    entry = _node(type_name).catalog_entry()
    assert entry["category"] == "model"
    assert [port["types"] for port in entry["outputs"]] == [["logits"]]
    schema = entry["params_schema"]
    assert schema["additionalProperties"] is False
    for name, field in schema["properties"].items():
        assert field.get("description"), name
    assert "[0, 1]" in entry["description"]


def test_params_are_validated() -> None:
    node = _node("model.timm")
    _, errors = node.parse_params({"model_name": "resnt50"}, node_id="m1")
    assert [e.field for e in errors] == ["model_name"]
    assert "did you mean 'resnet50'" in errors[0].message
    _, errors = node.parse_params({"backbone_lr_scale": 1.5, "dropout": 0.95}, node_id="m1")
    assert sorted(e.field for e in errors if e.field) == ["backbone_lr_scale", "dropout"]
    _, errors = node.parse_params({"pretrained": False, "weights_path": "w.safetensors"}, node_id="m1")
    assert errors and "weights_path" in errors[0].message
    _, errors = _node("model.torchvision").parse_params({"backbone": "resnet101"}, node_id="m1")
    assert [e.field for e in errors] == ["backbone"]
    _, errors = _node("model.efficientnet_lite0").parse_params({"bogus": 1}, node_id="m1")
    assert [e.field for e in errors] == ["bogus"]


def test_infer_returns_the_class_count(ctx: ShapeContext) -> None:
    node = _node("model.efficientnet_lite0")
    assert node.infer(_params(node, {}), (3, 32, 32), ctx) == (10,)
    assert node.infer(_params(node, {}), (1, None, None), ctx) == (10,)


def test_infer_rejects_other_channel_counts(ctx: ShapeContext) -> None:
    node = _node("model.efficientnet_lite0")
    with pytest.raises(NodeError) as info:
        node.infer(_params(node, {}), (4, 32, 32), ctx)
    assert info.value.code == "input_channels"
    assert "got 4" in info.value.message


def test_missing_pretrained_weights_are_a_node_error(ctx: ShapeContext) -> None:
    node = _node("model.torchvision")
    with pytest.raises(NodeError) as info:
        node.infer(_params(node, {"backbone": "resnet18"}), (3, 32, 32), ctx)
    assert (info.value.code, info.value.field) == ("weights_unavailable", "pretrained")
    assert "pretrained: false" in info.value.message
    assert node.infer(_params(node, {"backbone": "resnet18", "pretrained": False}), (3, 32, 32), ctx) == (10,)
    with pytest.raises(NodeError) as info:
        node.build(_params(node, {"backbone": "resnet18"}), (3, 32, 32), ctx)
    assert info.value.code == "weights_unavailable"


def test_missing_weights_path_points_at_that_field(ctx: ShapeContext) -> None:
    node = _node("model.timm")
    params = _params(node, {"model_name": "resnet18", "weights_path": "nowhere.safetensors"})
    with pytest.raises(NodeError) as info:
        node.infer(params, (3, 32, 32), ctx)
    assert (info.value.code, info.value.field) == ("weights_unavailable", "weights_path")


def test_lite0_node_builds_a_frozen_transfer_model_for_grayscale_input(ctx: ShapeContext) -> None:
    node = _node("model.efficientnet_lite0")
    params = _params(node, {"hidden_units": 64})
    model = node.build(params, (1, 28, 28), ctx)
    assert isinstance(model, TransferModel) and model.features_frozen
    assert model.adapter.resize_to == (224, 224)
    model.eval()
    with torch.no_grad():
        assert model(torch.rand(2, 1, 28, 28)).shape == (2, 10)
    assert [group["name"] for group in model.param_groups(1e-3)] == ["head"]


def test_lite0_weights_are_cached_under_the_context_data_dir(ctx: ShapeContext, env_data_dir: Path) -> None:
    node = _node("model.efficientnet_lite0")
    node.build(_params(node, {}), (3, 32, 32), ctx)
    assert [p.name for p in (ctx.data_dir / "cache" / "weights").glob("efficientnet_lite0-*.safetensors")]
    assert not env_data_dir.exists()


def test_a_relative_weights_path_starts_at_the_context_data_dir(tmp_path: Path, env_data_dir: Path) -> None:
    source = create_features("torchvision", "mobilenet_v3_small", pretrained=False)
    data_dir = tmp_path / "data"
    (data_dir / "weights").mkdir(parents=True)
    torch.save(source.state_dict(), data_dir / "weights" / "mine.pt")
    ctx = ShapeContext(num_outputs=10, data_dir=data_dir, node_id="m1")
    node = _node("model.torchvision")
    params = _params(node, {"backbone": "mobilenet_v3_small", "weights_path": "weights/mine.pt"})
    assert node.infer(params, (3, 32, 32), ctx) == (10,)
    model = node.build(params, (3, 32, 32), ctx)
    assert isinstance(model, TransferModel)
    for key, value in source.state_dict().items():
        assert torch.equal(model.features.state_dict()[key], value), key
    # Another data dir, another file: the path follows the context, whatever $DRAGDL_DATA_DIR says.
    elsewhere = ShapeContext(num_outputs=10, data_dir=tmp_path / "other", node_id="m1")
    with pytest.raises(NodeError) as info:
        node.infer(params, (3, 32, 32), elsewhere)
    assert str(tmp_path / "other" / "weights" / "mine.pt") in info.value.message
    assert not env_data_dir.exists()


def test_torchvision_node_builds_from_scratch(ctx: ShapeContext) -> None:
    node = _node("model.torchvision")
    params = _params(node, {"backbone": "mobilenet_v3_small", "pretrained": False, "freeze_features": False})
    model = node.build(params, (3, 224, 224), ctx)
    assert isinstance(model, TransferModel) and not model.features_frozen
    assert model.adapter.resize_to is None
    model.eval()
    with torch.no_grad():
        assert model(torch.rand(2, 3, 224, 224)).shape == (2, 10)


def test_describe_input() -> None:
    node = _node("model.efficientnet_lite0")
    assert node.describe_input(_params(node, {})) == {
        "input_size": [224, 224],
        "channels": 3,
        "mean": [0.5, 0.5, 0.5],
        "std": [0.5, 0.5, 0.5],
        "feature_dim": 1280,
    }
    timm_node = _node("model.timm")
    described = timm_node.describe_input(_params(timm_node, {"model_name": "convnext_tiny"}))
    assert described["feature_dim"] == 768


def test_resize_input_off_keeps_the_incoming_size(ctx: ShapeContext) -> None:
    node = _node("model.timm")
    params = _params(node, {"model_name": "resnet18", "pretrained": False, "resize_input": False})
    model = node.build(params, (1, 64, 64), ctx)
    assert isinstance(model, TransferModel) and model.adapter.resize_to is None
    model.eval()
    with torch.no_grad():
        assert model(torch.rand(2, 1, 64, 64)).shape == (2, 10)
    with pytest.raises(NodeError) as info:
        node.infer(params, (3, None, None), ctx)
    assert (info.value.code, info.value.field) == ("input_size_unknown", "resize_input")
    assert "add a Resize" in info.value.message

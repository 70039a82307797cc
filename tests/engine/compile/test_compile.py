"""The compiler: graph -> Plan, with a network that is deterministic in the seed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from dragdl.engine.compile.plan import compile_graph, compile_network
from dragdl.engine.data.base import DataContext
from dragdl.engine.graph.errors import GraphInvalid
from dragdl.engine.models import create_features
from dragdl.engine.network.module import GraphModule, LayerRuntimeError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / f"{name}.json").read_text())
    return data


@pytest.fixture
def ctx(tmp_path: Path) -> DataContext:
    return DataContext(data_dir=tmp_path, allow_download=False)


def test_sketcher_compiles_to_the_expected_network(ctx: DataContext) -> None:
    plan = compile_graph(example("sketcher_cnn"), ctx)
    assert plan.input_shape == (1, 28, 28)
    assert plan.classes == [str(i) for i in range(10)]
    assert sum(p.numel() for p in plan.model.parameters()) == 98_442
    assert [s.node_id for s in plan.stages] == ["norm"]
    assert "layers.conv1.weight" in plan.model.state_dict()
    logits = plan.model(torch.rand(4, 1, 28, 28))
    assert logits.shape == (4, 10)


def test_same_seed_same_weights_other_seed_other_weights(ctx: DataContext) -> None:
    first = compile_graph(example("sketcher_cnn"), ctx).model.state_dict()
    again = compile_graph(example("sketcher_cnn"), ctx).model.state_dict()
    other = compile_graph(example("sketcher_cnn"), ctx, overrides={"seed": 7}).model.state_dict()
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not torch.equal(first["layers.conv1.weight"], other["layers.conv1.weight"])


def test_residual_network_adds_skip_connections(ctx: DataContext) -> None:
    plan = compile_graph(example("residual_cnn"), ctx)
    model = plan.model
    assert isinstance(model, GraphModule)
    add_step = next(step for step in model.steps if step.node_id == "b1_add")
    assert add_step.inputs == ("b1_bn2", "stem_relu")
    model.eval()
    assert model(torch.rand(2, 1, 28, 28)).shape == (2, 10)


def test_random_ops_are_marked_for_training_only(ctx: DataContext) -> None:
    plan = compile_graph(example("augmented_cnn"), ctx)
    assert [(s.node_id, s.random) for s in plan.stages] == [
        ("affine", True),
        ("erase", True),
        ("norm", False),
    ]


def test_overrides_are_validated(ctx: DataContext) -> None:
    with pytest.raises(GraphInvalid) as info:
        compile_graph(example("sketcher_cnn"), ctx, overrides={"epochs": 0})
    assert info.value.errors[0].node_id == "train" and info.value.errors[0].field == "epochs"


def test_invalid_graph_raises_with_every_error(ctx: DataContext) -> None:
    graph = example("sketcher_cnn")
    graph["nodes"][2]["params"]["kernel_size"] = 0
    graph["nodes"][-1]["params"]["lr"] = -1
    with pytest.raises(GraphInvalid) as info:
        compile_graph(graph, ctx)
    assert {(e.node_id, e.field) for e in info.value.errors} == {("conv1", "kernel_size"), ("train", "lr")}


def test_runtime_failure_names_the_node(ctx: DataContext) -> None:
    model = compile_graph(example("sketcher_cnn"), ctx).model
    with pytest.raises(LayerRuntimeError) as info:
        model(torch.rand(2, 3, 28, 28))  # three channels where the graph expects one
    assert info.value.node_id == "conv1"


def test_network_rebuilds_from_a_stored_dataset_description(ctx: DataContext) -> None:
    plan = compile_graph(example("sketcher_cnn"), ctx)
    assert plan.analysis.dataset_info is not None
    graph = example("sketcher_cnn")
    graph["nodes"][0] = {"id": "data", "type": "dataset.folder", "params": {"path": "/nowhere/at/all"}}
    model, _ = compile_network(graph, plan.analysis.dataset_info)
    assert model.state_dict().keys() == plan.model.state_dict().keys()


# --- the data dir reaches the model nodes ------------------------------------------------------


@pytest.fixture
def env_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$DRAGDL_DATA_DIR points elsewhere: only the DataContext's data dir may be used."""
    elsewhere = tmp_path / "env-data"
    monkeypatch.setenv("DRAGDL_DATA_DIR", str(elsewhere))
    monkeypatch.setenv("DRAGDL_OFFLINE", "1")
    return elsewhere


def test_lite0_weights_are_converted_into_the_data_dir_cache(ctx: DataContext, env_data_dir: Path) -> None:
    plan = compile_graph(example("transfer_efficientnet_lite0_digits"), ctx)
    assert plan.model(torch.rand(2, 1, 64, 64)).shape == (2, 10)
    cached = list((ctx.data_dir / "cache" / "weights").glob("efficientnet_lite0-*.safetensors"))
    assert len(cached) == 1, cached
    assert not env_data_dir.exists()


def test_a_relative_weights_path_starts_at_the_data_dir(ctx: DataContext, env_data_dir: Path) -> None:
    source = create_features("torchvision", "mobilenet_v3_small", pretrained=False)
    (ctx.data_dir / "weights").mkdir()
    torch.save(source.state_dict(), ctx.data_dir / "weights" / "mine.pt")
    graph = {
        "version": 1,
        "nodes": [
            {"id": "data", "type": "dataset.builtin", "params": {"name": "digits"}},
            {
                "id": "backbone",
                "type": "model.torchvision",
                "params": {"backbone": "mobilenet_v3_small", "weights_path": "weights/mine.pt"},
            },
            {"id": "train", "type": "train.Classifier", "params": {"epochs": 1}},
        ],
        "edges": [{"source": "data", "target": "backbone"}, {"source": "backbone", "target": "train"}],
    }
    plan = compile_graph(graph, ctx)
    built = plan.model.state_dict()
    for key, value in source.state_dict().items():
        assert torch.equal(built[f"layers.backbone.features.{key}"], value), key
    assert not env_data_dir.exists()

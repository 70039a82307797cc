"""Validation: every stage reports typed errors that name the node, all collected at once."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dragdl.engine.analysis.validate import validate_graph
from dragdl.engine.data.base import DataContext

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture
def ctx(tmp_path: Path) -> DataContext:
    return DataContext(data_dir=tmp_path, allow_download=False)


def sketcher() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / "sketcher_cnn.json").read_text())
    return data


def codes(result: Any) -> list[str]:
    return [error.code for error in result.errors]


def node(graph: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(n for n in graph["nodes"] if n["id"] == node_id)


@pytest.mark.parametrize(
    "name",
    [
        "sketcher_cnn",
        "augmented_cnn",
        "residual_cnn",
        "transfer_efficientnet_lite0_digits",
        "transfer_efficientnet_lite0_digits_finetune",
    ],
)
def test_shipped_examples_are_valid(name: str, ctx: DataContext) -> None:
    graph = json.loads((EXAMPLES / f"{name}.json").read_text())
    result = validate_graph(graph, ctx)
    assert result.ok, [e.describe() for e in result.errors]


def test_shapes_are_inferred_for_every_node(ctx: DataContext) -> None:
    result = validate_graph(sketcher(), ctx)
    assert result.shapes["data"] == "1x28x28"
    assert result.shapes["conv1"] == "16x28x28"
    assert result.shapes["pool1"] == "16x14x14"
    assert result.shapes["pool3"] == "64x3x3"
    assert result.shapes["flatten"] == "576"
    assert result.shapes["dense2"] == "10"
    assert result.dataset is not None and result.dataset.classes == [str(i) for i in range(10)]


def test_schema_errors_name_the_field(ctx: DataContext) -> None:
    result = validate_graph({"version": 1, "nodes": [{"id": "a b", "type": "layer.ReLU"}], "edges": "x"}, ctx)
    assert not result.ok
    fields = {e.field for e in result.errors}
    assert "nodes.0.id" in fields and "edges" in fields
    assert set(codes(result)) == {"schema_invalid"}


def test_unknown_node_type_suggests_a_close_name(ctx: DataContext) -> None:
    graph = sketcher()
    node(graph, "conv1")["type"] = "layer.Conv2D"
    result = validate_graph(graph, ctx)
    error = next(e for e in result.errors if e.code == "unknown_node_type")
    assert error.node_id == "conv1" and "layer.Conv2d" in error.message


def test_bad_params_name_node_field_and_value(ctx: DataContext) -> None:
    graph = sketcher()
    node(graph, "conv1")["params"]["out_channels"] = -3
    node(graph, "train")["params"]["optimizer"] = "adamax"
    node(graph, "relu1")["params"]["surprise"] = 1
    result = validate_graph(graph, ctx)
    by_node = {(e.node_id, e.field): e for e in result.errors}
    assert by_node[("conv1", "out_channels")].code == "param_invalid"
    assert "-3" in by_node[("conv1", "out_channels")].message
    assert ("train", "optimizer") in by_node
    assert ("relu1", "surprise") in by_node
    assert len(result.errors) == 3


def test_cycle_is_reported_with_its_nodes(ctx: DataContext) -> None:
    graph = sketcher()
    graph["edges"].append({"source": "relu2", "target": "conv2"})
    node(graph, "conv2")["type"] = "layer.Add"
    node(graph, "conv2")["params"] = {}
    result = validate_graph(graph, ctx)
    cycle = [e for e in result.errors if e.code == "cycle"]
    assert {e.node_id for e in cycle} == {"conv2", "relu2"}
    assert "conv2 -> relu2" in cycle[0].message


def test_missing_dataset_and_train_nodes(ctx: DataContext) -> None:
    graph = sketcher()
    graph["nodes"] = [n for n in graph["nodes"] if n["id"] not in ("data", "train")]
    graph["edges"] = [e for e in graph["edges"] if e["source"] != "data" and e["target"] != "train"]
    result = validate_graph(graph, ctx)
    assert "missing_dataset" in codes(result) and "missing_train" in codes(result)
    assert any(e.code == "missing_input" and e.node_id == "norm" for e in result.errors)


def test_dangling_and_unconnected_nodes(ctx: DataContext) -> None:
    graph = sketcher()
    graph["nodes"].append({"id": "lonely", "type": "layer.ReLU", "params": {}})
    graph["nodes"].append({"id": "dead_end", "type": "layer.Dropout", "params": {}})
    graph["edges"].append({"source": "pool1", "target": "dead_end"})
    result = validate_graph(graph, ctx)
    errors = {(e.code, e.node_id) for e in result.errors}
    assert ("missing_input", "lonely") in errors
    assert ("dangling_node", "dead_end") in errors
    assert result.shapes["dead_end"] == "16x14x14"  # shapes still inferred for the canvas


def test_wrong_port_types_are_refused(ctx: DataContext) -> None:
    graph = sketcher()
    # A data operator after a layer: layers output tensors, operators take images.
    graph["nodes"].append({"id": "late_resize", "type": "op.Resize", "params": {"height": 8}})
    graph["edges"].append({"source": "conv1", "target": "late_resize"})
    # The dataset straight into the train node.
    graph["edges"].append({"source": "data", "target": "train"})
    result = validate_graph(graph, ctx)
    mismatches = [e for e in result.errors if e.code == "port_type_mismatch"]
    assert {e.node_id for e in mismatches} == {"late_resize", "train"}
    assert "outputs tensor" in mismatches[0].message and "accepts images" in mismatches[0].message


def test_second_input_on_single_input_node(ctx: DataContext) -> None:
    graph = sketcher()
    graph["edges"].append({"source": "relu1", "target": "conv3"})
    result = validate_graph(graph, ctx)
    assert any(e.code == "too_many_inputs" and e.node_id == "conv3" for e in result.errors)


def test_shape_mismatch_names_node_and_both_shapes(ctx: DataContext) -> None:
    graph = sketcher()
    # Remove the Flatten: Linear then receives a 64x3x3 feature map.
    graph["nodes"] = [n for n in graph["nodes"] if n["id"] != "flatten"]
    graph["edges"] = [e for e in graph["edges"] if "flatten" not in (e["source"], e["target"])]
    graph["edges"].append({"source": "pool3", "target": "dense1"})
    result = validate_graph(graph, ctx)
    error = next(e for e in result.errors if e.code == "shape_mismatch")
    assert error.node_id == "dense1"
    assert "64x3x3" in error.message and "pool3" in error.message and "Flatten" in error.message


def test_too_much_pooling_is_a_shape_error(ctx: DataContext) -> None:
    graph = sketcher()
    node(graph, "pool3")["params"]["kernel_size"] = 8
    result = validate_graph(graph, ctx)
    error = next(e for e in result.errors if e.node_id == "pool3")
    assert error.code == "shape_mismatch" and "64x7x7" in error.message


def test_add_with_unequal_shapes(ctx: DataContext) -> None:
    graph = json.loads((EXAMPLES / "residual_cnn.json").read_text())
    node(graph, "b1_conv2")["params"]["out_channels"] = 16
    result = validate_graph(graph, ctx)
    error = next(e for e in result.errors if e.node_id == "b1_add")
    assert error.code == "shape_mismatch"
    assert "16x28x28 (from b1_bn2)" in error.message and "32x28x28 (from stem_relu)" in error.message


def test_output_must_match_class_count(ctx: DataContext) -> None:
    graph = sketcher()
    node(graph, "dense2")["params"]["out_features"] = 7
    result = validate_graph(graph, ctx)
    error = next(e for e in result.errors if e.code == "output_mismatch")
    assert error.node_id == "dense2" and error.field == "out_features" and "10 classes" in error.message


def test_branching_pipeline_is_refused(ctx: DataContext) -> None:
    graph = sketcher()
    graph["nodes"].append({"id": "flip", "type": "op.RandomHorizontalFlip", "params": {}})
    graph["edges"].append({"source": "data", "target": "flip"})
    result = validate_graph(graph, ctx)
    assert any(e.code == "pipeline_branch" and e.node_id == "data" for e in result.errors)


def test_all_errors_are_collected_not_only_the_first(ctx: DataContext) -> None:
    graph = sketcher()
    node(graph, "conv1")["params"]["kernel_size"] = 99
    node(graph, "train")["params"]["epochs"] = 0
    graph["nodes"].append({"id": "x", "type": "layer.Nope", "params": {}})
    result = validate_graph(graph, ctx)
    assert {e.node_id for e in result.errors} >= {"conv1", "train", "x"}


def test_unknown_edge_endpoint(ctx: DataContext) -> None:
    graph = sketcher()
    graph["edges"].append({"source": "ghost", "target": "conv1"})
    result = validate_graph(graph, ctx)
    assert any(e.code == "edge_unknown_node" and "ghost" in e.message for e in result.errors)


def test_validation_does_not_mutate_the_input(ctx: DataContext) -> None:
    graph = sketcher()
    before = copy.deepcopy(graph)
    validate_graph(graph, ctx)
    assert graph == before

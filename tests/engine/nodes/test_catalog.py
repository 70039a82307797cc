"""The node catalog: every node type is complete, and its generated code builds the same object."""

from __future__ import annotations

import json
import re
import types
import typing
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torchvision.transforms import v2

from dragdl.engine.data import point_ops, sequence_ops
from dragdl.engine.data.stages import FittedTransform
from dragdl.engine.network import point_layers, sequence_layers
from dragdl.engine.nodes.base import LayerNode, OpNode, ShapeContext
from dragdl.engine.nodes.merge import AddModule, ConcatModule
from dragdl.engine.nodes.registry import CATEGORIES, all_node_types, catalog, get_node_type

IMAGE_SHAPE = (3, 16, 16)
OP_SHAPE = (3, 40, 40)  # larger than the default crop sizes
SEQUENCE_SHAPE = (40, 3)  # steps x features, longer than the default crop lengths
POINTS_SHAPE = (40, 4)  # points x channels (x, y, z and one feature)
DATA_SHAPES = {"sequence": SEQUENCE_SHAPE, "points": POINTS_SHAPE}
"""A sample of each input type whose layers and operators take only it, by port type."""


def data_shape(port_types: tuple[str, ...], default: tuple[int, ...]) -> tuple[int, ...]:
    return next((DATA_SHAPES[t] for t in port_types if t in DATA_SHAPES), default)


def test_every_node_type_is_documented() -> None:
    for kind in all_node_types():
        assert kind.type.split(".")[0] == kind.category in CATEGORIES
        assert kind.title and kind.description, kind.type
        schema = kind.params_model.model_json_schema()
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{kind.type}.{name} has no help text"


PATH_WORDS = re.compile(r"path|root|dir\\b|director|folder|file", re.IGNORECASE)
NOT_SERVER_PATHS = {
    ("dataset.csv", "path_column"): "the header of a CSV column; the image paths it holds are read "
    "under the CSV's folder or image_root, both marked",
}


def _takes_text(annotation: Any) -> bool:
    if annotation is str:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _takes_text(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_takes_text(arg) for arg in typing.get_args(annotation))
    return False


def test_every_parameter_that_names_a_file_is_marked_as_a_server_path() -> None:
    # The server's path policy reads these marks: a text parameter that looks like a path but is not
    # marked would let any user read server files through it.
    marked: dict[str, tuple[str, ...]] = {}
    for kind in all_node_types():
        for name, info in kind.params_model.model_fields.items():
            looks_like_path = PATH_WORDS.search(name) or PATH_WORDS.search(info.description or "")
            if not _takes_text(info.annotation) or not looks_like_path:
                continue
            if (kind.type, name) in NOT_SERVER_PATHS:
                assert name not in kind.path_fields, (kind.type, name)
                continue
            assert name in kind.path_fields, f"{kind.type}.{name} looks like a path but is not a ServerPath"
            schema = kind.params_model.model_json_schema()["properties"][name]
            assert schema.get("x-server-path") is True, (kind.type, name)
        if kind.path_fields:
            marked[kind.type] = kind.path_fields
    assert marked == {
        "dataset.bitmaps": ("path",),
        "dataset.csv": ("path", "image_root"),
        "dataset.folder": ("path",),
        "dataset.sequence": ("path",),
        "dataset.table": ("path",),
        "dataset.torchvision": ("root",),
        "model.efficientnet_lite0": ("weights_path",),
        "model.timm": ("weights_path",),
        "model.torchvision": ("weights_path",),
    }


def test_catalog_is_plain_json_with_ports() -> None:
    entries = catalog()
    assert json.loads(json.dumps(entries)) == entries
    types = {entry["type"] for entry in entries}
    for expected in (
        "dataset.builtin",
        "op.Resize",
        "op.Normalize",
        "op.Lambda",
        "op.RandomAffine",
        "layer.Conv2d",
        "layer.Add",
        "layer.Concat",
        "train.Classifier",
    ):
        assert expected in types
    add = next(e for e in entries if e["type"] == "layer.Add")
    assert add["inputs"][0]["multiple"] is True
    assert next(e for e in entries if e["type"] == "op.ColorJitter")["random"] is True
    assert next(e for e in entries if e["type"] == "op.Resize")["random"] is False


def layer_cases() -> list[tuple[str, dict[str, Any], list[tuple[int, ...]]]]:
    flat = [(32,)]
    image = [IMAGE_SHAPE]
    cases: list[tuple[str, dict[str, Any], list[tuple[int, ...]]]] = []
    for kind in all_node_types():
        if not isinstance(kind, LayerNode):
            continue
        if kind.type in ("layer.Linear", "layer.BatchNorm1d"):
            cases.append((kind.type, {}, flat))
        elif kind.type in ("layer.Add", "layer.Concat"):
            cases.append((kind.type, {}, [IMAGE_SHAPE, IMAGE_SHAPE]))
        else:
            cases.append((kind.type, {}, [data_shape(kind.inputs[0].types, IMAGE_SHAPE)]))
    cases.append(("layer.Conv2d", {"out_channels": 8, "kernel_size": 4, "stride": 1}, image))
    cases.append(("layer.Conv2d", {"out_channels": 8, "kernel_size": 5, "stride": 2, "bias": False}, image))
    cases.append(("layer.MaxPool2d", {"kernel_size": 3, "stride": 2, "padding": 1}, image))
    return cases


@pytest.mark.parametrize(("type_name", "params", "shapes"), layer_cases())
def test_layer_codegen_matches_build_and_infer(
    type_name: str, params: dict[str, Any], shapes: list[tuple[int, ...]], tmp_path: Path
) -> None:
    kind = get_node_type(type_name)
    assert isinstance(kind, LayerNode)
    parsed = kind.params_model.model_validate(params)
    ctx = ShapeContext(num_outputs=10, data_dir=tmp_path, node_id="n1")
    built = kind.build(parsed, list(shapes), ctx)
    namespace = {"nn": nn, "torch": torch, "AddModule": AddModule, "ConcatModule": ConcatModule}
    namespace |= vars(sequence_layers) | vars(point_layers)  # the script carries these modules
    generated = eval(kind.codegen(parsed, list(shapes), ctx), namespace)  # test-only: our own generated code
    assert type(generated) is type(built)
    assert [p.shape for p in generated.parameters()] == [p.shape for p in built.parameters()]
    generated.load_state_dict(built.state_dict())
    built.eval()
    generated.eval()
    inputs = [torch.randn(2, *shape) for shape in shapes]
    out = built(*inputs)
    assert torch.equal(out, generated(*inputs))
    assert tuple(out.shape[1:]) == kind.infer(parsed, list(shapes), ctx)
    if kind.inline:  # the script writes Add and Concat as expressions in forward()
        names = [f"x{i}" for i in range(len(inputs))]
        inline = eval(kind.forward_code(names), {"torch": torch, **dict(zip(names, inputs, strict=True))})
        assert torch.equal(out, inline)


@pytest.mark.parametrize("kind", [k for k in all_node_types() if isinstance(k, OpNode)], ids=lambda k: k.type)
def test_op_codegen_matches_build(kind: OpNode[Any]) -> None:
    params = kind.params_model.model_validate({})
    if kind.type == "op.Normalize":
        params = kind.params_model.model_validate({"preset": "imagenet"})
    shape = data_shape(kind.inputs[0].types, OP_SHAPE)
    image = torch.rand(*shape)
    built = kind.build(params, shape)
    if isinstance(built, FittedTransform):  # fitted on the training data before use
        built.fit(torch.rand(4, *shape))
    namespace = {"v2": v2, "torch": torch, **vars(sequence_ops), **vars(point_ops)}  # carried modules
    namespace |= {"FEATURE_MEAN": getattr(built, "mean", None), "FEATURE_STD": getattr(built, "std", None)}
    generated = eval(kind.codegen(params, shape), namespace)  # test-only
    torch.manual_seed(3)
    expected = built(image)
    torch.manual_seed(3)
    assert torch.allclose(generated(image), expected)
    assert tuple(expected.shape) == kind.infer(params, shape)


def test_crop_larger_than_image_is_a_shape_error() -> None:
    from dragdl.engine.graph.errors import NodeError

    kind = get_node_type("op.CenterCrop")
    assert isinstance(kind, OpNode)
    with pytest.raises(NodeError, match="larger than the incoming images"):
        kind.infer(kind.params_model.model_validate({"height": 32}), IMAGE_SHAPE)

"""model.json's `preprocessing`: each image operator declares its portable step, and the JSON a
browser follows (frontend/src/features/models/preprocess.ts) stays as it was written before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dragdl.engine.bundle.writer import build_manifest
from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.graph.spec import Graph
from dragdl.engine.nodes.base import OpNode
from dragdl.engine.nodes.registry import get_node_type
from dragdl.engine.run import prepare

from ...graphs import chain

TRAIN = {"epochs": 1, "batch_size": 64, "lr": 0.01, "seed": 0}
TO_FLOAT = {"op": "to_float", "scale": 0.00392156862745098}


def digits(*ops: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return chain(
        "Digits",
        [
            ("data", "dataset.builtin", {"name": "digits"}),
            *ops,
            ("flatten", "layer.Flatten", {}),
            ("dense", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", TRAIN),
        ],
    )


def preprocessing(graph: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The preprocessing section of the model.json a run of `graph` writes, as its JSON text reads."""
    plan = compile_graph(graph, DataContext(data_dir=tmp_path, allow_download=False))
    pipeline = prepare(plan)
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"-")
    try:
        manifest = build_manifest(weights, Graph.model_validate(graph), plan, pipeline.fitted, {})
    finally:
        pipeline.close()
    section: dict[str, Any] = json.loads(manifest.model_dump_json(by_alias=True))["preprocessing"]
    return section


def test_geometry_gray_and_imagenet_statistics_are_portable(tmp_path: Path) -> None:
    graph = digits(
        ("resize", "op.Resize", {"height": 12, "width": 10, "interpolation": "bicubic"}),
        ("crop", "op.CenterCrop", {"height": 8}),
        ("gray", "op.Grayscale", {"channels": 3}),
        ("flip", "op.RandomHorizontalFlip", {"p": 0.5}),
        ("norm", "op.Normalize", {"preset": "imagenet"}),
    )
    # ImageNet's statistics as the float32 numbers the built transform computes with.
    mean = [0.48500001430511475, 0.4560000002384186, 0.4059999883174896]
    std = [0.2290000021457672, 0.2240000069141388, 0.22499999403953552]
    section = preprocessing(graph, tmp_path)
    assert section["steps"] == [
        {"op": "resize", "size": [12, 10], "interpolation": "bicubic", "antialias": True},
        {"op": "center_crop", "size": [8, 8]},
        {"op": "grayscale", "channels": 3},
        TO_FLOAT,
        {"op": "normalize", "mean": mean, "std": std},
    ]
    assert section["portable"] is True and (section["mean"], section["std"]) == (mean, std)


def test_fitted_statistics_are_the_steps_numbers(tmp_path: Path) -> None:
    graph = digits(("resize", "op.Resize", {"height": 12}), ("norm", "op.Normalize", {"preset": "dataset"}))
    section = preprocessing(graph, tmp_path)
    resize, to_float, normalize = section["steps"]
    assert resize == {"op": "resize", "size": [12, 12], "interpolation": "bilinear", "antialias": True}
    assert to_float == TO_FLOAT
    assert list(normalize) == ["op", "mean", "std"] and len(normalize["mean"]) == 1
    assert 0.05 < normalize["mean"][0] < 0.6 and normalize["std"][0] > 0.05
    assert (section["mean"], section["std"]) == (normalize["mean"], normalize["std"])


def test_an_operator_without_a_portable_step_is_named_by_its_type(tmp_path: Path) -> None:
    graph = digits(
        ("norm", "op.Normalize", {"preset": "custom", "mean": [0.5], "std": [0.25]}),
        ("blur", "op.GaussianBlur", {"kernel_size": 3, "sigma": 1.0}),
        ("lam", "op.Lambda", {"expression": "1 - x"}),
    )
    section = preprocessing(graph, tmp_path)
    assert section["steps"] == [
        TO_FLOAT,
        {"op": "normalize", "mean": [0.5], "std": [0.25]},
        {"op": "op.GaussianBlur", "params": {"kernel_size": 3, "sigma": 1.0}},
        {"op": "op.Lambda", "params": {"expression": "1 - x"}},
    ]
    assert section["portable"] is False


def test_without_a_float_operator_the_conversion_comes_last(tmp_path: Path) -> None:
    section = preprocessing(digits(("crop", "op.CenterCrop", {"height": 6, "width": 7})), tmp_path)
    assert section["steps"] == [{"op": "center_crop", "size": [6, 7]}, TO_FLOAT]
    assert section["mean"] is None and section["portable"] is True


@pytest.mark.parametrize("type_name", ["op.GaussianBlur", "op.Lambda", "op.RandomHorizontalFlip"])
def test_operators_that_numbers_cannot_describe_declare_no_step(type_name: str) -> None:
    kind = get_node_type(type_name)
    assert isinstance(kind, OpNode)
    assert kind.portable_step(kind.params_model(), (1, 8, 8), None) is None

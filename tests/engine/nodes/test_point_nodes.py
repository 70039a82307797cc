"""Point cloud nodes: dataset.points validates without generating its clouds, the operators (sample,
normalize, and the training-only random ones, seeded) and the layers (shared MLP, pooling over points,
T-Net with its orthogonality term added to the loss by the task kind's step), order-invariant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from tests.graphs import chain
from torch import nn

from dragdl.engine.analysis.validate import validate_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.data.point_builtin import make_shapes
from dragdl.engine.data.point_ops import (
    JitterPoints,
    NormalizePoints,
    RandomPointDropout,
    RandomRotatePoints,
    RandomScalePoints,
    sample_points,
)
from dragdl.engine.network.point_layers import GlobalPoolPoints, PointTransform, SharedMLP
from dragdl.engine.tasks.registry import get_task_kind


def pointnet(*layers: tuple[str, str, dict[str, Any]], points: int = 64) -> dict[str, Any]:
    return chain(
        "pointnet",
        [
            ("data", "dataset.points", {"points": points, "per_class": 10}),
            ("sample", "op.SamplePoints", {"points": 32}),
            ("norm", "op.NormalizePoints", {}),
            ("rotate", "op.RandomRotatePoints", {}),
            *layers,
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1}),
        ],
    )


def test_a_pointnet_validates_with_point_shapes_on_its_edges(tmp_path: Path) -> None:
    before = make_shapes.cache_info().misses
    graph = pointnet(
        ("tnet", "layer.TNet", {"width": 8}),
        ("mlp", "layer.SharedMLP", {"out_channels": 16}),
        ("feat", "layer.TNet", {"transform": "feature", "width": 8}),
        ("pool", "layer.GlobalPoolPoints", {}),
    )
    result = validate_graph(graph, DataContext(data_dir=tmp_path))
    assert result.ok, result.errors
    assert result.shapes["data"] == "64 pts x 3"
    assert result.shapes["sample"] == "32 pts x 3"
    assert (result.shapes["mlp"], result.shapes["feat"], result.shapes["pool"], result.shapes["fc"]) == (
        "32x16",
        "32x16",
        "16",
        "6",
    )
    assert result.dataset is not None and result.dataset.input_type == "points"
    assert result.dataset.count == 60
    assert make_shapes.cache_info().misses == before  # describing generated nothing


def test_a_point_layer_after_pooling_names_what_it_receives(tmp_path: Path) -> None:
    graph = pointnet(("pool", "layer.GlobalPoolPoints", {}), ("mlp", "layer.SharedMLP", {}))
    result = validate_graph(graph, DataContext(data_dir=tmp_path))
    errors = [(e.code, e.node_id) for e in result.errors]
    assert errors == [("shape_mismatch", "mlp")], result.errors
    assert "before global pooling over points" in result.errors[0].message


def cloud(points: int = 50, channels: int = 4, seed: int = 0) -> torch.Tensor:
    return torch.randn(points, channels, generator=torch.Generator().manual_seed(seed))


def test_sampling_gives_the_same_points_whatever_their_order() -> None:
    x = cloud(50)
    shuffled = x[torch.randperm(50, generator=torch.Generator().manual_seed(1))]
    fewer = sample_points(x, 20)
    assert fewer.shape == (20, 4)
    assert torch.equal(fewer, sample_points(shuffled, 20))
    assert all(any(torch.equal(p, q) for q in x) for p in fewer)  # points of the cloud, features kept
    more = sample_points(x, 120)
    assert more.shape == (120, 4) and torch.equal(more, sample_points(shuffled, 120))
    assert torch.equal(torch.unique(more, dim=0), torch.unique(x, dim=0))
    batch = torch.stack([x, shuffled])
    assert torch.equal(sample_points(batch, 20)[1], fewer)


def test_normalizing_centres_the_coordinates_in_the_unit_sphere() -> None:
    x = cloud() * 5 + 3
    out = NormalizePoints()(x)
    assert torch.allclose(out[:, :3].mean(0), torch.zeros(3), atol=1e-5)
    assert torch.isclose(out[:, :3].norm(dim=1).max(), torch.tensor(1.0))
    assert torch.equal(out[:, 3:], x[:, 3:])


@pytest.mark.parametrize(
    "op",
    [RandomRotatePoints(), JitterPoints(0.01, 0.05), RandomScalePoints(0.8, 1.25), RandomPointDropout(0.5)],
    ids=lambda op: type(op).__name__,
)
def test_random_operators_draw_from_the_seeded_generator_and_keep_features(op: nn.Module) -> None:
    x = cloud()
    torch.manual_seed(5)
    first = op(x)
    torch.manual_seed(5)
    assert torch.equal(op(x), first)
    assert first.shape == x.shape and not torch.equal(first, x)
    if not isinstance(op, RandomPointDropout):
        assert torch.equal(first[:, 3:], x[:, 3:])


def test_rotation_about_the_up_axis_keeps_heights_and_distances_to_it() -> None:
    x = cloud(channels=3)
    out = RandomRotatePoints("z")(x)
    assert torch.allclose(out[:, 2], x[:, 2])
    assert torch.allclose(out[:, :2].norm(dim=1), x[:, :2].norm(dim=1), atol=1e-5)


def test_a_pointnet_of_the_layers_answers_the_same_for_shuffled_points() -> None:
    torch.manual_seed(0)
    net = nn.Sequential(
        PointTransform(4, 3, width=8), SharedMLP(4, 16), PointTransform(16, 16, width=8), GlobalPoolPoints()
    )
    net.train()
    net(torch.randn(8, 50, 4))  # BatchNorm statistics of something
    net.eval()
    x = torch.randn(2, 50, 4)
    shuffled = x[:, torch.randperm(50)]
    assert torch.allclose(net(x), net(shuffled), atol=1e-6)
    mean = GlobalPoolPoints("mean")
    assert torch.allclose(mean(x), x.mean(dim=1))


def test_the_tnet_starts_as_the_identity_and_its_term_joins_the_training_loss() -> None:
    tnet = PointTransform(3, 3, width=8, regularization=0.5)
    x = torch.randn(4, 20, 3)
    assert torch.allclose(tnet(x), x, atol=1e-6)
    with torch.no_grad():
        tnet.head[-1].bias.add_(torch.linspace(0, 1, 9))
    model = nn.Sequential(tnet, GlobalPoolPoints(), nn.Linear(3, 2))
    kind = get_task_kind("classification")
    batch = {"input": x, "target": torch.tensor([0, 1, 0, 1])}
    criterion = nn.CrossEntropyLoss()
    loss, outputs = kind.step(model, batch, criterion)
    term = tnet.added_loss
    assert term is not None and float(term) > 0
    assert torch.allclose(loss, criterion(outputs, batch["target"]) + term)
    model.eval()
    loss, outputs = kind.step(model, batch, criterion)
    assert tnet.added_loss is None and torch.equal(loss, criterion(outputs, batch["target"]))

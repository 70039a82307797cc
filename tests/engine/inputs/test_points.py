"""The `points` input type: registered, its edge label and summary, and its prediction batches."""

from __future__ import annotations

import torch

from dragdl.engine.data.point_builtin import describe_point_builtin
from dragdl.engine.inputs.points import POINTS
from dragdl.engine.inputs.registry import get_input_type


def test_points_is_a_registered_input_type_named_by_its_port() -> None:
    assert get_input_type("points") is POINTS
    assert POINTS.export_input_name == "points"


def test_edges_and_summaries_word_clouds_as_points_and_channels() -> None:
    info = describe_point_builtin("shapes", 1024, 10)
    assert POINTS.edge_label(POINTS.sample_shape(info)) == "1024 pts x 3"
    assert POINTS.edge_label((None, 6)) == "? pts x 6"
    summary = POINTS.summary(info)
    assert summary["shape"] == [1024, 3]
    assert summary["sample"] == "1024 points x 3 channels"
    assert summary["samples_name"] == "point clouds"


def test_the_points_axis_is_dynamic_only_when_sizes_vary() -> None:
    assert POINTS.dynamic_axes([256, 3]) == {0: "batch"}
    assert POINTS.dynamic_axes([None, 3]) == {0: "batch", 1: "points"}


def test_a_prediction_batch_fills_smaller_clouds_with_their_own_points() -> None:
    small, large = torch.arange(6.0).view(2, 3), torch.ones(5, 3)
    batch = POINTS.predict_batch([small, large])["input"]
    assert batch.shape == (2, 5, 3)
    assert torch.equal(batch[0], small[[0, 1, 0, 1, 0]])

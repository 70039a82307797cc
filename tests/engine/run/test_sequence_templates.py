"""The shipped sequence templates validate as the canvas shows them (the data node's edge label,
the head sized by the task kind); their accuracy is test_sequence_accuracy.py's (slow)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from dragdl.engine.analysis.validate import validate_graph
from dragdl.engine.data.base import DataContext


@pytest.mark.parametrize(
    ("name", "data", "head", "task"),
    [
        ("lstm_seq_mnist", "28 x 28 seq", "10", "train.Classifier"),
        ("cnn1d_waves", "64 x 1 seq", "3", "train.Classifier"),
        ("sequence_regressor_waves_frequency", "64 x 1 seq", "1", "train.Regressor"),
    ],
)
def test_a_sequence_template_validates(name: str, data: str, head: str, task: str, tmp_path: Path) -> None:
    graph = json.loads(resources.files("dragdl.examples").joinpath(f"{name}.json").read_text())
    assert graph["nodes"][0]["type"] == "dataset.sequence" and graph["nodes"][-1]["type"] == task
    result = validate_graph(graph, DataContext(data_dir=tmp_path))
    assert result.ok, result.errors
    assert result.shapes["data"] == data and result.shapes["fc"] == head

"""The issue's offline accuracy goals, reached by the shipped sequence templates through run_graph on
one torch thread: the LSTM on sequential MNIST >= 93% test accuracy, the GRU (the same template with
its LSTM a GRU, on the waves) and the fully convolutional 1-D classifier on the waves >= 95%, and the
sequence regressor's R^2 on the waves' frequency. Each run is as short as reaches its goal with a
margin: the epochs are set here (the LSTM's are its template's; the others' templates train longer)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import torch

from dragdl.engine.data.base import DataContext
from dragdl.engine.run import run_graph
from dragdl.engine.train.reporter import ListReporter

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def template(name: str, epochs: int, **changes: dict[str, Any]) -> dict[str, Any]:
    """A shipped template with its train node's epochs set and `changes` merged into nodes by id
    (`type` replaces the node's type, anything else its params)."""
    graph: dict[str, Any] = json.loads(
        resources.files("dragdl.examples").joinpath(f"{name}.json").read_text()
    )
    for node in graph["nodes"]:
        change = dict(changes.get(node["id"], {}))
        node["type"] = change.pop("type", node["type"])
        node["params"].update(change)
        if node["type"].startswith("train."):
            node["params"]["epochs"] = epochs
    return graph


def trained(graph: dict[str, Any], tmp_path: Path) -> dict[str, float]:
    result = run_graph(graph, DataContext(data_dir=tmp_path / "data"), tmp_path / "run", ListReporter())
    assert result.status == "succeeded", result
    report: dict[str, Any] = json.loads((tmp_path / "run" / "report.json").read_text())
    return dict(report["test"])


def test_lstm_on_sequential_mnist_reaches_93_percent(tmp_path: Path) -> None:
    test = trained(template("lstm_seq_mnist", epochs=10), tmp_path)
    assert test["test_accuracy"] >= 0.93, test


def test_gru_on_the_waves_reaches_95_percent(tmp_path: Path) -> None:
    # The LSTM template as a GRU of 64 on the waves, with more steps per epoch for 1,500 short series:
    # batches of 32 at a constant rate (with the template's one-cycle over batches of 64, 6 to 8
    # epochs reached only 49-81%).
    graph = template(
        "lstm_seq_mnist",
        epochs=12,
        data={"name": "waves"},
        lstm={"type": "layer.GRU", "hidden_size": 64},
        train={"batch_size": 32, "schedule": "none"},
    )
    test = trained(graph, tmp_path)
    assert test["test_accuracy"] >= 0.95, test


def test_the_1d_cnn_on_the_waves_reaches_95_percent(tmp_path: Path) -> None:
    test = trained(template("cnn1d_waves", epochs=4), tmp_path)
    assert test["test_accuracy"] >= 0.95, test


def test_the_sequence_regressor_predicts_the_frequency(tmp_path: Path) -> None:
    test = trained(template("sequence_regressor_waves_frequency", epochs=10), tmp_path)
    assert test["test_r2"] >= 0.95, test

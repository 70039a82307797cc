"""train.Regressor graphs -> standalone scripts: the engine's split, loss and MAE/RMSE/R²."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.engine.compile.test_codegen import chain, ctx_for, load_module, node, ruff, script_for

from dragdl.engine.compile.codegen import generate_script
from dragdl.engine.data.batch import TARGET
from dragdl.engine.run import run_graph
from dragdl.engine.tasks.regression import Regression
from dragdl.engine.train.reporter import ListReporter

FIGURES = re.compile(r"^test MAE: ([0-9.]+)  RMSE: ([0-9.]+)  R²: (-?[0-9.]+)$", re.MULTILINE)


def regression_graph(augmented: bool = False, **train: Any) -> dict[str, Any]:
    """The 8x8 digits with each digit's value as the target (a class name read as a number)."""
    ops = [node("rot", "op.RandomRotation", degrees=10)] if augmented else []
    return chain(
        node("data", "dataset.builtin", name="digits"),
        *ops,
        node("norm", "op.Normalize", preset="dataset"),
        node("flat", "layer.Flatten"),
        node("hidden", "layer.Linear", out_features=32),
        node("relu", "layer.ReLU"),
        node("drop", "layer.Dropout", p=0.1),
        node("out", "layer.Linear", out_features="auto"),
        node("train", "train.Regressor", **{"epochs": 3, "batch_size": 32, "lr": 0.01, **train}),
    )


def run_script(path: Path, epochs: int) -> tuple[dict[str, float], str]:
    done = subprocess.run(
        [sys.executable, str(path), "--epochs", str(epochs), "--out", str(path.parent / "w.safetensors")],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = FIGURES.search(done.stdout)
    assert found, done.stdout
    mae, rmse, r2 = (float(value) for value in found.groups())
    return {"test_mae": mae, "test_rmse": rmse, "test_r2": r2}, done.stdout


def engine_figures(graph: dict[str, Any], tmp_path: Path, epochs: int) -> dict[str, float]:
    result = run_graph(
        graph, ctx_for(tmp_path), tmp_path / "run", ListReporter(), overrides={"epochs": epochs}
    )
    assert result.test is not None
    return result.test


GRAPHS = {
    "mse": regression_graph(),
    "huber-early-r2": regression_graph(
        loss="huber", huber_delta=0.5, early_stopping=True, patience=1, monitor="val_r2"
    ),
    "mae-augmented-onecycle": regression_graph(
        augmented=True, loss="mae", optimizer="sgd", schedule="onecycle", momentum=0.0, val_split=0.0
    ),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_regressor_scripts_are_formatted_and_linted(name: str, tmp_path: Path) -> None:
    source = generate_script(GRAPHS[name], ctx_for(tmp_path))
    for command in (
        [ruff(), "format", "--isolated", "--diff", "-"],
        [ruff(), "check", "--isolated", "--select", "E,F,W,I,B,UP,SIM", "--stdin-filename", "train.py", "-"],
    ):
        done = subprocess.run(command, input=source, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "LABEL_SMOOTHING" not in source and "print_report" not in source
    assert "CrossEntropyLoss" not in source


def test_the_configured_loss_is_the_engine_criterion(tmp_path: Path) -> None:
    import torch

    for loss in ("mse", "mae", "huber"):
        graph = regression_graph(loss=loss, huber_delta=0.7)
        module = load_module(script_for(graph, tmp_path))
        assert loss == module.LOSS
        predicted, actual = torch.randn(20), torch.randn(20) * 3
        for spread in (1.0, 7.5):  # a target learned as it is, and one standardized
            engine = Regression().criterion(graph_config(graph), (2.0, spread))
            expected = engine(predicted[:, None], actual)
            assert torch.equal(module.make_criterion(spread)(predicted, actual), expected)


def graph_config(graph: dict[str, Any]) -> Any:
    from dragdl.engine.nodes.registry import get_node_type

    raw = next(n for n in graph["nodes"] if n["id"] == "train")
    params, errors = get_node_type(raw["type"]).parse_params(raw["params"])
    assert not errors
    return params


@pytest.mark.parametrize("official", [False, True])
def test_the_split_is_the_regression_kind_split(official: bool, tmp_path: Path) -> None:
    module = load_module(script_for(regression_graph(val_split=0.15, test_split=0.25, seed=7), tmp_path))
    count = 103
    test_part = np.arange(80, count) if official else None
    train, val, test = module.split_indices(count, test_part)
    splits = Regression().split(np.zeros(count, np.float32), 0.15, 0.25, 7, test_part)
    assert np.array_equal(train, splits.train)
    assert np.array_equal(val, splits.val)
    assert np.array_equal(test, splits.test)


def test_errors_are_the_engine_metrics(tmp_path: Path) -> None:
    import torch

    from dragdl.engine.tasks.regression import RegressionMetrics

    module = load_module(script_for(regression_graph(), tmp_path))
    predicted, actual = torch.randn(50), torch.randn(50) * 2 + 1
    running = RegressionMetrics(torch.device("cpu"))
    running.add(torch.tensor(0.0), predicted[:, None], {TARGET: actual})
    engine = running.values()
    for key, value in module.errors(predicted, actual).items():
        assert value == pytest.approx(engine[key], rel=1e-9), key
    constant = module.errors(predicted, torch.full((50,), 3.0))
    assert constant["r2"] == 0.0


@pytest.mark.parametrize(
    "name", ["mse", pytest.param("huber-early-r2", marks=pytest.mark.slow), "mae-augmented-onecycle"]
)
def test_regressor_script_reaches_the_engine_test_figures(name: str, tmp_path: Path) -> None:
    graph = GRAPHS[name]
    figures, output = run_script(script_for(graph, tmp_path), epochs=3)
    engine = engine_figures(graph, tmp_path, epochs=3)
    # Same split, seeds, initial weights, batch order and loss: the same run on CPU (the script
    # prints 4 decimals).
    for key, value in figures.items():
        assert value == pytest.approx(engine[key], abs=2e-3), (key, figures, engine)
    assert "predicted" in output

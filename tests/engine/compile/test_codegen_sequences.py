"""Sequence graphs -> standalone scripts: the engine's data, fitted standardization, augmentation and
batches, so the script trains to the engine's result; and no input type is tested by name in compile/."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.engine.compile.test_codegen import chain, ctx_for, load_module, node, ruff, script_for

from dragdl.engine.compile.codegen import generate_script
from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.sequence_builtin import open_sequence_builtin
from dragdl.engine.graph.errors import GraphInvalid
from dragdl.engine.inputs import all_input_types
from dragdl.engine.inputs.sequences import _sequences, fit_operators
from dragdl.engine.nodes.registry import all_node_types
from dragdl.engine.run import run_graph
from dragdl.engine.train.reporter import ListReporter

COMPILE = Path(__file__).resolve().parents[3] / "src" / "dragdl" / "engine" / "compile"
ACCURACY = re.compile(r"^test accuracy: ([0-9.]+) \((\d+)/(\d+)\)$", re.MULTILINE)
FIGURES = re.compile(r"^test MAE: ([0-9.]+)  RMSE: ([0-9.]+)  R²: (-?[0-9.]+)$", re.MULTILINE)
LOSS = re.compile(r"^test loss: ([0-9.]+)$", re.MULTILINE)


def lstm_classifier(**train: Any) -> dict[str, Any]:
    """Waves through a fitted standardization and a random shift into an LSTM."""
    return chain(
        node("data", "dataset.sequence", source="builtin", name="waves"),
        node("std", "op.StandardizeFeatures"),
        node("shift", "op.RandomTimeShift", max_shift=4),
        node("lstm", "layer.LSTM", hidden_size=16),
        node("last", "layer.LastStep"),
        node("fc", "layer.Linear", out_features="auto"),
        node("train", "train.Classifier", **{"batch_size": 64, "lr": 0.01, "precision": "fp32", **train}),
    )


def conv_regressor() -> dict[str, Any]:
    """The waves' frequency from a resampled, standardized sequence through a 1-D CNN."""
    return chain(
        node("data", "dataset.sequence", source="builtin", name="waves-frequency"),
        node("resample", "op.ResampleSteps", length=48),
        node("std", "op.StandardizeFeatures"),
        node("conv", "layer.Conv1d", out_channels=8, kernel_size=5),
        node("relu", "layer.ReLU"),
        node("pool", "layer.GlobalPoolTime"),
        node("out", "layer.Linear", out_features="auto"),
        node("train", "train.Regressor", batch_size=64, lr=0.01, precision="fp32"),
    )


def run_script(path: Path, epochs: int) -> str:
    done = subprocess.run(
        [sys.executable, str(path), "--epochs", str(epochs), "--out", str(path.parent / "w.safetensors")],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def engine_test(graph: dict[str, Any], tmp_path: Path, epochs: int) -> dict[str, float]:
    result = run_graph(
        graph, ctx_for(tmp_path), tmp_path / "run", ListReporter(), overrides={"epochs": epochs}
    )
    assert result.test is not None
    return result.test


@pytest.mark.parametrize("graph", [lstm_classifier(), conv_regressor()], ids=["lstm", "conv-regression"])
def test_sequence_scripts_are_formatted_linted_and_carry_their_modules(
    graph: dict[str, Any], tmp_path: Path
) -> None:
    source = generate_script(graph, ctx_for(tmp_path))
    for command in (
        [ruff(), "format", "--isolated", "--diff", "-"],
        [ruff(), "check", "--isolated", "--select", "E,F,W,I,B,UP,SIM", "--stdin-filename", "train.py", "-"],
    ):
        done = subprocess.run(command, input=source, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "dragdl" not in {
        (n.module or "").split(".")[0] for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)
    }
    assert source.count("class StandardizeFeatures(") == 1  # the operators' module, carried once
    assert "v2." not in source and "images" not in source.split("# --- Data")[1].split("# --- Network")[0]


@pytest.mark.parametrize(
    "name", ["waves", "waves-frequency", pytest.param("seq-mnist", marks=pytest.mark.slow)]
)
def test_the_script_loads_the_engine_sequences(name: str, tmp_path: Path) -> None:
    graph = lstm_classifier() if name != "waves-frequency" else conv_regressor()
    graph["nodes"][0]["params"]["name"] = name
    module = load_module(script_for(graph, tmp_path))
    values, targets, classes, official_test = module.load_dataset()
    source = open_sequence_builtin(name, tmp_path / "cache")
    assert values.dtype == np.float32 and np.array_equal(values, source.values)
    assert list(classes) == list(source.classes)
    expected = source.target_values() if source.labels is None else source.labels
    assert np.array_equal(targets, expected)
    assert official_test is None and source.test_indices is None


def test_the_fitted_standardization_is_the_engine_one(tmp_path: Path) -> None:
    graph = conv_regressor()
    module = load_module(script_for(graph, tmp_path))
    values, labels, _, official = module.load_dataset()
    train_idx, _, _ = module.split_indices(len(labels), official)
    _, _, eval_ops = module.build_transforms(values, train_idx)
    plan = compile_graph(graph, ctx_for(tmp_path))
    stages = tuple(plan.prepared.operators)
    splits = plan.task.split(plan.targets, 0.15, 0.15, 0, None)
    assert np.array_equal(splits.train, train_idx)  # the train node's defaults
    fitted = fit_operators(_sequences(plan.source), splits.train, stages, 0)
    assert eval_ops[1].mean.tolist() == fitted["std"]["mean"]
    assert eval_ops[1].std.tolist() == fitted["std"]["std"]


def test_sequence_files_are_refused_naming_the_field(tmp_path: Path) -> None:
    graph = lstm_classifier()
    graph["nodes"][0]["params"] = {"source": "file", "path": str(tmp_path / "set.ts")}
    (tmp_path / "set.ts").write_text(
        "@problemName t\n@timeStamps false\n@univariate true\n@equalLength true\n@seriesLength 7\n"
        "@classLabel true a b\n@data\n" + "".join(f"1,2,3,4,5,6,{i}:{'ab'[i % 2]}\n" for i in range(12)),
        encoding="utf-8",
    )
    with pytest.raises(GraphInvalid) as info:
        generate_script(graph, ctx_for(tmp_path))
    (error,) = info.value.errors
    assert (error.code, error.node_id, error.field) == ("codegen_unsupported", "data", "source")
    assert error.message.endswith("not sequences read from files or uploads (source 'file')"), error.message


@pytest.mark.slow
def test_the_lstm_script_trains_to_the_engine_result(tmp_path: Path) -> None:
    graph = lstm_classifier(epochs=2)
    output = run_script(script_for(graph, tmp_path), epochs=2)
    engine = engine_test(graph, tmp_path, epochs=2)
    # Same data, split, standardization, per-sample shifts, batch order and initial weights: the
    # same run on CPU (the script prints 4 decimals).
    found, loss = ACCURACY.search(output), LOSS.search(output)
    assert found and loss, output
    assert float(found.group(1)) == pytest.approx(engine["test_accuracy"], abs=1e-4)
    assert float(loss.group(1)) == pytest.approx(engine["test_loss"], abs=1e-4)


@pytest.mark.slow
def test_the_conv_regression_script_trains_to_the_engine_figures(tmp_path: Path) -> None:
    graph = conv_regressor()
    output = run_script(script_for(graph, tmp_path), epochs=2)
    engine = engine_test(graph, tmp_path, epochs=2)
    found = FIGURES.search(output)
    assert found, output
    for key, value in zip(("test_mae", "test_rmse", "test_r2"), found.groups(), strict=True):
        assert float(value) == pytest.approx(engine[key], abs=2e-4), (key, output, engine)


def test_no_code_in_compile_tests_for_an_input_type_or_dataset_by_name() -> None:
    """Generic code asks the input type (`script_writer`); a comparison with a registered input type's
    or dataset node's name anywhere in compile/ fails here, naming the file and line."""
    names = {t.name for t in all_input_types()} | {
        k.type for k in all_node_types() if k.category == "dataset"
    }
    found = []
    for path in sorted(COMPILE.glob("*.py")):
        for item in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(item, ast.Compare):
                continue
            for side in [item.left, *item.comparators]:
                for leaf in ast.walk(side):
                    if isinstance(leaf, ast.Constant) and leaf.value in names:
                        found.append(f"{path.name}:{item.lineno}: compares with {leaf.value!r}")
    assert not found, "\n".join(found)

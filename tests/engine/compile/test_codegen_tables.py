"""Table graphs -> standalone scripts: the same table, operator statistics, features and figures."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from tests.engine.compile.test_codegen import (
    ALLOWED_IMPORTS,
    chain,
    ctx_for,
    example,
    load_module,
    node,
    ruff,
)

from dragdl.engine.compile.codegen import generate_script
from dragdl.engine.compile.codegen_tables import TableOp, defined_names, reserved, step_code, step_lines
from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.table_pipeline import table_features, transform_table
from dragdl.engine.nodes.registry import all_node_types
from dragdl.engine.nodes.table_ops import Standardize, StandardizeParams
from dragdl.engine.nodes.tables import TableOpNode
from dragdl.engine.run import run_graph
from dragdl.engine.train.reporter import ListReporter

ACCURACY = re.compile(r"^test accuracy: ([0-9.]+) \(", re.MULTILINE)
COMMON_CALLS = {"number_columns", "category_columns", "list"}
FIGURES = re.compile(r"^test MAE: ([0-9.]+)  RMSE: ([0-9.]+)  R²: (-?[0-9.]+)$", re.MULTILINE)


def write_csv(path: Path) -> None:
    """A table with a number column with gaps, a category column with gaps and a text target."""
    rng = np.random.default_rng(3)
    lines = ["height,colour,weight,note,kind"]
    for i in range(160):
        height = "" if i % 11 == 0 else f"{rng.normal(170, 10):.2f}"
        colour = "" if i % 13 == 0 else ["red", "green", " blue"][int(rng.integers(0, 3))]
        weight = f"{rng.normal(70, 8):.1f}"
        kind = "big" if (float(height or 170) + float(weight)) > 242 else "small"
        lines.append(f"{height},{colour},{weight},n{i % 4},{kind}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def csv_graph(path: str = "people.csv", **train: Any) -> dict[str, Any]:
    return chain(
        node("data", "dataset.table", source="file", path=path, target="kind"),
        node("pick", "op.SelectColumns", mode="drop", columns=["note"]),
        node("fill", "op.Impute", strategy="median", columns=["height"]),
        node("fill_colour", "op.Impute", strategy="most_frequent", columns=["colour"]),
        node("columns", "op.OneHot"),
        node("scale", "op.Standardize", columns=["height", "weight"]),
        node("keep", "op.SelectColumns", columns=["weight", "height", "colour=red", "colour=blue"]),
        node("hidden", "layer.Linear", out_features=8),
        node("relu", "layer.ReLU"),
        node("out", "layer.Linear", out_features="auto"),
        node("train", "train.Classifier", **{"epochs": 5, "batch_size": 16, "lr": 0.02, **train}),
    )


def lint(source: str) -> None:
    for command in (
        [ruff(), "format", "--isolated", "--diff", "-"],
        [ruff(), "check", "--isolated", "--select", "E,F,W,I,B,UP,SIM", "--stdin-filename", "train.py", "-"],
    ):
        done = subprocess.run(command, input=source, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr


def imported(source: str) -> set[str]:
    modules = set()
    for item in ast.walk(ast.parse(source)):
        if isinstance(item, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in item.names}
        elif isinstance(item, ast.ImportFrom):
            modules.add((item.module or "").split(".")[0])
    return modules


def run_script(path: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(path), "--out", str(path.parent / "w.safetensors")],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


TEMPLATES = ["logistic_regression_iris", "mlp_breast_cancer", "linear_regression_diabetes"]


@pytest.mark.parametrize("name", TEMPLATES)
def test_template_scripts_reach_the_engine_test_figures(name: str, tmp_path: Path) -> None:
    graph = example(name)
    source = generate_script(graph, ctx_for(tmp_path))
    lint(source)
    assert imported(source) <= ALLOWED_IMPORTS and "v2." not in source
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    output = run_script(script)
    result = run_graph(graph, ctx_for(tmp_path), tmp_path / "run", ListReporter())
    assert result.test is not None
    # The same split, operator statistics, initial weights and batch order: the same run on CPU.
    if "test_accuracy" in result.test:
        found = ACCURACY.search(output)
        assert found, output
        assert abs(float(found.group(1)) - result.test["test_accuracy"]) <= 0.02
    else:
        found = FIGURES.search(output)
        assert found, output
        mae, rmse, r2 = (float(value) for value in found.groups())
        assert mae == pytest.approx(result.test["test_mae"], rel=2e-3)
        assert rmse == pytest.approx(result.test["test_rmse"], rel=2e-3)
        assert r2 == pytest.approx(result.test["test_r2"], abs=2e-3)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_operators_fit_on_the_training_rows_as_the_engine_does(suffix: str, tmp_path: Path) -> None:
    write_csv(tmp_path / "people.csv")
    if suffix != ".csv":
        import pandas as pd

        frame = pd.read_csv(tmp_path / "people.csv")  # parquet: typed columns, not text
        if suffix == ".tsv":
            frame.to_csv(tmp_path / "people.tsv", sep="\t", index=False)
        else:
            frame.to_parquet(tmp_path / "people.parquet")
    graph = csv_graph(f"people{suffix}", val_split=0.2, test_split=0.2, seed=4)
    source = generate_script(graph, ctx_for(tmp_path))
    lint(source)
    assert imported(source) <= ALLOWED_IMPORTS | {"pandas"}
    assert "def fit_impute(" in source and "def fit_one_hot(" in source
    assert "columns_ = fit_one_hot(train, category_columns(train))" in source
    assert 'fill = fit_impute(train, ["height"], "median")' in source
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    module = load_module(script)
    columns, target_name = module.load_table()
    assert target_name == "kind"
    labels, classes = module.class_labels(columns.pop(target_name))
    train_idx, _, test_idx = module.split_indices(labels, None)
    features = module.build_features(columns, train_idx)

    plan = compile_graph(graph, ctx_for(tmp_path))
    splits = plan.task.split(plan.targets, 0.2, 0.2, 4, None)
    assert np.array_equal(train_idx, splits.train) and np.array_equal(test_idx, splits.test)
    assert np.array_equal(labels, plan.targets) and classes == plan.classes
    assert plan.source.features.columns["colour"][1] in ("red", "green", "blue")  # stripped
    assert plan.fitted is not None
    engine = table_features(transform_table(plan.source.features, plan.table_steps, plan.fitted))
    assert features.shape == engine.shape == (160, 4)
    assert torch.allclose(features, engine, atol=1e-6)
    # The network takes the width the operators leave.
    assert module.Net()(features[:3]).shape == (3, 2)


def test_csv_script_reaches_the_engine_test_accuracy(tmp_path: Path) -> None:
    write_csv(tmp_path / "people.csv")
    graph = csv_graph()
    script = tmp_path / "train.py"
    script.write_text(generate_script(graph, ctx_for(tmp_path)), encoding="utf-8")
    found = ACCURACY.search(run_script(script))
    assert found
    result = run_graph(graph, ctx_for(tmp_path), tmp_path / "run", ListReporter())
    assert result.test is not None
    assert abs(float(found.group(1)) - result.test["test_accuracy"]) <= 0.02


def test_an_uploaded_table_is_read_from_where_it_is_stored(tmp_path: Path) -> None:
    from dragdl.engine.data.base import DataContext, UploadedDataset

    stored = tmp_path / "uploads" / "abc"
    stored.mkdir(parents=True)
    write_csv(stored / "people.csv")
    graph = csv_graph()
    graph["nodes"][0]["params"] = {"source": "uploaded", "dataset_id": "abc", "target": "kind"}
    uploaded = {"abc": UploadedDataset(kind="table", path=Path("uploads/abc"))}
    ctx = DataContext(data_dir=tmp_path, allow_download=False, uploaded=uploaded)
    source = generate_script(graph, ctx)
    lint(source)
    assert 'path = DATA_DIR / "uploads/abc/people.csv"' in source
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    columns, target_name = load_module(script).load_table()
    plan = compile_graph(graph, ctx)
    assert target_name == "kind" and list(columns) == [*plan.source.features.columns, "kind"]
    for name, values in plan.source.features.columns.items():
        assert np.array_equal(columns[name], values, equal_nan=values.dtype.kind == "f"), name


def test_each_table_operator_writes_the_functions_its_step_calls() -> None:
    operators = [kind for kind in all_node_types() if isinstance(kind, TableOpNode)]
    assert {kind.type for kind in operators} >= {
        "op.Standardize",
        "op.OneHot",
        "op.Impute",
        "op.SelectColumns",
    }
    for kind in operators:
        defined = defined_names(kind.script_functions)
        params = kind.params_model(columns=["a"]) if kind.type == "op.SelectColumns" else kind.params_model()
        lines = step_lines(TableOp("n1", kind, params), "state")
        called = set(re.findall(r"\b([a-z_]+)\(", "\n".join(lines))) - {
            "number_columns",
            "category_columns",
            "list",
        }
        assert called and called <= defined, kind.type
        assert defined <= reserved(), kind.type


def test_a_table_operator_without_script_code_is_refused_by_name() -> None:
    class Unwritten(Standardize):
        type = "op.Unwritten"

        def script_step(self, params: Any) -> tuple[str, str]:
            return super(Standardize, self).script_step(params)

    with pytest.raises(NotImplementedError, match=r"op\.Unwritten cannot be exported as code yet"):
        step_code(TableOp("n1", Unwritten(), StandardizeParams()))


@pytest.mark.parametrize("kind", ["train.Classifier", "train.Regressor"])
def test_the_script_leaves_out_rows_without_a_target_as_training_does(kind: str, tmp_path: Path) -> None:
    """Rows whose target is empty are dropped and counted, as TableSource does by default, so the
    script trains on the rows the app trained on instead of a class '' or a NaN loss."""
    write_csv(tmp_path / "people.csv")
    lines = (tmp_path / "people.csv").read_text(encoding="utf-8").splitlines()
    regression = kind == "train.Regressor"
    for row in (4, 90):  # data rows 4 and 90 (the header is line 0)
        cells = lines[row].split(",")
        cells[2 if regression else 4] = "NA" if row == 4 else ""
        lines[row] = ",".join(cells)
    (tmp_path / "people.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    graph = csv_graph(val_split=0.2, test_split=0.2, seed=4)
    if regression:
        graph["nodes"][0]["params"]["target"] = "weight"
        graph["nodes"][-1]["type"] = "train.Regressor"
        graph["nodes"][-3]["type"] = "layer.Linear"
        graph["nodes"][5]["params"]["columns"] = ["height"]
        graph["nodes"][6]["params"]["columns"] = ["height", "colour=red", "colour=blue"]
    source = generate_script(graph, ctx_for(tmp_path))
    lint(source)
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    output = run_script(script)
    assert "2 rows without a target in the column " in output and "left out (rows 4, 90)" in output, output
    result = run_graph(graph, ctx_for(tmp_path), tmp_path / "run", ListReporter())
    assert result.test is not None
    plan = compile_graph(graph, ctx_for(tmp_path))
    assert plan.source is not None and plan.source.info.missing_targets == 2
    if regression:
        found = FIGURES.search(output)
        assert found, output
        assert float(found.group(3)) == pytest.approx(result.test["test_r2"], abs=2e-3)
    else:
        found = ACCURACY.search(output)
        assert found, output
        assert abs(float(found.group(1)) - result.test["test_accuracy"]) <= 0.02


def test_a_train_node_that_refuses_rows_without_a_target_refuses_them_in_the_script(tmp_path: Path) -> None:
    write_csv(tmp_path / "people.csv")
    source = generate_script(csv_graph(missing_targets="refuse"), ctx_for(tmp_path))
    lint(source)
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    module = load_module(script)
    columns, target_name = module.load_table()
    assert module.with_target(columns, target_name) is columns  # every row has its target
    columns[target_name][[6, 40]] = None
    refused = r"'kind' is empty in row 7 \(2 rows in all\); every row needs a target"
    with pytest.raises(ValueError, match=refused):
        module.with_target(columns, target_name)


def test_an_uploaded_semicolon_csv_trains_and_its_script_reads_it(tmp_path: Path) -> None:
    """Excel's CSV in many European locales: ';'-separated with decimal commas, a UTF-8 byte-order
    mark, CRLF line ends.
    The engine reads its real columns (not one), trains on it, and the exported script reads it
    with the same separator."""
    from dragdl.engine.data.base import DataContext, UploadedDataset

    stored = tmp_path / "uploads" / "eu"
    stored.mkdir(parents=True)
    write_csv(stored / "table.csv")
    text = (stored / "table.csv").read_text(encoding="utf-8").replace(",", ";").replace(".", ",")
    text = text.replace("\n", "\r\n")  # decimal commas too: '170,23
    (stored / "table.csv").write_bytes(text.encode("utf-8-sig"))
    graph = csv_graph()
    graph["nodes"][0]["params"] = {"source": "uploaded", "dataset_id": "eu", "target": "kind"}
    uploaded = {"eu": UploadedDataset(kind="table", path=Path("uploads/eu"))}
    ctx = DataContext(data_dir=tmp_path, allow_download=False, uploaded=uploaded)
    plan = compile_graph(graph, ctx)
    assert list(plan.source.features.columns) == ["height", "colour", "weight", "note"]
    assert plan.source.features.columns["weight"].dtype.kind == "f"  # '70,5' read as 70.5
    source = generate_script(graph, ctx)
    lint(source)
    assert 'pd.read_csv(path, sep=";", dtype=str)' in source
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    columns, target_name = load_module(script).load_table()
    assert target_name == "kind" and list(columns) == [*plan.source.features.columns, "kind"]
    for name, values in plan.source.features.columns.items():
        assert np.array_equal(columns[name], values, equal_nan=values.dtype.kind == "f"), name
    result = run_graph(graph, ctx, tmp_path / "run", ListReporter())
    assert result.test is not None and result.test["test_accuracy"] > 0.6

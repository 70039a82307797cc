"""A table's target as people's tables have it (issue 19): rows without a target are left out and
named in the dataset summary and the training log, or refused when the train node says so; a
classifier on a numeric target with many distinct values is warned about, and the regressor offered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dragdl.engine.analysis.validate import validate_graph
from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.graph.errors import GraphInvalid
from dragdl.engine.run import run_graph
from dragdl.engine.train.events import LogEvent
from dragdl.engine.train.reporter import ListReporter

ROWS = 120
NO_SPECIES = (4, 72)
"""File rows (1-based, under the header) whose species is NA or empty."""


def penguin_table(path: Path) -> Path:
    """A table with the traits of the penguin measurements: text columns, "NA" cells, two rows
    without a species, and a body mass in grams with many distinct values."""
    rng = np.random.default_rng(0)
    lines = ["species,island,bill_length_mm,sex,body_mass_g"]
    for row in range(1, ROWS + 1):
        kind = row % 3
        species = ["Adelie", "Gentoo", "Chinstrap"][kind]
        if row == NO_SPECIES[0]:
            species = "NA"
        elif row == NO_SPECIES[1]:
            species = ""
        bill = "NA" if row % 17 == 0 else f"{38 + 6 * kind + rng.normal():.1f}"
        sex = "NA" if row % 23 == 0 else ["male", "female"][row % 2]
        mass = 3500 + 700 * kind + 25 * int(rng.integers(0, 40))
        lines.append(f"{species},{['Biscoe', 'Dream', 'Torgersen'][row % 3]},{bill},{sex},{mass}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def graph(path: Path, target: str, train: str = "train.Classifier", **settings: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "nodes": [
            {
                "id": "data",
                "type": "dataset.table",
                "params": {"source": "file", "path": str(path), "target": target},
            },
            {"id": "fill", "type": "op.Impute", "params": {"strategy": "most_frequent"}},
            {"id": "onehot", "type": "op.OneHot", "params": {}},
            {"id": "scale", "type": "op.Standardize", "params": {}},
            {"id": "linear", "type": "layer.Linear", "params": {"out_features": "auto"}},
            {
                "id": "train",
                "type": train,
                "params": {"epochs": 2, "batch_size": 16, "device": "cpu", **settings},
            },
        ],
        "edges": [
            {"source": "data", "target": "fill"},
            {"source": "fill", "target": "onehot"},
            {"source": "onehot", "target": "scale"},
            {"source": "scale", "target": "linear"},
            {"source": "linear", "target": "train"},
        ],
    }


@pytest.fixture
def table(tmp_path: Path) -> Path:
    return penguin_table(tmp_path / "penguins.csv")


@pytest.fixture
def ctx(tmp_path: Path) -> DataContext:
    return DataContext(data_dir=tmp_path, allow_download=False)


# -- rows without a target ---------------------------------------------------------------------


def test_rows_without_a_target_are_named_in_the_dataset_summary(table: Path, ctx: DataContext) -> None:
    result = validate_graph(graph(table, "species"), ctx)
    assert result.ok, [e.describe() for e in result.errors]
    assert result.dataset is not None
    assert result.dataset.count == ROWS - 2
    assert result.dataset.missing_targets == 2
    assert result.dataset.missing_target_rows == list(NO_SPECIES)


def test_a_train_node_that_refuses_them_makes_the_graph_invalid(table: Path, ctx: DataContext) -> None:
    result = validate_graph(graph(table, "species", missing_targets="refuse"), ctx)
    assert not result.ok
    [error] = result.errors
    assert (error.code, error.node_id, error.field) == ("target_missing", "data", "target")
    assert "row 4 (2 rows in all)" in error.message and "train" in error.message
    assert error.details == {"column": "species", "row": 4, "count": 2, "train": "train"}
    with pytest.raises(GraphInvalid, match="target_missing"):
        compile_graph(graph(table, "species", missing_targets="refuse"), ctx)


def test_the_training_log_names_the_rows_left_out(table: Path, ctx: DataContext, tmp_path: Path) -> None:
    reporter = ListReporter()
    result = run_graph(graph(table, "species"), ctx, tmp_path / "run", reporter)
    assert result.status == "succeeded"
    warnings = [e.message for e in reporter.events if isinstance(e, LogEvent) and e.level == "warning"]
    assert any("2 rows without a target" in w and "rows 4, 72" in w and "118" in w for w in warnings), (
        warnings
    )


# -- a classifier on a measurement ---------------------------------------------------------------


def test_a_classifier_on_a_measurement_is_warned_and_offered_the_regressor(
    table: Path, ctx: DataContext
) -> None:
    result = validate_graph(graph(table, "body_mass_g"), ctx)
    assert result.ok, [e.describe() for e in result.errors]
    [warning] = result.errors
    assert (warning.severity, warning.code, warning.node_id) == (
        "warning",
        "classes_look_like_values",
        "train",
    )
    classes = len(result.dataset.classes) if result.dataset else 0
    assert classes > 20 and f"holds {classes} distinct numbers in {ROWS} rows" in warning.message
    assert "Regressor" in warning.message
    assert warning.details == {
        "column": "body_mass_g",
        "classes": classes,
        "count": ROWS,
        "suggest": "regression",
    }
    # A warning never stops a graph: it compiles, and GraphInvalid would leave it out.
    assert compile_graph(graph(table, "body_mass_g"), ctx).task.name == "classification"
    assert GraphInvalid([warning]).errors == []


def test_a_classifier_on_classes_and_a_regressor_on_the_measurement_are_not_warned(
    table: Path, ctx: DataContext
) -> None:
    for raw in (graph(table, "species"), graph(table, "body_mass_g", "train.Regressor")):
        result = validate_graph(raw, ctx)
        assert result.ok and result.errors == [], [e.describe() for e in result.errors]


def test_many_numeric_classes_with_many_rows_each_are_classes(tmp_path: Path, ctx: DataContext) -> None:
    # 30 numeric codes seen 10 times each: a code book, not a measurement.
    lines = ["x,code"] + [f"{i % 7},{100 + i % 30}" for i in range(300)]
    path = tmp_path / "codes.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = validate_graph(graph(path, "code"), ctx)
    assert result.ok and result.errors == [], [e.describe() for e in result.errors]


def test_the_cli_prints_the_warning_and_exits_0(table: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dragdl.cli import app

    file = tmp_path / "graph.json"
    file.write_text(json.dumps(graph(table, "body_mass_g")), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["validate", str(file), "--data-dir", str(tmp_path)], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    assert "1 warning(s)" in result.output and "classes_look_like_values" in result.output

"""The graph's search section: validated against the nodes' own params, each error naming node and
field; a plain run keeps the nodes' values; a trial's graph substitutes the sampled ones."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dragdl.engine.analysis.validate import validate_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.graph.search import substitute
from dragdl.engine.sweep.objective import direction, objectives

EXAMPLES = Path(__file__).resolve().parents[3] / "src" / "dragdl" / "examples"


@pytest.fixture
def ctx(tmp_path: Path) -> DataContext:
    return DataContext(data_dir=tmp_path, allow_download=False)


def iris(search: dict[str, Any]) -> dict[str, Any]:
    graph: dict[str, Any] = json.loads((EXAMPLES / "logistic_regression_iris.json").read_text())
    graph["search"] = search
    return graph


def problems(graph: dict[str, Any], ctx: DataContext) -> list[tuple[str, str | None, str | None]]:
    return [(e.code, e.node_id, e.field) for e in validate_graph(graph, ctx).errors]


def test_a_valid_search_section_passes(ctx: DataContext) -> None:
    graph = iris(
        {
            "train": {
                "lr": {"type": "float", "low": 1e-4, "high": 0.1, "log": True},
                "batch_size": {"type": "choice", "values": [8, 16, 32]},
                "optimizer": {"type": "choice", "values": ["adam", "sgd"]},
                "epochs": {"type": "int", "low": 2, "high": 6, "step": 2},
            }
        }
    )
    assert problems(graph, ctx) == []


@pytest.mark.parametrize(
    ("search", "expected"),
    [
        ({"nope": {"lr": {"type": "float", "low": 0.1, "high": 0.2}}}, ("search_node_unknown", "nope", "lr")),
        (
            {"train": {"speed": {"type": "float", "low": 0.1, "high": 0.2}}},
            ("search_param_unknown", "train", "speed"),
        ),
        (
            {"train": {"optimizer": {"type": "float", "low": 0.1, "high": 0.2}}},
            ("search_param_kind", "train", "optimizer"),
        ),
        (
            {"train": {"lr": {"type": "float", "low": 0.2, "high": 0.1}}},
            ("search_range_invalid", "train", "lr"),
        ),
        (
            {"train": {"lr": {"type": "float", "low": 0.0, "high": 0.1, "log": True}}},
            ("search_range_invalid", "train", "lr"),
        ),
        (
            {"train": {"lr": {"type": "float", "low": -1.0, "high": 0.1}}},
            ("search_value_invalid", "train", "lr"),
        ),
        (
            {"train": {"optimizer": {"type": "choice", "values": ["adam", "rocket"]}}},
            ("search_value_invalid", "train", "optimizer"),
        ),
    ],
)
def test_a_wrong_search_names_node_and_field(
    search: dict[str, Any], expected: tuple[str, str, str], ctx: DataContext
) -> None:
    assert problems(iris(search), ctx) == [expected]


def test_a_bound_that_is_not_a_number_says_so(ctx: DataContext) -> None:
    from dragdl.engine.analysis.validate import validate_graph

    result = validate_graph(iris({"train": {"lr": {"type": "float", "low": "NaN", "high": 0.1}}}), ctx)
    assert [(e.code, e.node_id, e.field) for e in result.errors] == [("search_range_invalid", "train", "lr")]
    assert "lr: low must be a finite number, not nan" in result.errors[0].message


def test_an_unknown_search_type_is_a_schema_error(ctx: DataContext) -> None:
    found = problems(iris({"train": {"lr": {"type": "normal", "mean": 0.1}}}), ctx)
    assert found and all(code == "schema_invalid" for code, _, _ in found)


def test_substitute_sets_the_values_and_drops_the_search_section() -> None:
    graph = iris({"train": {"lr": {"type": "float", "low": 1e-4, "high": 0.1}}})
    before = copy.deepcopy(graph)
    concrete = substitute(graph, {"train.lr": 0.003, "linear.bias": False})
    assert "search" not in concrete
    by_id = {n["id"]: n for n in concrete["nodes"]}
    assert by_id["train"]["params"]["lr"] == 0.003
    assert by_id["linear"]["params"]["bias"] is False
    assert graph == before  # the base graph is not changed


def test_objectives_follow_the_task_kind() -> None:
    graph = iris({})
    assert objectives(graph) == ["val_accuracy", "val_loss"]
    assert direction(graph, "val_accuracy") == "maximize"
    assert direction(graph, "val_loss") == "minimize"
    regression = json.loads((EXAMPLES / "linear_regression_diabetes.json").read_text())
    assert "val_r2" in objectives(regression)
    assert direction(regression, "val_r2") == "maximize"
    assert direction(regression, "val_mae") == "minimize"
    with pytest.raises(ValueError, match="val_accuracy"):
        direction(regression, "val_accuracy")

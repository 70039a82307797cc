"""Bounded grids (issue 23, findings 2 and 3): a grid is counted from its spec and never listed, and
every value a sweep can produce fits the param's own model, or the section is refused."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from dragdl.engine.analysis.validate import validate_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.graph.search import SearchSection
from dragdl.engine.nodes.registry import get_node_type
from dragdl.engine.sweep.study import StoredTrial, SweepPlan, ask, grid_size

EXAMPLES = Path(__file__).resolve().parents[3] / "src" / "dragdl" / "examples"


def section(raw: dict[str, Any]) -> SearchSection:
    return TypeAdapter(SearchSection).validate_python(raw)


def steps(count: int) -> dict[str, Any]:
    return {"type": "float", "low": 0.0, "high": 1.0, "step": 1.0 / (count - 1)}


def test_a_huge_grid_is_counted_without_listing_it() -> None:
    space = section({"a": {"x": steps(10_000), "y": steps(10_000), "z": steps(10_000)}})
    started = time.perf_counter()
    assert grid_size(space) > 100_000  # counting stops above the limit
    assert time.perf_counter() - started < 0.5


def test_asking_a_grid_point_does_not_build_the_grid() -> None:
    # 10^6 points: Optuna's GridSampler lists them all (about 100 MB) on every decision.
    space = section({"a": {"x": steps(1000), "y": steps(1000)}})
    plan = SweepPlan(space, "maximize", sampler="grid", seed=5)
    stored: list[StoredTrial] = []
    tracemalloc.start()
    try:
        for number in range(3):
            params, attrs = ask(plan, stored)
            stored.append(StoredTrial(number, params, "RUNNING", system_attrs=attrs))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024**2, f"asking a grid point allocated {peak / 1024**2:.0f} MB"
    assert len({(t.params["a.x"], t.params["a.y"]) for t in stored}) == 3


def test_a_small_grid_is_visited_whole_in_a_seeded_order() -> None:
    space = section(
        {"a": {"x": {"type": "int", "low": 1, "high": 5}, "y": {"type": "choice", "values": ["p", "q"]}}}
    )
    for seed in (0, 1):
        plan = SweepPlan(space, "maximize", sampler="grid", seed=seed)
        stored: list[StoredTrial] = []
        for number in range(10):
            params, attrs = ask(plan, stored)
            stored.append(StoredTrial(number, params, "COMPLETE", value=0.5, system_attrs=attrs))
        assert {(t.params["a.x"], t.params["a.y"]) for t in stored} == {
            (x, y) for x in range(1, 6) for y in "pq"
        }


def iris(search: dict[str, Any]) -> dict[str, Any]:
    graph: dict[str, Any] = json.loads((EXAMPLES / "logistic_regression_iris.json").read_text())
    graph["search"] = search
    return graph


@pytest.mark.parametrize(
    "spec",
    [
        # Rounded to 12 decimals, 1e-13 became lr = 0.0 (which the model refuses) in the driver.
        {"type": "float", "low": 1e-13, "high": 1e-12, "step": 1e-13},
        {"type": "float", "low": 3e-13, "high": 9.3e-12, "step": 3e-13},
        {"type": "float", "low": 0.1, "high": 10.0, "step": 0.3},
    ],
)
def test_every_grid_value_a_valid_section_produces_fits_the_param(
    spec: dict[str, Any], tmp_path: Path
) -> None:
    graph = iris({"train": {"lr": spec}})
    errors = validate_graph(graph, DataContext(data_dir=tmp_path, allow_download=False)).errors
    if errors:  # refused on its field: nothing reaches the driver
        assert [(e.code, e.node_id, e.field) for e in errors] == [("search_value_invalid", "train", "lr")]
        return
    train = next(n for n in graph["nodes"] if n["id"] == "train")
    kind = get_node_type(train["type"])
    assert kind is not None
    model = kind.params_model
    plan = SweepPlan(section(graph["search"]), "maximize", sampler="grid")
    stored: list[StoredTrial] = []
    for number in range(min(grid_size(plan.section), 40)):
        params, attrs = ask(plan, stored)
        model.model_validate({**train["params"], "lr": params["train.lr"]})
        stored.append(StoredTrial(number, params, "RUNNING", system_attrs=attrs))

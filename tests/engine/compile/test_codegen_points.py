"""Point cloud graphs -> standalone scripts: the engine's generated shapes, operators, augmentation
and batches, and the T-Net's own loss term added to the kind's training loss, so the script trains to
the engine's result; the PointNet template exports."""

from __future__ import annotations

import ast
import itertools
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.engine.bundle.test_point_bundle import pointnet_graph
from tests.engine.compile.test_codegen import ctx_for, load_module, ruff, script_for
from tests.engine.compile.test_codegen_sequences import ACCURACY, LOSS, engine_test, run_script

from dragdl.engine.compile.codegen import generate_script
from dragdl.engine.data.point_builtin import SHAPES, open_point_builtin

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def small(**train: Any) -> dict[str, Any]:
    """The bundle tests' small PointNet (two T-Nets, the feature one regularised), with random
    scaling, jitter and point dropout after the rotation."""
    graph = pointnet_graph()
    nodes = graph["nodes"]
    at = next(i for i, n in enumerate(nodes) if n["id"] == "rotate") + 1
    nodes[at:at] = [
        {"id": "scale", "type": "op.RandomScalePoints", "params": {}},
        {"id": "jitter", "type": "op.JitterPoints", "params": {}},
        {"id": "drop", "type": "op.RandomPointDropout", "params": {"max_ratio": 0.3}},
    ]
    nodes[-1]["params"].update(train)
    ids = [n["id"] for n in nodes]
    graph["edges"] = [{"source": a, "target": b} for a, b in itertools.pairwise(ids)]
    return graph


@pytest.mark.parametrize("name", ["template", "small"])
def test_point_scripts_are_formatted_linted_and_carry_their_modules(name: str, tmp_path: Path) -> None:
    graph = json.loads((EXAMPLES / "pointnet_shapes.json").read_text()) if name == "template" else small()
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
    for definition in ("def make_shapes(", "class SamplePoints(", "class PointTransform("):
        assert source.count(definition) == 1, definition  # each module carried once
    assert "loss = with_added_losses(criterion(logits, y), model)" in source


def test_the_script_makes_the_engine_clouds(tmp_path: Path) -> None:
    module = load_module(script_for(small(), tmp_path))
    values, labels, classes, official_test = module.load_dataset()
    source = open_point_builtin("shapes", 96, 20, seed=3)
    assert values.dtype == np.float32 and np.array_equal(values, source.values)
    assert np.array_equal(labels, source.labels) and list(classes) == list(SHAPES)
    assert official_test is None


def test_without_a_regularised_layer_the_loss_is_the_kinds_own(tmp_path: Path) -> None:
    graph = small()
    for node in graph["nodes"]:
        if node["type"] == "layer.TNet":
            node["params"]["regularization"] = 0.0
    source = generate_script(graph, ctx_for(tmp_path))
    assert "with_added_losses" not in source and "loss = criterion(logits, y)" in source


@pytest.mark.slow
def test_the_point_script_trains_to_the_engine_result(tmp_path: Path) -> None:
    graph = small(epochs=2, precision="fp32")
    output = run_script(script_for(graph, tmp_path), epochs=2)
    engine = engine_test(graph, tmp_path, epochs=2)
    # Same clouds, split, operators, per-sample augmentation, batch order, initial weights and
    # T-Net terms: the same run on CPU (the script prints 4 decimals).
    found, loss = ACCURACY.search(output), LOSS.search(output)
    assert found and loss, output
    assert float(found.group(1)) == pytest.approx(engine["test_accuracy"], abs=1e-4)
    assert float(loss.group(1)) == pytest.approx(engine["test_loss"], abs=1e-4)

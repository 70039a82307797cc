"""docs/architecture.md's recipes "Adding an input type" and "Adding a task kind", followed by a test.

tests/conformance/ holds a new input type (`vector`: vectors.py) and a new task kind (`margin`:
margin.py), each one module written only against the seams, and a run (end_to_end.py) that adds
each with one registration line and takes them through validation over REST, training, the bundle
and its ONNX export, prediction over REST and the exported training script run for real: the new
type with the new kind, the new type with a built-in kind, and a built-in type with the new kind.

It runs in a process of its own: the registrations last for the process, and other tests walk
every registered node (the Chinese catalog, the palette).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("conformance")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "tests.conformance.end_to_end", str(work)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_nothing_in_dragdl_names_the_new_type_or_kind() -> None:
    """The recipes' promise: the two modules and their registration lines are all it takes."""
    found = [
        f"{path.relative_to(ROOT)}: {word}"
        for base in (ROOT / "src", ROOT / "frontend" / "src")
        for path in sorted(base.rglob("*"))
        if path.suffix in {".py", ".ts", ".tsx", ".json"} and path.is_file()
        for word in ("dataset.vectors", "train.Margin", "tests.conformance")
        if word in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert not found


def test_the_catalog_serves_the_new_nodes_and_kind_in_both_languages(seen: dict[str, Any]) -> None:
    assert seen["catalog_nodes"] == ["dataset.vectors", "train.Margin"]
    kind = seen["catalog_kind"]
    assert (kind["title"], kind["headline"], kind["ranks_classes"]) == (
        "Margin classification",
        "accuracy",
        False,
    )
    assert kind["answer_schema"]["required"] == ["label", "index", "margin"]
    assert seen["catalog_kind_metrics"] == ["accuracy", "margin"]
    assert seen["catalog_zh_ok"]


def test_validation_words_shapes_by_the_type_and_errors_by_the_kind(seen: dict[str, Any]) -> None:
    assert seen["valid"] and seen["task"] == "margin"
    assert seen["shapes"] == {"data": "8-vector", "l0": "32", "l2": "3"}
    assert seen["summary"] == {"input_type": "vector", "classes": ["red", "green", "blue"], "count": 600}
    assert seen["wrong_width"] == [["margin_output_mismatch", "l2"]]
    assert seen["classifier_valid"] and seen["waves_valid"]
    assert seen["waves_shapes"] == {"data": "64 x 1 seq", "l3": "16"}


def test_training_reports_the_kinds_metrics_and_learns(seen: dict[str, Any]) -> None:
    assert seen["report_task"] == "margin"
    assert seen["test_metrics"] == ["test_accuracy", "test_loss", "test_margin"]
    assert seen["report_details"] == ["confusion_matrix"]
    assert seen["test_accuracy"] >= 0.95 and seen["test_margin"] > 1.0  # three well-separated clusters
    assert seen["classifier_accuracy"] >= 0.95
    assert seen["waves_accuracy"] >= 0.5  # three classes: above chance after four short epochs


def test_the_bundle_exports_and_predicts_over_rest(seen: dict[str, Any]) -> None:
    assert seen["bundle"] == ["vector", "margin"]
    assert seen["onnx"]["file"] == "model.onnx" and seen["onnx"]["max_abs_diff"] < 1e-4
    assert seen["model_row"] == ["vector", "margin", ["red", "green", "blue"]]
    assert seen["rest_answers"] == 20 and seen["rest_matches_bundle"] and seen["rest_summary_is_the_kinds"]
    assert seen["rest_first"]["filename"] == "points.vec" and seen["rest_first"]["sample"] == 1
    assert seen["rest_correct"] >= 19
    assert seen["bad_file"] == [400, "bad.vec: vector 1 is not a list of 8 numbers"]


def test_the_exported_scripts_train_as_the_engine_does(seen: dict[str, Any]) -> None:
    for name, accuracy in (
        ("script_both", seen["test_accuracy"]),
        ("script_classifier", seen["classifier_accuracy"]),
        ("script_waves", seen["waves_accuracy"]),
    ):
        script = seen[name]
        assert script["weights"], name
        assert script["test_line"] is not None, name
        printed = float(script["test_line"].split()[2])
        assert printed == pytest.approx(accuracy, abs=1e-4), name  # the same run, step for step

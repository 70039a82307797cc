"""Read-only views the web UI needs after training: a task's report.json (per-class scores and the
confusion matrix) and a model's model.json (the preprocessing a browser repeats)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from dragdl.db.models import Model, Task, TaskStatus
from dragdl.server.settings import Settings

from ..graphs import chain


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


def digits_graph() -> dict[str, Any]:
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("norm", "op.Normalize", {"preset": "dataset"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 1, "batch_size": 128, "seed": 0, "device": "cpu"}),
    ]
    return chain("Digits", nodes)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter

    root = tmp_path_factory.mktemp("run")
    result = run_graph(
        digits_graph(), DataContext(data_dir=root, allow_download=False), root / "out", ListReporter()
    )
    assert result.status == "succeeded"
    return root / "out"


@pytest.fixture
def finished(
    run_dir: Path, settings: Settings, user_client: TestClient, db_session: Session
) -> tuple[str, str]:
    """A succeeded task of alice's and its model, registered the way the runner does it."""
    owner = user_client.user["id"]  # type: ignore[attr-defined]
    task = Task(owner_id=owner, name="digits", graph_snapshot=digits_graph(), status=TaskStatus.SUCCEEDED)
    db_session.add(task)
    db_session.flush()
    shutil.copytree(run_dir, settings.artifacts_dir / task.id)
    model = Model(owner_id=owner, task_id=task.id, name="digits", path=f"artifacts/{task.id}", classes=[])
    db_session.add(model)
    db_session.commit()
    return task.id, model.id


def test_a_finished_task_serves_its_report(
    user_client: TestClient, other_client: TestClient, finished: tuple[str, str]
) -> None:
    task_id, _ = finished
    response = user_client.get(f"/api/tasks/{task_id}/report")
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["classes"] == [str(d) for d in range(10)]
    matrix = report["confusion_matrix"]
    assert len(matrix) == 10 and all(len(row) == 10 for row in matrix)
    assert sum(map(sum, matrix)) > 0
    assert [row["class"] for row in report["per_class"]] == report["classes"]
    assert {"precision", "recall", "f1"} <= set(report["per_class"][0])
    assert other_client.get(f"/api/tasks/{task_id}/report").status_code == 404


def test_a_task_without_a_report_says_so(
    user_client: TestClient, finished: tuple[str, str], settings: Settings
) -> None:
    task_id, _ = finished
    (settings.artifacts_dir / task_id / "report.json").unlink()
    response = user_client.get(f"/api/tasks/{task_id}/report")
    assert response.status_code == 404 and "no report yet" in response.json()["detail"]


def test_a_model_serves_its_manifest_with_browser_preprocessing(
    user_client: TestClient, other_client: TestClient, finished: tuple[str, str]
) -> None:
    _, model_id = finished
    response = user_client.get(f"/api/models/{model_id}/manifest")
    assert response.status_code == 200, response.text
    manifest = response.json()
    assert manifest["format"] == "dragdl.bundle" and manifest["classes"] == [str(d) for d in range(10)]
    pre = manifest["preprocessing"]
    assert pre["channels"] == 1 and pre["size"] == [8, 8] and pre["portable"] is True
    assert [step["op"] for step in pre["steps"]] == ["to_float", "normalize"]
    assert len(pre["mean"]) == 1 and len(pre["std"]) == 1
    assert other_client.get(f"/api/models/{model_id}/manifest").status_code == 404

"""A regression task trained through the server on an uploaded table, on a real local Ray and both
databases: the CSV uploaded as a dataset, a `dataset.table` graph submitted, the task's metrics and
the model's detail (task, input columns, target, regression metrics), then predictions of its rows
as JSON and as a CSV upload.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from ..graphs import chain
from ..runner.support import kill_task_workers, start_shared_ray
from .test_tasks import FINAL, submit, wait_status


@pytest.fixture(scope="module", autouse=True)
def ray_cluster(request: pytest.FixtureRequest) -> None:
    if start_shared_ray():
        import ray

        request.config.add_cleanup(ray.shutdown)


@pytest.fixture(autouse=True)
def no_workers_left(ray_cluster: None) -> Iterator[None]:
    yield
    kill_task_workers()


def diabetes_csv() -> tuple[bytes, list[dict[str, Any]], list[float]]:
    """scikit-learn's diabetes table as CSV (the target last), its feature rows and targets."""
    from sklearn.datasets import load_diabetes

    data = load_diabetes()
    names = [str(n) for n in data.feature_names]
    lines = [",".join([*names, "progression"])]
    rows = []
    for features, target in zip(data.data, data.target, strict=True):
        lines.append(",".join([*(repr(float(v)) for v in features), repr(float(target))]))
        rows.append(dict(zip(names, (float(v) for v in features), strict=True)))
    return ("\n".join(lines) + "\n").encode(), rows, [float(t) for t in data.target]


def test_a_regression_trained_on_an_uploaded_table_serves_its_rows(user_client: TestClient) -> None:
    table, rows, targets = diabetes_csv()
    upload = user_client.post("/api/datasets", files=[("files", ("diabetes.csv", table, "text/csv"))])
    assert upload.status_code == 201, upload.text
    dataset = upload.json()
    assert dataset["kind"] == "table" and dataset["count"] == 442 and len(dataset["columns"]) == 11
    graph = chain(
        "Diabetes",
        [
            ("data", dataset["node"]["type"], {**dataset["node"]["params"], "target": "progression"}),
            ("std", "op.Standardize", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            (
                "train",
                "train.Regressor",
                # The target is learned standardized: an ordinary learning rate, as in the template.
                {"epochs": 40, "batch_size": 32, "lr": 0.05, "seed": 0, "device": "cpu"},
            ),
        ],
    )
    created = submit(user_client, graph, name="diabetes")
    assert created["config"]["loss"] == "mse"  # the regressor's settings, defaults filled in
    done = wait_status(user_client, created["id"], FINAL)
    assert done["status"] == "SUCCEEDED", done["error"]
    best = done["best_metrics"]
    assert {"test_mae", "test_rmse", "test_r2", "val_r2"} <= set(best)
    assert best["test_r2"] > 0.38  # the bar for linear regression on diabetes
    epochs = user_client.get(f"/api/tasks/{created['id']}/metrics", params={"scope": "epoch"}).json()["data"]
    assert best["val_mae"] == min(p["values"]["val_mae"] for p in epochs)  # lower is better
    assert best["val_r2"] == max(p["values"]["val_r2"] for p in epochs)
    report = user_client.get(f"/api/tasks/{created['id']}/report").json()
    assert report["task"] == "regression" and report["scatter"]["total"] > 0

    (model,) = user_client.get("/api/models").json()["data"]
    assert model["task_id"] == created["id"] and model["task"] == "regression"
    assert model["target"] == "progression" and model["classes"] == []
    assert [c["name"] for c in model["input_columns"]] == list(rows[0])
    assert model["metrics"]["test"]["test_r2"] == pytest.approx(best["test_r2"])

    answered = user_client.post(f"/api/models/{model['id']}/predict/rows", json={"rows": rows[:200]})
    assert answered.status_code == 200, answered.text
    values = [p["value"] for p in answered.json()["predictions"]]
    assert np.corrcoef(values, targets[:200])[0, 1] > 0.5
    uploaded = user_client.post(
        f"/api/models/{model['id']}/predict/rows", files=[("file", ("diabetes.csv", table, "text/csv"))]
    )
    assert uploaded.status_code == 200, uploaded.text
    by_csv = [p["value"] for p in uploaded.json()["predictions"]]
    assert len(by_csv) == 442 and np.allclose(by_csv[:200], values, rtol=1e-5)

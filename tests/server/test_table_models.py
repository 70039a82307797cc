"""Table models on the server: their detail (task, input columns, target), `POST /predict/rows` with
JSON rows and with a CSV upload, answers equal to the bundle's own, bad values named by row and
column, image models refused with 422, another user's model 404.

The bundles are trained once for the module on scikit-learn's iris (classification) and diabetes
(regression) tables and registered with the fields the runner stores (`worker.model_fields`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from dragdl.db.models import Model
from dragdl.runner.worker import model_fields
from dragdl.server.settings import Settings

from ..graphs import chain


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """SQLite only: prediction does not depend on the database engine (test_tasks trains on both)."""
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


def table_graph(source: str, train: str, epochs: int, impute: bool = False) -> dict[str, Any]:
    nodes = [
        ("data", "dataset.table", {"source": source}),
        *([("fill", "op.Impute", {"strategy": "mean"})] if impute else []),
        ("std", "op.Standardize", {}),
        ("fc", "layer.Linear", {"out_features": "auto"}),
        ("train", train, {"epochs": epochs, "batch_size": 16, "lr": 0.05, "seed": 0, "device": "cpu"}),
    ]
    return chain(source, nodes)


def train(root: Path, graph: dict[str, Any]) -> Path:
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter

    out = root / "run"
    result = run_graph(graph, DataContext(data_dir=root, allow_download=False), out, ListReporter())
    assert result.status == "succeeded"
    return out


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {
        "iris": train(tmp_path_factory.mktemp("iris"), table_graph("iris", "train.Classifier", 10)),
        "diabetes": train(
            tmp_path_factory.mktemp("diabetes"), table_graph("diabetes", "train.Regressor", 10)
        ),
        "diabetes_filled": train(
            tmp_path_factory.mktemp("filled"), table_graph("diabetes", "train.Regressor", 2, impute=True)
        ),
    }


def register(settings: Settings, db: Session, owner: int, bundle: Path, name: str) -> str:
    """The bundle as the runner leaves it: a folder under artifacts/ and a row with its fields."""
    folder = settings.artifacts_dir / f"task-{name}"
    shutil.copytree(bundle, folder)
    row = Model(owner_id=owner, name=name, path=f"artifacts/task-{name}", **model_fields(folder))
    db.add(row)
    db.commit()
    return row.id


@pytest.fixture
def models(
    bundles: dict[str, Path], settings: Settings, user_client: TestClient, db_session: Session
) -> dict[str, str]:
    owner = user_client.user["id"]  # type: ignore[attr-defined]
    return {name: register(settings, db_session, owner, path, name) for name, path in bundles.items()}


def table_rows(name: str, count: int) -> tuple[list[dict[str, Any]], list[Any]]:
    """The first `count` rows of a built-in table as {column: value}, and their targets."""
    from dragdl.engine.data.tables import builtin_table

    table, target = builtin_table(name)
    rows = [
        {column: table.columns[column][i] for column in table.names if column != target} for i in range(count)
    ]
    return [{k: (float(v) if isinstance(v, np.floating) else v) for k, v in row.items()} for row in rows], [
        table.columns[target][i] for i in range(count)
    ]


def as_csv(rows: list[dict[str, Any]]) -> bytes:
    names = list(rows[0])
    lines = [",".join(f'"{n}"' for n in names)] + [",".join(str(row[n]) for n in names) for row in rows]
    return ("\n".join(lines) + "\n").encode()


def rows_of(client: TestClient, model_id: str, rows: list[dict[str, Any]], **params: Any) -> Any:
    return client.post(f"/api/models/{model_id}/predict/rows", json={"rows": rows}, params=params)


def csv_of(client: TestClient, model_id: str, data: bytes, name: str = "rows.csv") -> Any:
    return client.post(f"/api/models/{model_id}/predict/rows", files=[("file", (name, data, "text/csv"))])


def test_the_detail_of_a_table_model_shows_its_task_and_columns(
    user_client: TestClient, models: dict[str, str]
) -> None:
    iris = user_client.get(f"/api/models/{models['iris']}").json()
    assert iris["task"] == "classification" and iris["target"] == "species"
    # The input type picks the web UI's prediction page: the dataset node's (worker.model_input_type).
    assert iris["input_type"] == "table"
    assert iris["classes"] == ["setosa", "versicolor", "virginica"]
    assert [c["name"] for c in iris["input_columns"]] == [
        "sepal length (cm)",
        "sepal width (cm)",
        "petal length (cm)",
        "petal width (cm)",
    ]
    assert {c["kind"] for c in iris["input_columns"]} == {"number"}
    assert iris["metrics"]["test"]["test_accuracy"] > 0.8
    diabetes = user_client.get(f"/api/models/{models['diabetes']}").json()
    assert diabetes["task"] == "regression" and diabetes["target"] == "progression"
    assert diabetes["classes"] == [] and len(diabetes["input_columns"]) == 10
    assert set(diabetes["metrics"]["test"]) == {"test_loss", "test_mae", "test_rmse", "test_r2"}
    listed = {m["id"]: m for m in user_client.get("/api/models").json()["data"]}
    assert listed[models["diabetes"]]["task"] == "regression"


def test_json_rows_are_answered_as_the_bundle_answers_them(
    user_client: TestClient, models: dict[str, str], bundles: dict[str, Path]
) -> None:
    from dragdl.engine.bundle import load_bundle

    rows, species = table_rows("iris", 150)
    response = rows_of(user_client, models["iris"], rows, top_k=2)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["model_id"] == models["iris"] and body["task"] == "classification"
    assert body["target"] == "species" and body["classes"] == ["setosa", "versicolor", "virginica"]
    expected = load_bundle(bundles["iris"]).predict_rows(rows, 2)
    assert [p["label"] for p in body["predictions"]] == [e["label"] for e in expected]
    assert np.allclose(
        [p["probabilities"] for p in body["predictions"]], [e["probabilities"] for e in expected], atol=1e-6
    )
    assert all(len(p["top_k"]) == 2 for p in body["predictions"])
    right = sum(p["label"] == s for p, s in zip(body["predictions"], species, strict=True))
    assert right / len(rows) > 0.8  # a trained model: far above the 1/3 of guessing

    rows, values = table_rows("diabetes", 40)
    response = rows_of(user_client, models["diabetes"], rows)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["task"] == "regression" and body["classes"] == [] and body["target"] == "progression"
    assert [set(p) for p in body["predictions"]] == [{"value"}] * 40
    got = np.array([p["value"] for p in body["predictions"]])
    want = [e["value"] for e in load_bundle(bundles["diabetes"]).predict_rows(rows)]
    assert np.allclose(got, want, rtol=1e-5)
    assert np.corrcoef(got, values)[0, 1] > 0.3  # tracks the target


def test_a_csv_upload_gets_the_same_answers_as_its_rows(
    user_client: TestClient, models: dict[str, str]
) -> None:
    rows, _ = table_rows("diabetes", 25)
    by_json = rows_of(user_client, models["diabetes"], rows).json()["predictions"]
    # The target and an id column come along; they are ignored.
    extra = [{"id": i, **row, "progression": 1.0} for i, row in enumerate(rows)]
    response = csv_of(user_client, models["diabetes"], as_csv(extra))
    assert response.status_code == 200, response.text
    by_csv = response.json()["predictions"]
    assert np.allclose([p["value"] for p in by_csv], [p["value"] for p in by_json], rtol=1e-6)
    tsv = as_csv(rows).decode().replace(",", "\t").encode()
    response = csv_of(user_client, models["diabetes"], tsv, "rows.tsv")
    assert response.status_code == 200, response.text
    assert np.allclose([p["value"] for p in response.json()["predictions"]], [p["value"] for p in by_json])


def test_a_semicolon_csv_batch_is_read_by_its_columns(
    user_client: TestClient, models: dict[str, str]
) -> None:
    rows, _ = table_rows("diabetes", 10)
    by_json = rows_of(user_client, models["diabetes"], rows).json()["predictions"]
    # Excel's European CSV: ';'-separated, decimal commas, a byte-order mark, CRLF line ends.
    data = b"\xef\xbb\xbf" + as_csv(rows).replace(b",", b";").replace(b".", b",").replace(b"\n", b"\r\n")
    response = csv_of(user_client, models["diabetes"], data)
    assert response.status_code == 200, response.text
    assert np.allclose([p["value"] for p in response.json()["predictions"]], [p["value"] for p in by_json])


def test_bad_rows_are_named_by_row_and_column(user_client: TestClient, models: dict[str, str]) -> None:
    rows, _ = table_rows("iris", 3)
    rows[1]["petal width (cm)"] = "wide"
    response = rows_of(user_client, models["iris"], rows)
    assert response.status_code == 400
    assert "row 2, column 'petal width (cm)': 'wide' is not a number" in response.json()["detail"]

    good, _ = table_rows("iris", 3)
    data = as_csv(good).decode().splitlines()
    data[3] = data[3].replace(data[3].split(",")[0], "abc", 1)
    response = csv_of(user_client, models["iris"], ("\n".join(data) + "\n").encode(), "flowers.csv")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("flowers.csv: row 3, column 'sepal length (cm)'")

    cases = {
        b"\x00\x01binary": "flowers.csv: not a text table",
        b"": "flowers.csv: no header row",
        b"sepal length (cm),petal length (cm)\n1,2\n": "flowers.csv: no column 'sepal width (cm)'",
        as_csv(good).splitlines()[0] + b"\n": "flowers.csv: no data rows",
        as_csv(good) + b"1,2\n": "flowers.csv: row 4 has 2 fields, the header 4",
    }
    for data_bytes, message in cases.items():
        response = csv_of(user_client, models["iris"], data_bytes, "flowers.csv")
        assert response.status_code == 400 and message in response.json()["detail"], (message, response.text)
    image = csv_of(user_client, models["iris"], b"fake", "flowers.png")
    assert image.status_code == 400 and "send the rows as a .csv or .tsv file" in image.json()["detail"]


def test_the_body_is_checked_before_anything_is_predicted(
    user_client: TestClient, models: dict[str, str]
) -> None:
    url = f"/api/models/{models['iris']}/predict/rows"
    assert user_client.post(url, json={"rows": []}).status_code == 422
    assert user_client.post(url, json={"rows": [{"a": 1}] * 1001}).status_code == 422
    assert user_client.post(url, json={"rows": [{"a": [1, 2]}]}).status_code == 422
    assert user_client.post(url, json={"rows": [{}], "extra": 1}).status_code == 422
    assert (
        user_client.post(url, content=b"{not json", headers={"content-type": "application/json"}).status_code
        == 422
    )
    assert user_client.post(url, content=b"a,b", headers={"content-type": "text/csv"}).status_code == 415
    two = [("file", ("a.csv", b"x\n1\n", "text/csv")), ("file", ("b.csv", b"x\n1\n", "text/csv"))]
    assert user_client.post(url, files=two).status_code == 400


def test_a_value_far_out_of_range_is_named_not_a_server_error(
    user_client: TestClient, models: dict[str, str]
) -> None:
    import json

    rows, _ = table_rows("diabetes", 3)
    # 1e999 is infinity to a JSON parser: the body cannot be written with json.dumps.
    body = json.dumps({"rows": [{**rows[0], "bmi": "BIG"}]}).replace('"BIG"', "1e999")
    response = user_client.post(
        f"/api/models/{models['diabetes']}/predict/rows",
        content=body.encode(),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert "row 1" in response.json()["detail"]
    rows[2]["bmi"] = 1e308
    response = rows_of(user_client, models["diabetes"], rows)
    assert response.status_code == 400, response.text
    assert "row 3: the model's answer is not a finite number" in response.json()["detail"]


def test_rows_may_leave_values_missing_only_where_the_model_can_fill_them(
    user_client: TestClient, models: dict[str, str]
) -> None:
    rows, _ = table_rows("iris", 2)
    del rows[0]["sepal width (cm)"]
    response = rows_of(user_client, models["iris"], rows)
    # No Impute node in the graph: a missing number cannot reach the network.
    assert response.status_code == 400, response.text
    assert "sepal width (cm)" in response.json()["detail"]


def test_na_cells_are_missing_values_in_json_rows_and_in_a_csv_batch(
    user_client: TestClient, models: dict[str, str]
) -> None:
    # Issue 19: training read "NA" as missing, but both routes refused it: "'NA' is not a number".
    rows, _ = table_rows("diabetes", 3)
    blank = [{**row, "bmi": None} for row in rows]
    blank[1]["bp"] = None
    marked = [{**row, "bmi": "NA"} for row in rows]
    marked[1]["bp"] = "n/a"
    expected = rows_of(user_client, models["diabetes_filled"], blank)
    assert expected.status_code == 200, expected.text
    by_json = rows_of(user_client, models["diabetes_filled"], marked)
    assert by_json.status_code == 200, by_json.text
    by_csv = csv_of(user_client, models["diabetes_filled"], as_csv(marked))
    assert by_csv.status_code == 200, by_csv.text
    want = [p["value"] for p in expected.json()["predictions"]]
    assert np.allclose([p["value"] for p in by_json.json()["predictions"]], want)
    assert np.allclose([p["value"] for p in by_csv.json()["predictions"]], want)


def test_other_users_and_image_models(
    user_client: TestClient, other_client: TestClient, models: dict[str, str]
) -> None:
    rows, _ = table_rows("iris", 1)
    assert rows_of(other_client, models["iris"], rows).status_code == 404
    assert csv_of(other_client, models["iris"], as_csv(rows)).status_code == 404
    assert rows_of(user_client, "nope", rows).status_code == 404
    from .hostile.corpus import png

    images = user_client.post(
        f"/api/models/{models['iris']}/predict", files=[("images", ("a.png", png(), "image/png"))]
    )
    assert images.status_code == 422 and "send rows to /predict/rows" in images.json()["detail"]


def test_uploads_are_capped_before_they_are_read(
    user_client: TestClient, models: dict[str, str], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragdl.server.request_limits import MAX_ROWS_BODY_BYTES, BodyLimitMiddleware, upload_limits
    from dragdl.server.routes import models as routes

    middleware = BodyLimitMiddleware(None, settings.max_body_bytes, upload_limits(settings))  # type: ignore[arg-type]
    assert middleware.limit_for("POST", f"/api/models/{models['iris']}/predict/rows") == MAX_ROWS_BODY_BYTES
    monkeypatch.setattr(routes, "MAX_CSV_BYTES", 100)
    rows, _ = table_rows("iris", 10)
    response = csv_of(user_client, models["iris"], as_csv(rows), "many.csv")
    assert response.status_code == 413 and "limit of 100 bytes" in response.json()["detail"]
    assert "many.csv" in response.json()["detail"]


def test_downloads_of_a_table_model(user_client: TestClient, models: dict[str, str]) -> None:
    url = f"/api/models/{models['diabetes']}/download"
    bundle = user_client.get(url)
    assert bundle.status_code == 200 and bundle.headers["content-type"] == "application/zip"
    onnx = user_client.get(url, params={"format": "onnx"})
    assert onnx.status_code == 200, onnx.text
    assert onnx.content[:1] == b"\x08"  # a protobuf ModelProto starts with its ir_version field
    # The training script of a table regressor: it reads the table and fits its operators itself.
    script = user_client.get(url, params={"format": "script"})
    assert script.status_code == 200, script.text
    assert "load_diabetes" in script.text and "R²" in script.text
    code = user_client.post("/api/graphs/code", json=table_graph("diabetes", "train.Regressor", 1))
    assert code.status_code == 200, code.text

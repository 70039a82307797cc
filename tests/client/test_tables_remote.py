"""The SDK with table models against a real `dragdl serve`: a table uploaded with `upload_dataset`,
trained on the server, its model's columns, `predict_rows` and `predict_csv` (answers equal to each
other, bad values raising ApiError naming the row and column), and `dragdl predict --server` telling
a table model from an image one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dragdl.client import ApiError, DragDLClient

from ..graphs import chain
from .conftest import Cli


def iris_rows() -> tuple[list[str], list[dict[str, Any]], list[str]]:
    from sklearn.datasets import load_iris

    iris = load_iris()
    names = [str(n) for n in iris.feature_names]
    rows = [dict(zip(names, (float(v) for v in row), strict=True)) for row in iris.data]
    return names, rows, [str(iris.target_names[t]) for t in iris.target]


def write_csv(path: Path, names: list[str], rows: list[dict[str, Any]], extra: dict[str, list[str]]) -> Path:
    header = [*names, *extra]
    lines = [",".join(header)]
    for i, row in enumerate(rows):
        lines.append(",".join([*(repr(row[n]) for n in names), *(values[i] for values in extra.values())]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def table_model(server_url: str, token: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Iris uploaded as a CSV, classified by a linear model trained on the server, once for the module."""
    root = tmp_path_factory.mktemp("iris")
    names, rows, species = iris_rows()
    table = write_csv(root / "iris.csv", names, rows, {"species": species})
    with DragDLClient(server_url, token=token) as client:
        dataset = client.upload_dataset(table)
        train = {"epochs": 20, "batch_size": 16, "lr": 0.05, "seed": 0, "device": "cpu"}
        graph = chain(
            "Iris",
            [
                ("data", "dataset.table", {"source": "uploaded", "dataset_id": dataset.id}),
                ("std", "op.Standardize", {}),
                ("fc", "layer.Linear", {"out_features": "auto"}),
                ("train", "train.Classifier", train),
            ],
        )
        task = client.wait(client.submit(graph, name="iris table").id)
        assert task.status == "SUCCEEDED", task.error
        model = next(m for m in client.list_models() if m.task_id == task.id)
    return {
        "dataset": dataset,
        "model": model,
        "names": names,
        "rows": rows,
        "species": species,
        "root": root,
    }


def test_an_uploaded_table_and_its_model_describe_their_columns(table_model: dict[str, Any]) -> None:
    dataset, model = table_model["dataset"], table_model["model"]
    assert dataset.kind == "table" and dataset.count == 150
    assert dataset.columns is not None and [c.name for c in dataset.columns][-1] == "species"
    assert dataset.node["type"] == "dataset.table"
    assert model.task == "classification" and model.target == "species"
    assert model.input_columns is not None
    assert [c.name for c in model.input_columns] == table_model["names"]
    assert model.classes == ["setosa", "versicolor", "virginica"]


def test_predict_rows_and_predict_csv_agree(server_url: str, token: str, table_model: dict[str, Any]) -> None:
    model, rows = table_model["model"], table_model["rows"]
    with DragDLClient(server_url, token=token) as client:
        by_rows = client.predict_rows(model.id, rows)
        table = write_csv(table_model["root"] / "rows.csv", table_model["names"], rows, {})
        by_csv = client.predict_csv(model.id, table)
    assert by_rows.task == "classification" and by_rows.target == "species"
    labels = [p.label for p in by_rows.predictions]
    assert labels == [p.label for p in by_csv.predictions]
    assert sum(a == b for a, b in zip(labels, table_model["species"], strict=True)) / 150 > 0.85
    assert all(p.probability is not None and len(p.top_k) == 3 for p in by_rows.predictions)


def test_bad_rows_raise_api_errors_naming_the_row(
    server_url: str, token: str, table_model: dict[str, Any], tmp_path: Path
) -> None:
    model, rows = table_model["model"], [dict(r) for r in table_model["rows"][:3]]
    rows[2]["sepal width (cm)"] = "narrow"
    with DragDLClient(server_url, token=token) as client:
        with pytest.raises(ApiError) as bad:
            client.predict_rows(model.id, rows)
        assert bad.value.status == 400 and "row 3, column 'sepal width (cm)'" in bad.value.message
        with pytest.raises(ApiError) as missing:
            client.predict_csv(model.id, tmp_path / "nope.csv")
        assert missing.value.status is None and "nope.csv: cannot read the table" in missing.value.message
        with pytest.raises(ApiError) as unknown:
            client.predict_rows("no-such-model", rows)
        assert unknown.value.status == 404


def test_predict_server_refuses_images_for_a_table_model(
    cli: Cli, home: Path, server_url: str, table_model: dict[str, Any], tmp_path: Path
) -> None:
    from PIL import Image

    image = tmp_path / "a.png"
    Image.new("L", (8, 8)).save(image)
    result = cli("predict", "--server", server_url, table_model["model"].id, str(image), home=home)
    assert result.exit_code == 1 and "takes table rows, not images" in result.output

"""The datasets API: uploads of each format with their preview, hostile uploads refused without a
trace, owner scoping, deletion, and the `dataset.uploaded` node reading what was stored."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import select
from sqlalchemy.orm import Session

from dragdl.db.models import Dataset, Task, TaskStatus, User
from dragdl.engine.inputs import table_upload
from dragdl.server.services import datasets as service
from dragdl.server.services.cpu_pool import CpuPool
from dragdl.server.settings import Settings

from ..graphs import chain
from .hostile.corpus import Part, bitmaps, hostile_cases, make_zip, png


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """SQLite only: nothing here depends on the database engine, and the tests stay quick."""
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


def upload(client: TestClient, files: list[Part], name: str | None = None) -> Any:
    return client.post(
        "/api/datasets",
        files=[("files", (filename, data)) for filename, data in files],
        data={"name": name} if name else None,
    )


def created(response: Any) -> dict[str, Any]:
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def jpeg(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="JPEG")
    return out.getvalue()


def folder_zip() -> bytes:
    """A zipped folder (one top-level folder) of two classes, mixed sizes and modes, macOS litter."""
    return make_zip(
        {
            "pets/cat/a.png": png(300, 200, mode="RGB"),
            "pets/cat/b.png": png(100, 50),
            "pets/dog/c.jpg": jpeg(64, 64),
            "pets/dog/sub/d.png": png(64, 64),
            "pets/dog/notes.txt": b"ignored",
            "__MACOSX/pets/._a.png": b"resource fork",
        }
    )


def nothing_left(client: TestClient, settings: Settings, db: Session) -> None:
    leftovers = list(settings.datasets_dir.iterdir()) if settings.datasets_dir.exists() else []
    assert leftovers == []
    assert db.scalars(select(Dataset)).all() == []
    assert client.get("/api/datasets").json()["count"] == 0


def thumbnail(client: TestClient, url: str) -> Image.Image:
    response = client.get(url)
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    return Image.open(io.BytesIO(response.content))


def test_folder_zip_upload_is_described_and_previewed(user_client: TestClient, settings: Settings) -> None:
    body = created(upload(user_client, [("pets.zip", folder_zip())], name="Pets"))
    assert body["name"] == "Pets" and body["kind"] == "folder"
    assert [(c["name"], c["count"]) for c in body["classes"]] == [("cat", 2), ("dog", 2)]
    assert body["count"] == 4 and body["channels"] == 3 and body["size"] is None
    assert body["size_stats"] == {"min": [50, 64], "max": [200, 300], "mean": [94.5, 132.0]}
    assert body["node"] == {"type": "dataset.uploaded", "params": {"dataset_id": body["id"]}}
    stored = settings.datasets_dir / body["id"] / "data"
    assert sorted(p.name for p in stored.iterdir()) == ["cat", "dog"]
    assert not (settings.datasets_dir / body["id"] / "incoming").exists()

    detail = user_client.get(f"/api/datasets/{body['id']}").json()
    cat = detail["classes"][0]
    assert len(cat["samples"]) == 2
    big = thumbnail(user_client, cat["samples"][0])
    assert big.size == (128, 85)
    assert thumbnail(user_client, cat["samples"][1]).size == (100, 50)
    assert (settings.datasets_dir / body["id"] / "thumbs" / "0-0.png").is_file()
    assert user_client.get(f"/api/datasets/{body['id']}/thumbnails/0/2").status_code == 404
    assert user_client.get(f"/api/datasets/{body['id']}/thumbnails/5/0").status_code == 404
    listed = user_client.get("/api/datasets").json()
    assert listed["count"] == 1 and listed["data"][0]["id"] == body["id"]


def test_csv_zip_upload(user_client: TestClient, settings: Settings) -> None:
    rows = "path,label\nimgs/1.png,circle\nimgs/2.png,square\nimgs/3.png,circle\n"
    archive = make_zip(
        {"train.csv": rows.encode(), **{f"imgs/{i}.png": png(20, 10, value=i) for i in (1, 2, 3)}}
    )
    body = created(upload(user_client, [("shapes.zip", archive)]))
    assert body["kind"] == "csv" and body["name"] == "shapes"
    assert [(c["name"], c["count"]) for c in body["classes"]] == [("circle", 2), ("square", 1)]
    assert body["size"] == [10, 20] and body["channels"] == 1
    assert (settings.datasets_dir / body["id"] / "data" / "labels.csv").is_file()
    detail = user_client.get(f"/api/datasets/{body['id']}").json()
    assert thumbnail(user_client, detail["classes"][1]["samples"][0]).size == (20, 10)


def test_npy_upload(user_client: TestClient) -> None:
    files = [("cat.npy", bitmaps(5, value=200)), ("dog.npy", bitmaps(3)), ("bird.npy", bitmaps(2))]
    body = created(upload(user_client, files))
    assert body["kind"] == "bitmaps"
    assert [(c["name"], c["count"]) for c in body["classes"]] == [("bird", 2), ("cat", 5), ("dog", 3)]
    assert body["size"] == [28, 28] and body["channels"] == 1
    detail = user_client.get(f"/api/datasets/{body['id']}").json()
    picture = thumbnail(user_client, detail["classes"][1]["samples"][4])
    assert picture.size == (28, 28) and picture.getpixel((3, 3)) == 200


def test_hostile_uploads_are_refused_without_a_trace(
    user_client: TestClient,
    app: FastAPI,
    settings: Settings,
    db_session: Session,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failures = []
    pool = app.state.cpu_pool
    for case in hostile_cases():
        with monkeypatch.context() as patch:
            for name, value in case.limits.items():
                patch.setattr(table_upload if hasattr(table_upload, name) else service, name, value)
            # Read in this process, where the patched limits apply (the pool's workers import afresh).
            app.state.cpu_pool = CpuPool(0) if case.limits else pool
            response = upload(user_client, case.files)
        app.state.cpu_pool = pool
        detail = response.json().get("detail", "") if response.status_code != 201 else ""
        if response.status_code != case.status or case.message not in str(detail):
            failures.append(f"{case.id}: {response.status_code} {detail!r}")
        assert str(settings.data_dir) not in str(detail), f"{case.id}: server path in {detail!r}"
        nothing_left(user_client, settings, db_session)
    assert failures == []


def test_upload_limits_and_request_shape(user_client: TestClient, app: FastAPI, settings: Settings) -> None:
    from dataclasses import replace

    app.state.settings = replace(settings, max_upload_bytes=1000)
    response = upload(user_client, [("cat.npy", bitmaps(10)), ("dog.npy", bitmaps(10))])
    assert response.status_code == 413 and "limit of 1000 bytes" in response.json()["detail"]
    app.state.settings = settings
    assert user_client.post("/api/datasets", json={"files": []}).status_code == 415
    assert upload(user_client, []).status_code in (400, 415)
    assert list(settings.datasets_dir.iterdir()) == []


def test_other_users_datasets_are_not_found(user_client: TestClient, other_client: TestClient) -> None:
    body = created(upload(user_client, [("cat.npy", bitmaps()), ("dog.npy", bitmaps())]))
    dataset_id = body["id"]
    for path in (f"/api/datasets/{dataset_id}", f"/api/datasets/{dataset_id}/thumbnails/0/0"):
        assert other_client.get(path).status_code == 404
    assert other_client.delete(f"/api/datasets/{dataset_id}").status_code == 404
    assert other_client.get("/api/datasets").json()["count"] == 0
    assert user_client.get(f"/api/datasets/{dataset_id}").status_code == 200


def test_delete_refuses_while_a_running_task_reads_the_dataset(
    user_client: TestClient, settings: Settings, db_session: Session
) -> None:
    dataset_id = created(upload(user_client, [("cat.npy", bitmaps()), ("dog.npy", bitmaps())]))["id"]
    graph = {"nodes": [{"id": "d", "type": "dataset.uploaded", "params": {"dataset_id": dataset_id}}]}
    task = Task(
        owner_id=user_client.user["id"],  # type: ignore[attr-defined]
        name="t",
        graph_snapshot=graph,
        status=TaskStatus.RUNNING,
    )
    db_session.add(task)
    db_session.commit()
    refused = user_client.delete(f"/api/datasets/{dataset_id}")
    assert refused.status_code == 409 and task.id in refused.json()["detail"]
    task.status = TaskStatus.SUCCEEDED
    db_session.commit()
    assert user_client.delete(f"/api/datasets/{dataset_id}").status_code == 204
    assert not (settings.datasets_dir / dataset_id).exists()
    assert user_client.get(f"/api/datasets/{dataset_id}").status_code == 404


def uploaded_graph(dataset_id: str) -> dict[str, Any]:
    nodes = [
        ("data", "dataset.uploaded", {"dataset_id": dataset_id}),
        ("resize", "op.Resize", {"height": 16}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 1}),
    ]
    return chain("Uploaded", nodes)


def test_unknown_dataset_id_is_a_validation_error(user_client: TestClient) -> None:
    response = user_client.post("/api/graphs/validate", json=uploaded_graph("0123456789abcdef"))
    body = response.json()
    errors = body.get("errors") or body.get("detail") or []
    assert any(
        e.get("node_id") == "data"
        and e.get("field") == "dataset_id"
        and e.get("message") == "dataset 0123456789abcdef not found"
        for e in errors
    ), body


@pytest.mark.parametrize("kind", ["folder", "csv", "bitmaps"])
def test_uploaded_node_reads_each_kind(
    kind: str, user_client: TestClient, settings: Settings, db_session: Session
) -> None:
    from dragdl.engine.analysis.validate import validate_graph
    from dragdl.engine.compile.codegen import generate_script
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.graph.spec import Graph
    from dragdl.engine.nodes.uploaded import UploadedDatasetNode, UploadedParams, inline_uploaded
    from dragdl.server.services.data_context import data_context_for

    files: dict[str, list[Part]] = {
        "folder": [("pets.zip", folder_zip())],
        "csv": [
            ("s.zip", make_zip({"l.csv": b"path,label\na.png,x\nb.png,y\n", "a.png": png(), "b.png": png()}))
        ],
        "bitmaps": [("cat.npy", bitmaps()), ("dog.npy", bitmaps(2))],
    }
    dataset_id = created(upload(user_client, files[kind]))["id"]
    user = db_session.get(User, user_client.user["id"])  # type: ignore[attr-defined]
    assert user is not None
    ctx = data_context_for(db_session, settings, user)
    graph = uploaded_graph(dataset_id)
    result = validate_graph(graph, ctx)
    assert result.ok, result.errors
    through_api = user_client.post("/api/graphs/validate", json=graph).json()
    assert through_api["ok"] is True and through_api["shapes"]["resize"] == result.shapes["resize"]
    source = UploadedDatasetNode().open(UploadedParams(dataset_id=dataset_id), ctx)
    assert len(source) == {"folder": 4, "csv": 2, "bitmaps": 6}[kind]
    assert source.image(0).ndim == 3

    inlined = inline_uploaded(Graph.model_validate(graph), ctx)
    assert inlined.node("data").type == f"dataset.{kind}"
    assert inlined.node("data").params["path"].startswith(f"datasets/{dataset_id}/data")
    for script in (generate_script(graph, ctx), generate_script(inlined, ctx)):
        compile(script, "train.py", "exec")  # a valid script; running it would train
    other = DataContext(data_dir=settings.data_dir, allow_download=False)
    refused = validate_graph(graph, other)
    assert [(e.field, e.message) for e in refused.errors] == [
        ("dataset_id", f"dataset {dataset_id} not found")
    ]


def test_uploaded_node_reports_reader_errors_on_its_field(tmp_path: Path) -> None:
    from dragdl.engine.data.base import DataContext, DatasetError, UploadedDataset
    from dragdl.engine.nodes.uploaded import UploadedDatasetNode, UploadedParams

    (tmp_path / "only").mkdir()
    np.save(tmp_path / "only" / "cat.npy", np.zeros((2, 784), dtype=np.uint8))
    ctx = DataContext(data_dir=tmp_path, uploaded={"x": UploadedDataset(kind="bitmaps", path=Path("only"))})
    with pytest.raises(DatasetError, match="need one per class") as raised:
        UploadedDatasetNode().describe(UploadedParams(dataset_id="x"), ctx)
    assert raised.value.field == "dataset_id"


# --- tables ---------------------------------------------------------------------------------------------


def iris_csv(separator: str = ",", blank_every: int = 0) -> bytes:
    """scikit-learn's iris as a table with the species names; every `blank_every`-th petal width empty."""
    from sklearn.datasets import load_iris

    iris = load_iris()
    lines = [separator.join([*iris.feature_names, "species"])]
    for i, (row, target) in enumerate(zip(iris.data, iris.target, strict=True)):
        cells = [f"{v:g}" for v in row]
        if blank_every and i % blank_every == 0:
            cells[3] = ""
        lines.append(separator.join([*cells, str(iris.target_names[target])]))
    return ("\n".join(lines) + "\n").encode()


def test_a_csv_table_upload_previews_its_columns(user_client: TestClient, settings: Settings) -> None:
    body = created(upload(user_client, [("iris.csv", iris_csv(blank_every=50))], name="Iris"))
    assert body["kind"] == "table" and body["name"] == "Iris" and body["count"] == 150
    assert body["channels"] == 0 and body["size"] is None and body["size_stats"] is None
    assert body["classes"] == []
    columns = {c["name"]: c for c in body["columns"]}
    assert list(columns)[-1] == "species" and len(columns) == 5
    assert columns["species"] == {
        "name": "species",
        "kind": "category",
        "missing": 0,
        "categories": ["setosa", "versicolor", "virginica"],
        "category_count": 3,
    }
    assert columns["petal width (cm)"]["kind"] == "number" and columns["petal width (cm)"]["missing"] == 3
    assert columns["sepal length (cm)"] == {
        "name": "sepal length (cm)",
        "kind": "number",
        "missing": 0,
        "categories": [],
        "category_count": 0,
    }
    node = {"type": "dataset.table", "params": {"source": "uploaded", "dataset_id": body["id"]}}
    assert body["node"] == node
    stored = settings.datasets_dir / body["id"] / "data" / "table.csv"
    assert stored.read_bytes() == iris_csv(blank_every=50)
    detail = user_client.get(f"/api/datasets/{body['id']}").json()
    assert detail["columns"] == body["columns"] and detail["classes"] == []
    assert user_client.get(f"/api/datasets/{body['id']}/thumbnails/0/0").status_code == 404


def test_tsv_and_parquet_tables_read_as_the_same_columns(user_client: TestClient) -> None:
    from .hostile.corpus import parquet

    tsv = created(upload(user_client, [("iris.tsv", iris_csv("\t"))]))
    csv_rows = iris_csv().decode().splitlines()
    names = csv_rows[0].split(",")
    cells = [line.split(",") for line in csv_rows[1:]]
    frame = {n: [float(c[i]) if i < 4 else c[i] for c in cells] for i, n in enumerate(names)}
    par = created(upload(user_client, [("iris.parquet", parquet(frame))]))
    assert tsv["name"] == "iris" and tsv["count"] == par["count"] == 150
    assert tsv["columns"] == par["columns"]
    assert [c["kind"] for c in par["columns"]] == ["number"] * 4 + ["category"]


def test_a_semicolon_csv_from_excel_previews_its_real_columns(user_client: TestClient) -> None:
    """Excel's CSV in many European locales: ';'-separated, with a byte-order mark and CRLF line
    ends. It is described by its five columns, not as one column named by the whole header line."""
    comma = created(upload(user_client, [("iris.csv", iris_csv())]))
    data = b"\xef\xbb\xbf" + iris_csv(";").replace(b"\n", b"\r\n")
    body = created(upload(user_client, [("iris.csv", data)]))
    assert body["kind"] == "table" and body["count"] == 150
    assert body["columns"] == comma["columns"]
    assert [c["kind"] for c in body["columns"]] == ["number"] * 4 + ["category"]


def xlsx_of(rows: list[list[object]]) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    book.create_sheet("other").append(["ignored"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_an_excel_workbook_is_stored_as_the_csv_of_its_first_sheet(
    user_client: TestClient, settings: Settings
) -> None:
    """An .xlsx is a zip: it was unpacked as images ('class folder '_rels' ... has no images')."""
    lines = [line.split(",") for line in iris_csv().decode().splitlines()]
    rows: list[list[object]] = [lines[0]] + [[*(float(v) for v in line[:4]), line[4]] for line in lines[1:]]
    rows[5][2] = None  # an empty cell is a missing value
    comma = created(upload(user_client, [("iris.csv", iris_csv())]))
    body = created(upload(user_client, [("iris.xlsx", xlsx_of(rows))]))
    assert body["kind"] == "table" and body["count"] == 150 and body["name"] == "iris"
    assert [c["name"] for c in body["columns"]] == [c["name"] for c in comma["columns"]]
    assert [c["kind"] for c in body["columns"]] == ["number"] * 4 + ["category"]
    assert body["columns"][2]["missing"] == 1 and body["columns"][4] == comma["columns"][4]
    stored = sorted(p.name for p in (settings.datasets_dir / body["id"] / "data").iterdir())
    assert stored == ["table.csv"]  # what training, prediction and the exported script read
    text = (settings.datasets_dir / body["id"] / "data" / "table.csv").read_text(encoding="utf-8")
    assert text.splitlines()[1] == "5.1,3.5,1.4,0.2,setosa"
    refused = upload(user_client, [("notes.xlsx", b"PK\x03\x04 not really a workbook")])
    assert refused.status_code == 415, refused.text
    assert "notes.xlsx: not an Excel workbook" in refused.json()["detail"]


def test_an_uploaded_table_counts_against_the_quota_and_is_private(
    user_client: TestClient, other_client: TestClient
) -> None:
    body = created(upload(user_client, [("iris.csv", iris_csv())]))
    assert body["size_bytes"] == len(iris_csv())
    assert other_client.get(f"/api/datasets/{body['id']}").status_code == 404
    assert other_client.delete(f"/api/datasets/{body['id']}").status_code == 404
    assert user_client.delete(f"/api/datasets/{body['id']}").status_code == 204


def test_delete_refuses_while_a_queued_task_reads_the_table(
    user_client: TestClient, settings: Settings, db_session: Session
) -> None:
    body = created(upload(user_client, [("iris.csv", iris_csv())]))
    task = Task(
        owner_id=user_client.user["id"],  # type: ignore[attr-defined]
        name="t",
        graph_snapshot={"nodes": [{"id": "d", **body["node"]}]},
        status=TaskStatus.QUEUED,
    )
    db_session.add(task)
    db_session.commit()
    refused = user_client.delete(f"/api/datasets/{body['id']}")
    assert refused.status_code == 409 and task.id in refused.json()["detail"]
    task.status = TaskStatus.STOPPED
    db_session.commit()
    assert user_client.delete(f"/api/datasets/{body['id']}").status_code == 204
    assert not (settings.datasets_dir / body["id"]).exists()


def test_an_uploaded_table_validates_in_a_graph_with_its_columns(
    user_client: TestClient, other_client: TestClient
) -> None:
    body = created(upload(user_client, [("iris.csv", iris_csv())]))
    graph = chain(
        "Iris",
        [
            ("data", body["node"]["type"], body["node"]["params"]),
            ("std", "op.Standardize", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1}),
        ],
    )
    result = user_client.post("/api/graphs/validate", json=graph).json()
    assert result["ok"], result["errors"]
    assert result["shapes"]["data"] == "4 features"  # the species column is the target
    # Another user's graph cannot read it: the id does not exist for them.
    other = other_client.post("/api/graphs/validate", json=graph).json()
    assert not other["ok"]
    assert [(e["node_id"], e["field"]) for e in other["errors"]] == [("data", "dataset_id")]


def test_a_table_whose_name_is_no_file_name_is_still_a_table(user_client: TestClient) -> None:
    """A lone table's name is not its data: one too long or hidden to be a file name is offered to the
    input types under a stand-in, and its messages keep the uploader's name."""
    long_name = "x" * 230 + ".csv"
    body = created(upload(user_client, [(long_name, b"a,b\n1,2\n3,4\n")]))
    assert (body["kind"], body["count"]) == ("table", 2)
    assert body["name"] == long_name[:200]
    refused = upload(user_client, [(".hidden.csv", b"a,b\n\x00\x01,3\n")])
    assert (
        refused.status_code == 400
        and refused.json()["detail"] == ".hidden.csv: not a text table (it holds binary data)"
    )

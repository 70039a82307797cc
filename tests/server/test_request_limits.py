"""Request size limits: every body is counted as it streams (declared length or chunks), the answer
names the limit, and the prediction route authenticates before it reads a byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dragdl.db.models import Model
from dragdl.server.request_limits import MAX_PREDICT_BODY_BYTES
from dragdl.server.services.models import BUNDLE_FILES
from dragdl.server.settings import Settings

from ..graphs import chain
from .asgi import StreamedRequest, stream

MiB = 1024**2
BOUNDARY = "limits-test-boundary"


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


def multipart_chunks(total: int, chunk: int = MiB) -> list[bytes]:
    """A well-formed multipart body of about `total` bytes: one image part of zeros."""
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="images"; filename="big.png"\r\n'
        "Content-Type: image/png\r\n\r\n"
    ).encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    return [head, *([b"\0" * chunk] * (total // chunk)), tail]


@pytest.fixture
def model_id(user_client: TestClient, app: FastAPI, settings: Settings) -> str:
    """A model row of alice's with placeholder bundle files: these tests never reach a forward pass."""
    folder = settings.artifacts_dir / "placeholder"
    folder.mkdir(parents=True)
    for name in BUNDLE_FILES:
        (folder / name).write_text("{}")
    with app.state.sessions() as db:
        row = Model(
            owner_id=user_client.user["id"],  # type: ignore[attr-defined]
            name="m",
            path="artifacts/placeholder",
            classes=["a", "b"],
            metrics={},
            input_spec={"channels": 1, "size": [8, 8]},
        )
        db.add(row)
        db.commit()
        return row.id


def test_an_anonymous_prediction_is_refused_before_its_body_is_read(
    client: TestClient, app: FastAPI, model_id: str
) -> None:
    request = StreamedRequest(
        "POST",
        f"/api/models/{model_id}/predict",
        {"content-type": f"multipart/form-data; boundary={BOUNDARY}"},
        multipart_chunks(16 * MiB),
    )
    stream(client, app, request)
    assert request.status == 401, request.answer
    assert request.read == 0


def test_another_users_model_is_not_found_before_the_body_is_read(
    client: TestClient, app: FastAPI, model_id: str, other_client: TestClient
) -> None:
    token = other_client.post("/api/auth/tokens", json={"name": "t"}).json()["token"]
    request = StreamedRequest(
        "POST",
        f"/api/models/{model_id}/predict",
        {"content-type": f"multipart/form-data; boundary={BOUNDARY}", "authorization": f"Bearer {token}"},
        multipart_chunks(16 * MiB),
    )
    stream(client, app, request)
    assert request.status == 404 and request.read == 0


def test_a_chunked_prediction_body_stops_at_the_route_limit(
    client: TestClient, app: FastAPI, model_id: str, user_client: TestClient
) -> None:
    token = user_client.post("/api/auth/tokens", json={"name": "t"}).json()["token"]
    request = StreamedRequest(
        "POST",
        f"/api/models/{model_id}/predict",
        {"content-type": f"multipart/form-data; boundary={BOUNDARY}", "authorization": f"Bearer {token}"},
        multipart_chunks(MAX_PREDICT_BODY_BYTES + 8 * MiB),
    )
    stream(client, app, request)
    assert request.status == 413
    assert f"limit of {MAX_PREDICT_BODY_BYTES} bytes" in json.loads(request.answer)["detail"]
    assert request.read <= MAX_PREDICT_BODY_BYTES + MiB


def test_prediction_form_fields_are_capped(user_client: TestClient, model_id: str) -> None:
    fields = {f"field{i}": "x" for i in range(50)}
    many = user_client.post(f"/api/models/{model_id}/predict", data=fields, files=[("images", b"x")])
    assert many.status_code == 400 and "fields" in many.json()["detail"].lower()
    long = user_client.post(
        f"/api/models/{model_id}/predict", data={"top_k": "1" * 100_000}, files=[("images", b"x")]
    )
    assert long.status_code == 400, long.text


def test_json_bodies_are_capped_with_the_limit_named(user_client: TestClient) -> None:
    graph = chain(
        "Big", [("data", "dataset.builtin", {"name": "digits", "pad": "x" * Settings.max_body_bytes})]
    )
    declared = user_client.post("/api/graphs", json={"graph": graph})
    assert declared.status_code == 413
    assert f"limit of {Settings.max_body_bytes} bytes for POST /api/graphs" in declared.json()["detail"]
    body = json.dumps({"graph": graph}).encode()
    chunked = user_client.post(
        "/api/graphs",
        content=(body[i : i + MiB] for i in range(0, len(body), MiB)),
        headers={"content-type": "application/json"},
    )
    assert chunked.status_code == 413
    assert user_client.get("/api/graphs").json()["count"] == 0


def test_a_chunked_json_body_is_counted_without_a_length(
    client: TestClient, app: FastAPI, user_client: TestClient
) -> None:
    token = user_client.post("/api/auth/tokens", json={"name": "t"}).json()["token"]
    request = StreamedRequest(
        "POST",
        "/api/graphs",
        {"content-type": "application/json", "authorization": f"Bearer {token}"},
        [b'{"graph": {"name": "' + b"x" * MiB] * 64,
    )
    stream(client, app, request)
    assert request.status == 413
    assert request.read <= Settings.max_body_bytes + MiB


def _bitmaps() -> bytes:
    import io

    import numpy as np

    buffer = io.BytesIO()
    np.save(buffer, np.zeros((4, 64), dtype=np.uint8))
    return buffer.getvalue()


def test_dataset_upload_text_fields_are_capped_in_count_and_total(
    user_client: TestClient, settings: Settings
) -> None:
    files = [("files", ("cat.npy", _bitmaps())), ("files", ("dog.npy", _bitmaps()))]
    many = user_client.post("/api/datasets", files=files, data={f"f{i}": "x" for i in range(100)})
    assert many.status_code == 400 and "too many form fields" in many.json()["detail"]
    bulky = user_client.post("/api/datasets", files=files, data={f"f{i}": "x" * 60_000 for i in range(10)})
    assert bulky.status_code == 400 and "form fields are longer than" in bulky.json()["detail"]
    assert not settings.datasets_dir.exists() or list(settings.datasets_dir.iterdir()) == []
    named = user_client.post("/api/datasets", files=files, data={"name": "pets"})
    assert named.status_code == 201, named.text


def test_graph_texts_and_size_are_capped_naming_the_node_and_limit(user_client: TestClient) -> None:
    from dragdl.server.services.graphs import MAX_GRAPH_BYTES, MAX_PARAM_TEXT

    formula = chain("Long", [("lambda", "op.Lambda", {"expression": "x" * (MAX_PARAM_TEXT + 1)})])
    long = user_client.post("/api/graphs", json={"graph": formula})
    assert long.status_code == 422, long.text
    [error] = long.json()["detail"]["errors"]
    assert error["code"] == "value_too_long" and error["node_id"] == "lambda"
    assert error["field"] == "params.expression" and str(MAX_PARAM_TEXT) in error["message"]
    nodes = [(f"n{i}", "op.Lambda", {"expression": "x" * 9000}) for i in range(150)]
    big = user_client.post("/api/graphs", json={"graph": chain("Big", nodes)})
    assert big.status_code == 422, big.text
    [error] = big.json()["detail"]["errors"]
    assert error["code"] == "graph_too_large" and f"limit of {MAX_GRAPH_BYTES}" in error["message"]
    assert user_client.get("/api/graphs").json()["count"] == 0

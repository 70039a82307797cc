"""Request size limits: every body is counted as it streams (declared length or chunks), the answer
names the limit, and the prediction route authenticates before it reads a byte."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

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


def empty_rows(total: int) -> bytes:
    """A JSON rows body of about `total` bytes of `{}` rows (issue 23 review's 5 million of them)."""
    return b'{"rows":[' + b",".join([b"{}"] * (total // 3)) + b"]}"


@pytest.fixture
def rows_model(model_id: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """alice's placeholder model, taken for a table model of columns a and b whose prediction is
    refused: these tests only look at how the body is read."""
    from types import SimpleNamespace

    from dragdl.server.services.prediction import PredictionInputError, PredictionService

    monkeypatch.setattr(
        PredictionService, "table_model", lambda self, key, folder: SimpleNamespace(columns=["a", "b"])
    )

    async def refuse(self: object, key: str, folder: Path, rows: list[object], *args: object) -> None:
        raise PredictionInputError(f"stub: {len(rows)} rows read")

    monkeypatch.setattr(PredictionService, "predict_rows", refuse)
    return model_id


def test_json_rows_get_the_json_cap_and_csv_rows_their_upload_cap(
    client: TestClient, app: FastAPI, rows_model: str, user_client: TestClient, settings: Settings
) -> None:
    from dragdl.server.request_limits import MAX_ROWS_BODY_BYTES, BodyLimitMiddleware, upload_limits

    path = f"/api/models/{rows_model}/predict/rows"
    middleware = BodyLimitMiddleware(None, settings.max_body_bytes, upload_limits(settings))  # type: ignore[arg-type]
    assert middleware.limit_for("POST", path, "application/json") == settings.max_body_bytes
    assert middleware.limit_for("POST", path, "multipart/form-data") == MAX_ROWS_BODY_BYTES
    token = user_client.post("/api/auth/tokens", json={"name": "t"}).json()["token"]
    body = empty_rows(5 * MiB)
    request = StreamedRequest(
        "POST",
        path,
        {
            "content-type": "application/json",
            "authorization": f"Bearer {token}",
            "content-length": str(len(body)),
        },
        [body[i : i + MiB] for i in range(0, len(body), MiB)],
    )
    stream(client, app, request)
    assert request.status == 413, request.answer
    assert f"limit of {settings.max_body_bytes} bytes" in json.loads(request.answer)["detail"]
    assert request.read == 0  # refused from its declared length, never parsed
    chunked = user_client.post(
        path,
        content=(body[i : i + MiB] for i in range(0, len(body), MiB)),
        headers={"content-type": "application/json"},
    )
    assert chunked.status_code == 413


def test_a_large_invalid_body_is_refused_with_a_short_answer(
    user_client: TestClient, rows_model: str, settings: Settings
) -> None:
    rows = user_client.post(
        f"/api/models/{rows_model}/predict/rows",
        content=empty_rows(settings.max_body_bytes - 1024),
        headers={"content-type": "application/json"},
    )
    assert rows.status_code == 422, rows.text[:300]
    assert len(rows.content) < 2_000, rows.text[:300]
    [problem] = rows.json()["detail"]
    assert (
        problem["loc"] == ["body", "rows"]
        and f"at most 1000 items, not {(settings.max_body_bytes - 1024) // 3}" in problem["msg"]
    )
    graph = b'{"graph":[' + b",".join([b"1"] * (settings.max_body_bytes // 2 - 1024)) + b"]}"
    task = user_client.post("/api/tasks", content=graph, headers={"content-type": "application/json"})
    assert task.status_code == 422, task.text[:300]
    assert len(task.content) < 2_000, task.text[:300]
    assert task.json()["detail"][0]["input"].startswith("[1, 1, 1")
    many = user_client.post(
        f"/api/models/{rows_model}/predict/rows",
        json={"rows": [{"a": [i]} for i in range(1000)]},
    )
    assert many.status_code == 422
    problems = many.json()["detail"]
    assert len(problems) == 21 and len(many.content) < 10_000
    assert problems[-1]["type"] == "too_many_problems" and problems[-1]["msg"].startswith("and ")


def test_json_rows_are_parsed_off_the_event_loop(
    user_client: TestClient, other_client: TestClient, rows_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragdl.server.routes import models as routes

    answered, parsed = threading.Event(), []
    real = routes._json_rows

    def parse_after_a_health_check(raw: bytes) -> object:
        # On the event loop this would wait for a health check that could not be answered.
        parsed.append(answered.wait(30))
        return real(raw)

    monkeypatch.setattr(routes, "_json_rows", parse_after_a_health_check)
    answers: dict[str, Any] = {}
    body = {"rows": [{"a": 1, "b": "x" * 3000} for _ in range(1000)]}
    sending = threading.Thread(
        target=lambda: answers.update(
            rows=user_client.post(f"/api/models/{rows_model}/predict/rows", json=body)
        )
    )
    sending.start()
    while sending.is_alive() and not answered.is_set():
        health = other_client.get("/api/health")
        assert health.status_code == 200, health.text
        answered.set()
    sending.join()
    assert parsed == [True]
    response = answers["rows"]
    assert response.status_code == 400 and "stub: 1000 rows read" in response.json()["detail"]

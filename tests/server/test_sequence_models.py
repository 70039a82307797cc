"""Sequence models over the real app: POST /predict takes .ts, .csv and .npy files and answers per
sample with the file's name and the sample's position, as the bundle does in-process; hostile files
(truncated, more series than a request takes, pickled, of other features) are a 400 naming the file
and line; rows are refused with 422; another user's model is a 404."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session
from tests.engine.data.sequence_samples import series_set, ts_text

from dragdl.db.models import Model
from dragdl.server.services.prediction import MAX_PREDICT_SAMPLES
from dragdl.server.settings import Settings

from ..graphs import chain
from ..servers import IdleRunner, serving
from .conftest import MakeClient


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


@pytest.fixture(scope="module")
def waves_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-D CNN on the built-in waves (64 steps, 3 classes), one epoch, trained once for the module."""
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter

    graph = chain(
        "waves CNN",
        [
            ("data", "dataset.sequence", {"name": "waves"}),
            ("std", "op.StandardizeFeatures", {}),
            ("conv", "layer.Conv1d", {"out_channels": 8, "kernel_size": 5}),
            ("pool", "layer.GlobalPoolTime", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1, "batch_size": 64, "lr": 0.02, "device": "cpu"}),
        ],
    )
    root = tmp_path_factory.mktemp("waves")
    result = run_graph(graph, DataContext(data_dir=root, allow_download=False), root / "run", ListReporter())
    assert result.status == "succeeded", result
    return root / "run"


@pytest.fixture
def model_id(waves_bundle: Path, settings: Settings, user_client: TestClient, db_session: Session) -> str:
    folder = settings.artifacts_dir / "task-1"
    shutil.copytree(waves_bundle, folder)
    row = Model(
        owner_id=user_client.user["id"],  # type: ignore[attr-defined]
        name="Waves",
        path="artifacts/task-1",
        classes=["sine", "square", "sawtooth"],
        metrics={"test": {"test_accuracy": 0.9}},
        input_spec={"network_input": [64, 1]},
    )
    db_session.add(row)
    db_session.commit()
    return row.id


def waves(count: int) -> list[np.ndarray]:
    from dragdl.engine.data.sequence_builtin import open_sequence_builtin

    source = open_sequence_builtin("waves", None)
    return [source.sequence(i) for i in range(count)]


def ts_bytes(series: list[np.ndarray]) -> bytes:
    classes = ["sine", "square", "sawtooth"]
    return ts_text(series, [classes[i % 3] for i in range(len(series))], classes).encode()


def predict(client: TestClient, model_id: str, files: list[tuple[str, bytes]]) -> Any:
    parts = [("files", (name, data, "application/octet-stream")) for name, data in files]
    return client.post(f"/api/models/{model_id}/predict", files=parts, data={"top_k": "2"})


def test_ts_csv_and_npy_files_answer_per_sample_as_the_bundle_does(
    user_client: TestClient, model_id: str, settings: Settings
) -> None:
    from dragdl.engine.bundle import load_bundle

    series = waves(7)
    npy = io.BytesIO()
    np.save(npy, np.stack(series[:2]))
    csv = "value\n" + "\n".join(str(float(v)) for v in series[6][:, 0]) + "\n"
    response = predict(
        user_client,
        model_id,
        [("five.ts", ts_bytes(series[:5])), ("two.npy", npy.getvalue()), ("one.csv", csv.encode())],
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["task"] == "classification" and body["classes"] == ["sine", "square", "sawtooth"]
    places = [(p["filename"], p["sample"]) for p in body["predictions"]]
    assert places == [*(("five.ts", i) for i in range(1, 6)), ("two.npy", 1), ("two.npy", 2), ("one.csv", 1)]
    bundle = load_bundle(settings.artifacts_dir / "task-1")
    expected = bundle.predict_samples(
        [
            *(bundle.decode_file("x.ts", ts_bytes(series[:5]))),
            *(bundle.decode_file("x.npy", npy.getvalue())),
            *bundle.decode_file("x.csv", csv.encode()),
        ],
        top_k=2,
    )
    for got, want in zip(body["predictions"], expected, strict=True):
        assert got["answer"]["label"] == want["label"] and len(got["answer"]["top_k"]) == 2
        assert np.allclose(got["answer"]["probabilities"], want["probabilities"], atol=1e-5)
        assert got["summary"] == bundle.task.summarize(want)


def test_a_ts_file_without_labels_is_predicted(user_client: TestClient, model_id: str) -> None:
    """Series to predict need not carry labels (`@classLabel false`): the answers are those of the
    same series in a labelled file."""
    series = waves(4)
    rows = [",".join(repr(float(v)) for v in s[:, 0]) for s in series]
    bare = "@problemName Unlabeled\n@univariate true\n@classLabel false\n@data\n" + "\n".join(rows) + "\n"
    response = predict(user_client, model_id, [("bare.ts", bare.encode())])
    assert response.status_code == 200, response.text
    labelled = predict(user_client, model_id, [("labelled.ts", ts_bytes(series))]).json()["predictions"]
    got = response.json()["predictions"]
    assert [(p["filename"], p["sample"]) for p in got] == [("bare.ts", i) for i in range(1, 5)]
    assert [p["answer"]["label"] for p in got] == [p["answer"]["label"] for p in labelled]


def test_hostile_sequence_files_are_a_400_naming_the_file_and_line(
    user_client: TestClient, model_id: str
) -> None:
    text = ts_bytes(waves(3)).decode()
    truncated = predict(user_client, model_id, [("cut.ts", text[: text.rindex(",") - 3].encode())])
    assert truncated.status_code == 400 and truncated.json()["detail"].startswith("cut.ts, line 13")
    many = predict(user_client, model_id, [("many.ts", ts_bytes(waves(MAX_PREDICT_SAMPLES + 1)))])
    assert many.status_code == 400
    assert many.json()["detail"] == "many.ts, line 1011: 1,001 series is over the limit of 1,000"
    # The allowance is the request's: a second file may hold only what the first left.
    split = predict(user_client, model_id, [("a.ts", ts_bytes(waves(600))), ("b.ts", ts_bytes(waves(600)))])
    assert split.status_code == 400 and split.json()["detail"].startswith("b.ts, line 411: ")
    pickled = io.BytesIO()
    np.save(pickled, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    evil = predict(user_client, model_id, [("evil.npy", pickled.getvalue())])
    assert evil.status_code == 400 and "evil.npy: holds Python objects" in evil.json()["detail"]
    wide = ts_text(series_set(2, 3, 64), ["sine", "square"], ["sine", "square"]).encode()
    other = predict(user_client, model_id, [("wide.ts", wide)])
    assert other.status_code == 400
    assert other.json()["detail"] == "wide.ts, line 11: 3 features per step, but the model takes 1"
    image = predict(user_client, model_id, [("photo.png", b"\x89PNG not really")])
    assert image.status_code == 400 and "photo.png: not a sequence file" in image.json()["detail"]
    rows = user_client.post(f"/api/models/{model_id}/predict/rows", json={"rows": [{"a": 1}]})
    assert rows.status_code == 422 and "it takes sequences, not table rows" in rows.json()["detail"]


def test_another_users_sequence_model_is_not_found(other_client: TestClient, model_id: str) -> None:
    assert predict(other_client, model_id, [("five.ts", ts_bytes(waves(5)))]).status_code == 404


def test_the_sdk_and_dragdl_predict_server_answer_per_sample(
    make_client: MakeClient,
    model_id: str,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Over a real uvicorn server: `DragDLClient.predict_files` and `dragdl predict --server`."""
    from typer.testing import CliRunner

    from dragdl.cli import app as cli
    from dragdl.client import ApiError, DragDLClient
    from dragdl.server import app as app_module
    from dragdl.server.app import create_app

    token = make_client("alice", auth="token").headers["Authorization"].removeprefix("Bearer ")
    series = waves(5)
    ts = tmp_path / "five.ts"
    ts.write_bytes(ts_bytes(series))
    monkeypatch.setattr(app_module, "create_runner", lambda settings, sessions: IdleRunner())
    with serving(create_app(settings)) as url, DragDLClient(url, token=token) as client:
        answered = client.predict_files(model_id, [ts], top_k=2)
        assert answered.task == "classification" and len(answered.predictions) == 5
        assert [(p.filename, p.sample) for p in answered.predictions] == [("five.ts", i) for i in range(1, 6)]
        cut = tmp_path / "cut.ts"
        text = ts.read_text()
        cut.write_text(text[: text.rindex(",") - 3])
        with pytest.raises(ApiError) as refused:
            client.predict_files(model_id, [cut])
        assert refused.value.status == 400 and refused.value.message.startswith("cut.ts, line 15")
        monkeypatch.setenv("DRAGDL_TOKEN", token)
        result = CliRunner().invoke(
            cli, ["predict", "--server", url, model_id, str(ts), "--json"], env={"COLUMNS": "250"}
        )
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert [(b["file"], b["sample"]) for b in body] == [(str(ts), i) for i in range(1, 6)]
    assert [b["label"] for b in body] == [p.answer["label"] for p in answered.predictions]


def test_a_script_that_cannot_be_written_is_a_422_with_the_graphs_problems(
    user_client: TestClient, model_id: str, settings: Settings
) -> None:
    """A model trained on an uploaded sequence set has no training script; the refusal carries each
    problem's code and node, so the web UI can say it in the reader's language where Script was
    pressed."""
    from .test_datasets import created, upload
    from .test_sequence_uploads import two_class_ts

    uploaded = created(upload(user_client, [("Ramps.ts", two_class_ts(24))]))
    manifest_path = settings.artifacts_dir / "task-1" / "model.json"
    manifest = json.loads(manifest_path.read_text())
    data = next(node for node in manifest["graph"]["nodes"] if node["id"] == "data")
    data["params"] = {"source": "uploaded", "dataset_id": uploaded["id"]}
    manifest_path.write_text(json.dumps(manifest))
    answer = user_client.get(f"/api/models/{model_id}/download", params={"format": "script"})
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail["message"] == "cannot write the training script"
    assert [(e["code"], e["node_id"]) for e in detail["errors"]] == [("codegen_unsupported", "data")]

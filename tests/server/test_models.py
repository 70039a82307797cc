"""The models API: prediction matches the bundle in-process, concurrent requests give the same answers
with micro-batching on and off, downloads (bundle, ONNX, TorchScript, script), owner scoping."""

from __future__ import annotations

import io
import os
import shutil
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy.orm import Session

from dragdl.db.models import Model
from dragdl.server.services import prediction
from dragdl.server.services.prediction import PredictionService
from dragdl.server.settings import Settings

from ..graphs import chain
from .hostile.corpus import png_claiming


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """SQLite only: nothing here depends on the database engine, and the tests stay quick."""
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


def digits_graph() -> dict[str, Any]:
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("resize", "op.Resize", {"height": 12}),
        ("norm", "op.Normalize", {"preset": "dataset"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        (
            "train",
            "train.Classifier",
            {"epochs": 1, "batch_size": 128, "lr": 0.01, "seed": 0, "device": "cpu"},
        ),
    ]
    return chain("Digits", nodes)


@pytest.fixture(scope="module")
def trained_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny classifier of scikit-learn's 8x8 digits, trained once for the module as a task would."""
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter

    root = tmp_path_factory.mktemp("bundle")
    out = root / "run"
    result = run_graph(digits_graph(), DataContext(data_dir=root, allow_download=False), out, ListReporter())
    assert result.status == "succeeded"
    return out


@pytest.fixture
def model_id(trained_bundle: Path, settings: Settings, user_client: TestClient, db_session: Session) -> str:
    """The bundle registered for alice the way the runner does it: a folder under artifacts/ and a row."""
    folder = settings.artifacts_dir / "task-1"
    shutil.copytree(trained_bundle, folder)
    row = Model(
        owner_id=user_client.user["id"],  # type: ignore[attr-defined]
        name="Digits v1",
        path="artifacts/task-1",
        classes=[str(d) for d in range(10)],
        metrics={"test": {"accuracy": 0.9}},
        input_spec={"channels": 1, "size": [8, 8]},
    )
    db_session.add(row)
    db_session.commit()
    return row.id


def digit_pngs(count: int) -> list[bytes]:
    from sklearn.datasets import load_digits

    images = np.clip(np.rint(load_digits().images[:count] * (255 / 16)), 0, 255).astype(np.uint8)
    out = []
    for image in images:
        buffer = io.BytesIO()
        Image.fromarray(image, mode="L").save(buffer, format="PNG")
        out.append(buffer.getvalue())
    return out


def predict(
    client: TestClient, model_id: str, images: list[bytes], top_k: int = 3, invert: str | None = None
) -> Any:
    files = [("images", (f"digit{i}.png", data, "image/png")) for i, data in enumerate(images)]
    form = {"top_k": str(top_k)} | ({"invert": invert} if invert else {})
    return client.post(f"/api/models/{model_id}/predict", files=files, data=form)


def inverted_pngs(pngs: list[bytes]) -> list[bytes]:
    """The same digits in dark ink on white paper."""
    out = []
    for data in pngs:
        buffer = io.BytesIO()
        Image.fromarray(255 - np.asarray(Image.open(io.BytesIO(data)))).save(buffer, format="PNG")
        out.append(buffer.getvalue())
    return out


def test_an_upload_with_the_opposite_paper_is_inverted_and_says_so(
    user_client: TestClient, model_id: str
) -> None:
    originals = predict(user_client, model_id, digit_pngs(6)).json()["predictions"]
    assert not any(p["inverted"] for p in originals)
    flipped = predict(user_client, model_id, inverted_pngs(digit_pngs(6)))
    assert flipped.status_code == 200, flipped.text
    got = flipped.json()["predictions"]
    assert all(p["inverted"] for p in got)
    assert [p["class"] for p in got] == [p["class"] for p in originals]
    assert np.allclose([p["probabilities"] for p in got], [p["probabilities"] for p in originals], atol=1e-6)
    # "Undo": the user keeps the upload as it is; or forces the inversion of any image.
    kept = predict(user_client, model_id, inverted_pngs(digit_pngs(6)), invert="no").json()["predictions"]
    assert not any(p["inverted"] for p in kept)
    assert [p["probabilities"] for p in kept] != [p["probabilities"] for p in got]
    forced = predict(user_client, model_id, digit_pngs(1), invert="yes").json()["predictions"]
    assert forced[0]["inverted"] is True
    assert predict(user_client, model_id, digit_pngs(1), invert="maybe").status_code == 422


def test_predict_matches_the_bundle_in_process(
    user_client: TestClient, model_id: str, settings: Settings
) -> None:
    from dragdl.engine.bundle import load_bundle

    images = digit_pngs(5)
    response = predict(user_client, model_id, images)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["model_id"] == model_id and body["classes"] == [str(d) for d in range(10)]
    expected = load_bundle(settings.artifacts_dir / "task-1").predict(images, top_k=3)
    for got, want, i in zip(body["predictions"], expected, range(5), strict=True):
        assert got["filename"] == f"digit{i}.png"
        assert abs(sum(got["probabilities"]) - 1) < 1e-5
        assert got["class"] == want.label and got["index"] == want.index
        assert np.allclose(got["probabilities"], want.probabilities, atol=1e-6)
        assert [s["class"] for s in got["top_k"]] == [s.label for s in want.top_k]
        assert got["top_k"][0]["probability"] == pytest.approx(got["probability"])
    # The classification answer is what it was before task kinds: the same keys, nothing added.
    assert set(body) == {"model_id", "classes", "batched", "predictions"}
    assert {key for p in body["predictions"] for key in p} == {
        "filename",
        "class",
        "index",
        "probability",
        "top_k",
        "probabilities",
        "inverted",
    }
    listed = user_client.get("/api/models").json()
    assert listed["count"] == 1 and listed["data"][0]["name"] == "Digits v1"
    detail = user_client.get(f"/api/models/{model_id}").json()
    assert detail["exports"] == [] and detail["task"] == "classification"
    assert detail["input_columns"] is None and detail["target"] is None
    manifest = user_client.get(f"/api/models/{model_id}/manifest").json()
    assert manifest["classes"] == body["classes"] and manifest["input"]["size"] == [8, 8]
    assert "preprocessing" in manifest


@pytest.fixture(scope="module")
def regression_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny regressor of the digit's value from its 8x8 image (the class names read as numbers)."""
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter

    graph = digits_graph()
    graph["nodes"][-1] = {
        "id": "train",
        "type": "train.Regressor",
        "params": {"epochs": 1, "batch_size": 128, "lr": 0.01, "seed": 0, "device": "cpu"},
    }
    root = tmp_path_factory.mktemp("regression")
    out = root / "run"
    result = run_graph(graph, DataContext(data_dir=root, allow_download=False), out, ListReporter())
    assert result.status == "succeeded"
    return out


@pytest.fixture
def regression_id(
    regression_bundle: Path, settings: Settings, user_client: TestClient, db_session: Session
) -> str:
    folder = settings.artifacts_dir / "task-2"
    shutil.copytree(regression_bundle, folder)
    row = Model(
        owner_id=user_client.user["id"],  # type: ignore[attr-defined]
        name="Digit value",
        path="artifacts/task-2",
        classes=[],
        metrics={"test": {"test_mae": 2.0, "test_rmse": 2.5, "test_r2": 0.2}},
        input_spec={"channels": 1, "size": [8, 8]},
        task="regression",
    )
    db_session.add(row)
    db_session.commit()
    return row.id


def test_a_regression_model_answers_a_value_per_image(
    user_client: TestClient, regression_id: str, settings: Settings
) -> None:
    import torch

    from dragdl.engine.bundle import load_bundle

    images = digit_pngs(6)
    response = predict(user_client, regression_id, images)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["classes"] == []
    assert [set(p) for p in body["predictions"]] == [{"filename", "value", "inverted"}] * 6
    bundle = load_bundle(settings.artifacts_dir / "task-2")
    expected = bundle.logits(torch.stack([bundle.preprocess(image) for image in images])).reshape(-1)
    got = [p["value"] for p in body["predictions"]]
    assert np.allclose(got, expected.tolist(), atol=1e-5)
    assert len(set(got)) > 1  # six different digits: not one constant answer
    detail = user_client.get(f"/api/models/{regression_id}").json()
    assert detail["task"] == "regression" and detail["classes"] == []
    assert detail["metrics"]["test"]["test_r2"] == 0.2 and detail["input_columns"] is None
    rows = user_client.post(f"/api/models/{regression_id}/predict/rows", json={"rows": [{"a": 1}]})
    assert rows.status_code == 422 and "it takes images, not table rows" in rows.json()["detail"]


def test_bad_images_are_refused(user_client: TestClient, model_id: str) -> None:
    text = predict(user_client, model_id, [b"hello, not an image"])
    assert text.status_code == 400 and "digit0.png: not a readable image" in text.json()["detail"]
    huge = predict(user_client, model_id, [digit_pngs(1)[0], png_claiming(9000, 9000)])
    assert huge.status_code == 400 and "digit1.png: 9000x9000" in huge.json()["detail"]
    assert user_client.post(f"/api/models/{model_id}/predict", data={"top_k": "3"}).status_code == 422
    assert predict(user_client, model_id, digit_pngs(1), top_k=0).status_code == 422


def test_other_users_models_are_not_found(
    user_client: TestClient, other_client: TestClient, model_id: str
) -> None:
    assert other_client.get(f"/api/models/{model_id}").status_code == 404
    assert predict(other_client, model_id, digit_pngs(1)).status_code == 404
    assert other_client.get(f"/api/models/{model_id}/download").status_code == 404
    assert other_client.get(f"/api/models/{model_id}/manifest").status_code == 404
    assert other_client.delete(f"/api/models/{model_id}").status_code == 404
    assert other_client.get("/api/models").json()["count"] == 0
    assert user_client.get(f"/api/models/{model_id}").status_code == 200


def _concurrent(client: TestClient, model_id: str, images: list[bytes]) -> list[dict[str, Any]]:
    def one(data: bytes) -> dict[str, Any]:
        response = predict(client, model_id, [data])
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()["predictions"][0]
        return result

    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(one, images))


@pytest.fixture
def forward_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of inputs of each forward pass the prediction service makes, in order."""
    sizes: list[int] = []
    lock = threading.Lock()
    forward = prediction.forward

    def counting(bundle: Any, inputs: list[Any]) -> list[list[float]]:
        with lock:
            sizes.append(len(inputs))
        return forward(bundle, inputs)

    monkeypatch.setattr(prediction, "forward", counting)
    return sizes


def test_concurrent_predictions_batched_and_unbatched_agree(
    client: TestClient, user_client: TestClient, model_id: str, app: FastAPI, forward_sizes: list[int]
) -> None:
    # The app's own client runs every request on the one event loop of its lifespan, as a server does
    # (a client not entered as a context manager starts a loop per request); it acts as alice here.
    client.cookies.update(user_client.cookies)
    client.headers.update(user_client.headers)
    batches = forward_sizes
    images = digit_pngs(16)
    # A generous window so that the 16 requests of this slow, shared test machine meet in batches.
    app.state.predictor = PredictionService(batching=True, max_batch=8, window_s=0.25)
    batched = _concurrent(client, model_id, images)
    assert sum(batches) == 16 and max(batches) > 1 and max(batches) <= 8
    batches.clear()
    app.state.predictor = PredictionService(batching=False)
    unbatched = _concurrent(client, model_id, images)
    assert batches == [1] * 16
    for a, b in zip(batched, unbatched, strict=True):
        assert a["class"] == b["class"]
        assert np.allclose(a["probabilities"], b["probabilities"], atol=1e-5)


def test_bundle_and_script_downloads(user_client: TestClient, model_id: str) -> None:
    bundle = user_client.get(f"/api/models/{model_id}/download")
    assert bundle.status_code == 200 and bundle.headers["content-type"] == "application/zip"
    assert 'filename="Digits-v1.zip"' in bundle.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(bundle.content)) as archive:
        assert sorted(archive.namelist()) == ["model.json", "model.safetensors"]
    script = user_client.get(f"/api/models/{model_id}/download", params={"format": "script"})
    assert script.status_code == 200, script.text
    assert "def load_dataset(" in script.text and "load_digits" in script.text
    compile(script.text, "train.py", "exec")
    assert user_client.get(f"/api/models/{model_id}/download", params={"format": "pickle"}).status_code == 422


def test_onnx_and_torchscript_downloads_are_exported_once(
    user_client: TestClient, model_id: str, settings: Settings
) -> None:
    import torch

    from dragdl.engine.bundle import load_bundle

    folder = settings.artifacts_dir / "task-1"
    bundle = load_bundle(folder)
    batch = torch.stack([bundle.preprocess(image) for image in digit_pngs(3)])
    expected = bundle.logits(batch).numpy()

    onnx = user_client.get(f"/api/models/{model_id}/download", params={"format": "onnx"})
    assert onnx.status_code == 200, onnx.text
    stamp = (folder / "model.onnx").stat().st_mtime_ns
    assert (
        user_client.get(f"/api/models/{model_id}/download", params={"format": "onnx"}).content == onnx.content
    )
    assert (folder / "model.onnx").stat().st_mtime_ns == stamp  # served from disk, not exported again
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(onnx.content, providers=["CPUExecutionProvider"])
    (logits,) = session.run(None, {"images": batch.numpy()})
    assert np.allclose(logits, expected, atol=1e-4)

    script = user_client.get(f"/api/models/{model_id}/download", params={"format": "torchscript"})
    assert script.status_code == 200, script.text
    module = torch.jit.load(io.BytesIO(script.content))
    assert np.allclose(module(batch).detach().numpy(), expected, atol=1e-4)
    assert sorted(user_client.get(f"/api/models/{model_id}").json()["exports"]) == ["onnx", "torchscript"]
    # A prediction after the export (which rewrote model.json) reloads the bundle and still works.
    assert predict(user_client, model_id, digit_pngs(1)).status_code == 200


def test_delete_model(user_client: TestClient, model_id: str, settings: Settings) -> None:
    assert predict(user_client, model_id, digit_pngs(1)).status_code == 200
    assert user_client.delete(f"/api/models/{model_id}").status_code == 204
    assert user_client.get(f"/api/models/{model_id}").status_code == 404
    assert predict(user_client, model_id, digit_pngs(1)).status_code == 404
    assert not (settings.artifacts_dir / "task-1").exists()  # no task owns it: its folder goes too


def test_missing_bundle_files_are_reported(
    user_client: TestClient, model_id: str, settings: Settings
) -> None:
    (settings.artifacts_dir / "task-1" / "model.safetensors").unlink()
    response = predict(user_client, model_id, digit_pngs(1))
    assert response.status_code == 410 and "model.safetensors missing" in response.json()["detail"]
    assert str(settings.data_dir) not in response.json()["detail"]


def test_prediction_service_batches_by_window(trained_bundle: Path, forward_sizes: list[int]) -> None:
    import asyncio

    sizes = forward_sizes

    async def run() -> list[str]:
        service = PredictionService(batching=True, max_batch=4, window_s=0.05)
        images = [(f"{i}.png", data) for i, data in enumerate(digit_pngs(6))]
        try:
            results = await asyncio.gather(
                *(service.predict("m", trained_bundle, [image], top_k=2) for image in images)
            )
        finally:
            await service.close()
        return [predictions[0].label for _, predictions in results]

    labels = asyncio.run(run())
    # Six single-image requests at once: a full batch of 4 at once, the other 2 when the window ends.
    assert sizes == [4, 2] and len(labels) == 6


def test_an_unusable_image_fails_only_its_own_request_of_a_batch(
    trained_bundle: Path, forward_sizes: list[int]
) -> None:
    import asyncio

    sizes = forward_sizes
    good = digit_pngs(3)

    async def run() -> list[Any]:
        service = PredictionService(batching=True, max_batch=8, window_s=0.05)
        requests = [
            [("a.png", good[0])],
            [("b.png", good[1]), ("notes.txt", b"not an image at all")],
            [("c.png", good[2])],
        ]
        try:
            return await asyncio.gather(
                *(service.predict("m", trained_bundle, images) for images in requests), return_exceptions=True
            )
        finally:
            await service.close()

    first, second, third = asyncio.run(run())
    assert isinstance(second, prediction.PredictionInputError) and second.message.startswith("notes.txt:")
    for result in (first, third):
        classes, predictions = result
        assert classes == [str(d) for d in range(10)] and len(predictions) == 1
    assert sizes == [2]  # one forward pass for the two usable requests, without the refused one's images


def test_a_batch_waits_for_a_free_slot_even_after_its_queue_emptied(
    trained_bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request that arrives while the only slot is busy (and the queue was empty) is answered once
    the running batch ends: the new dispatcher hears about it."""
    import asyncio

    entered = threading.Event()
    release = threading.Event()
    forward = prediction.forward

    def held(bundle: Any, inputs: list[Any]) -> list[list[float]]:
        entered.set()
        assert release.wait(60), "the test never released the first batch"
        return forward(bundle, inputs)

    monkeypatch.setattr(prediction, "forward", held)
    images = digit_pngs(2)

    async def run() -> list[str]:
        service = PredictionService(batching=True, workers=1, window_s=0.0)
        try:
            first = asyncio.ensure_future(service.predict("m", trained_bundle, [("a.png", images[0])]))
            await asyncio.get_running_loop().run_in_executor(None, entered.wait, 60)
            second = asyncio.ensure_future(service.predict("m", trained_bundle, [("b.png", images[1])]))
            await asyncio.sleep(0)  # one turn of the loop: the second request queues while the slot is held
            release.set()
            results = await asyncio.wait_for(asyncio.gather(first, second), 60)
        finally:
            await service.close()
        return [predictions[0].label for _, predictions in results]

    assert len(asyncio.run(run())) == 2


def test_a_lone_prediction_does_not_wait_for_the_batch_window(trained_bundle: Path) -> None:
    """With nobody else on the way, waiting for company would only add latency (the window here is
    10 s, so the answer would come 10 s late)."""
    import asyncio
    import time

    async def run() -> float:
        service = PredictionService(batching=True, window_s=10.0)
        image = [("one.png", digit_pngs(1)[0])]
        try:
            await service.predict("m", trained_bundle, image)  # loads the bundle
            start = time.perf_counter()
            await service.predict("m", trained_bundle, image)
            return time.perf_counter() - start
        finally:
            await service.close()

    assert asyncio.run(run()) < 5.0


def test_prediction_leaves_each_worker_its_share_of_the_cpus(trained_bundle: Path) -> None:
    """Oversubscribed OpenMP teams spin between small forward passes: CPUs / workers threads each
    (for the threads that had not run torch yet, as the prediction workers have not)."""
    import asyncio

    import torch

    async def run() -> int:
        service = PredictionService(batching=False, workers=2)
        try:
            await service.predict("m", trained_bundle, [("one.png", digit_pngs(1)[0])])
        finally:
            await service.close()
        return service.workers

    workers = asyncio.run(run())
    with ThreadPoolExecutor(1) as fresh:
        threads = fresh.submit(torch.get_num_threads).result()
    assert threads <= max(1, len(os.sched_getaffinity(0)) // workers)


def test_export_file_names_match_the_engine() -> None:
    from dragdl.engine.bundle import spec
    from dragdl.server.services import models

    assert models.EXPORT_FILES == {"onnx": spec.ONNX_NAME, "torchscript": spec.TORCHSCRIPT_NAME}
    assert models.BUNDLE_FILES == (spec.MANIFEST_NAME, spec.WEIGHTS_NAME)

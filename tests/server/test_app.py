"""The server: starts fast (no torch at import), serves the catalog and validates graphs."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from fastapi.testclient import TestClient

from dragdl.server.app import create_app
from dragdl.server.settings import Settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_server_import_does_not_load_torch() -> None:
    code = "import sys, dragdl.server.app; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_catalog_and_validation_endpoints(tmp_path: Path) -> None:
    settings = Settings.from_env(tmp_path, auth_enabled=False)
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        assert client.get("/api/health").json()["status"] == "ok"
        catalog = client.get("/api/catalog").json()["nodes"]
        assert any(entry["type"] == "layer.Conv2d" for entry in catalog)
        graph = json.loads((EXAMPLES / "sketcher_cnn.json").read_text())
        result = client.post("/api/graphs/validate", json=graph).json()
        assert result["ok"] is True and result["shapes"]["conv1"] == "16x28x28"
        graph["nodes"][2]["params"]["kernel_size"] = 99
        bad = client.post("/api/graphs/validate", json=graph)
        assert bad.status_code == 200
        assert bad.json()["errors"][0]["node_id"] == "conv1"
        assert client.post("/api/graphs/validate", json=[1, 2]).status_code == 422
        assert "operationId" in json.dumps(client.get("/openapi.json").json())


def test_catalog_speaks_the_asked_language_and_locks_downloads_off(tmp_path: Path) -> None:
    settings = Settings.from_env(tmp_path, auth_enabled=False)
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        zh = {
            entry["type"]: entry
            for entry in client.get("/api/catalog", params={"lang": "zh"}).json()["nodes"]
        }
        assert zh["train.Classifier"]["params_schema"]["properties"]["lr"]["title"] == "学习率"
        en = {entry["type"]: entry for entry in client.get("/api/catalog").json()["nodes"]}
        assert en["train.Classifier"]["params_schema"]["properties"]["lr"]["title"] == "Learning rate"
        # The server never downloads datasets, so its forms must not offer a switch that says "on".
        download = en["dataset.quickdraw"]["params_schema"]["properties"]["download"]
        assert download["readOnly"] is True and download["x-locked"]["value"] is False
        assert client.get("/api/catalog", params={"lang": "fr"}).status_code == 422


def test_catalog_serves_the_task_kinds_presentation_in_both_languages(tmp_path: Path) -> None:
    settings = Settings.from_env(tmp_path, auth_enabled=False)
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        en = {k["name"]: k for k in client.get("/api/catalog").json()["task_kinds"]}
        zh = {k["name"]: k for k in client.get("/api/catalog", params={"lang": "zh"}).json()["task_kinds"]}
    # Every train node's kind is described, and the headline is one of the kind's metrics.
    assert set(en) == set(zh) == {"classification", "regression"}
    for kind in en.values():
        assert kind["headline"] in {m["key"] for m in kind["metrics"]}
    assert en["classification"]["title"] == "Classification" and zh["classification"]["title"] == "分类"
    accuracy = en["classification"]["metrics"][0]
    assert accuracy == {
        "key": "accuracy",
        "label": "Accuracy",
        "format": "percent",
        "unit": None,
        "higher_is_better": True,
        "charted": True,
    }
    assert zh["classification"]["metrics"][0]["label"] == "准确率"
    r2 = next(m for m in en["regression"]["metrics"] if m["key"] == en["regression"]["headline"])
    assert r2["key"] == "r2" and r2["higher_is_better"] is True and r2["format"] == "number"
    assert [m["higher_is_better"] for m in zh["regression"]["metrics"]] == [False, False, True]
    assert zh["regression"]["metrics"][0]["label"] == "平均绝对误差"
    # The answer schema is the same in both languages and says what a prediction holds.
    assert en["regression"]["answer_schema"] == zh["regression"]["answer_schema"]
    assert en["regression"]["answer_schema"]["required"] == ["value"]
    assert en["classification"]["ranks_classes"] is True and en["regression"]["ranks_classes"] is False
    assert "top_k" in en["classification"]["answer_schema"]["properties"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_dragdl_serve_answers_on_loopback(tmp_path: Path) -> None:
    port = _free_port()
    exe = Path(sys.executable).parent / "dragdl"
    server = subprocess.Popen(
        [str(exe), "serve", "--port", str(port), "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        body = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as response:
                    body = json.loads(response.read())
                    break
            except OSError:
                time.sleep(0.2)  # polling for the port to open, bounded by the deadline
        assert body is not None and body["status"] == "ok"
    finally:
        server.terminate()
        server.wait(timeout=30)

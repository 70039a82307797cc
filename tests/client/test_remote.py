"""The SDK and the server commands against a real `dragdl serve`: login, submit --wait, tasks, predict,
stop, refused graphs, resumed event streams, and an unreachable server."""

from __future__ import annotations

import io
import itertools
import json
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dragdl.client import ApiError, DragDLClient

from ..servers import free_port
from .conftest import PASSWORD, USERNAME, Cli, digits_graph

# Tests marked slow train on the server: the first task starts its embedded Ray (tens of seconds).


def write(path: Path, graph: dict[str, Any]) -> Path:
    path.write_text(json.dumps(graph))
    return path


@pytest.fixture(scope="module")
def trained(server_url: str, token: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`dragdl submit --wait` of the digits graph, once for the module: its output and the task."""
    from typer.testing import CliRunner

    from dragdl.cli import app

    root = tmp_path_factory.mktemp("submit")
    graph = write(root / "digits.json", digits_graph())
    env = {"COLUMNS": "200", "DRAGDL_TOKEN": token, "DRAGDL_SERVER": server_url, "HOME": str(root)}
    result = CliRunner().invoke(app, ["submit", str(graph), "--wait"], env=env)
    with DragDLClient(server_url, token=token) as client:
        tasks = client.list_tasks()
        models = client.list_models()
    return {"result": result, "task": tasks[0], "models": models}


def test_login_prompts_for_the_password_and_saves_a_private_token(
    cli: Cli, server_url: str, account: dict[str, Any], tmp_path: Path
) -> None:
    login = ("login", "--server", server_url, "--username", USERNAME)
    result = cli(*login, home=tmp_path, input=PASSWORD + "\n")
    assert result.exit_code == 0, result.output
    path = tmp_path / ".dragdl" / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    saved = json.loads(path.read_text())["servers"][server_url]
    assert saved["username"] == USERNAME and saved["token"].startswith("dgl_")
    with DragDLClient(server_url, token=saved["token"]) as client:
        assert client.me().username == USERNAME

    wrong = cli(*login, "--password", "nope", home=tmp_path)
    assert wrong.exit_code == 1 and "wrong username or password" in wrong.output
    assert "Traceback" not in wrong.output


@pytest.mark.slow
def test_submit_wait_shows_progress_and_the_summary(trained: dict[str, Any]) -> None:
    result, task = trained["result"], trained["task"]
    assert result.exit_code == 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.splitlines()
    assert lines[0] == f"task {task.id} queued: Digits"  # the id comes first, before any training
    assert "training on cpu" in result.output and "epoch 2/2  train loss" in result.output
    assert "Result" in result.output and "test accuracy" in result.output
    assert task.status == "SUCCEEDED" and task.best_metrics["test_accuracy"] > 0.5
    assert [m.task_id for m in trained["models"]] == [task.id]


@pytest.mark.slow
def test_tasks_lists_the_task(cli: Cli, home: Path, server_url: str, trained: dict[str, Any]) -> None:
    task = trained["task"]
    table = cli("tasks", "--server", server_url, home=home)
    assert table.exit_code == 0, table.output
    assert task.id in table.output and "SUCCEEDED" in table.output and "test_accuracy" in table.output
    assert "100%" in table.output
    only = cli("tasks", "--server", server_url, "--status", "succeeded", "--json", home=home)
    assert only.exit_code == 0, only.output
    assert task.id in [row["id"] for row in json.loads(only.output)]
    none = cli("tasks", "--server", server_url, "--status", "FAILED", home=home)
    assert none.exit_code == 0 and "no tasks with status FAILED" in none.output


@pytest.mark.slow
def test_predict_through_the_server(cli: Cli, home: Path, server_url: str, trained: dict[str, Any]) -> None:
    from PIL import Image
    from sklearn.datasets import load_digits

    digits = load_digits()
    image = np.clip(np.rint(digits.images[0] * (255 / 16)), 0, 255).astype(np.uint8)
    path = home / "zero.png"
    buffer = io.BytesIO()
    Image.fromarray(image, mode="L").save(buffer, format="PNG")
    path.write_bytes(buffer.getvalue())
    model_id = trained["models"][0].id

    result = cli("predict", "--server", server_url, model_id, str(path), "--json", home=home)
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["image"] == str(path) and row["class"] in [str(d) for d in range(10)]
    assert abs(sum(row["probabilities"]) - 1) < 1e-4 and len(row["top_k"]) == 5

    table = cli("predict", "--server", server_url, model_id, str(path), "--top-k", "2", home=home)
    assert table.exit_code == 0 and "Digits: 1 prediction(s)" in table.output
    missing = cli("predict", "--server", server_url, "no-such-model", str(path), home=home)
    assert missing.exit_code == 1 and "not found" in missing.output and "Traceback" not in missing.output


@pytest.mark.slow
def test_download_a_model_bundle(
    server_url: str, token: str, trained: dict[str, Any], tmp_path: Path
) -> None:
    with DragDLClient(server_url, token=token) as client:
        saved = client.download(trained["models"][0].id, "bundle", tmp_path)
    assert saved.parent == tmp_path and saved.name == "Digits.zip"
    with zipfile.ZipFile(saved) as archive:
        assert sorted(archive.namelist()) == ["model.json", "model.safetensors"]
    assert [p.name for p in tmp_path.iterdir()] == ["Digits.zip"]  # no partial file left


def test_upload_a_folder_of_class_folders(server_url: str, token: str, tmp_path: Path) -> None:
    from PIL import Image

    rng = np.random.default_rng(0)
    for label in ("cats", "dogs"):
        (tmp_path / "pets" / label).mkdir(parents=True)
        for i in range(3):
            pixels = rng.integers(0, 255, (8, 8), dtype=np.uint8)
            Image.fromarray(pixels, mode="L").save(tmp_path / "pets" / label / f"{i}.png")
    with DragDLClient(server_url, token=token) as client:
        dataset = client.upload_dataset(tmp_path / "pets", name="Pets")
        listed = client.list_datasets()
    assert (dataset.name, dataset.kind, dataset.count, dataset.size) == ("Pets", "folder", 6, (8, 8))
    assert [c.name for c in dataset.classes] == ["cats", "dogs"]
    assert dataset.id in [d.id for d in listed]
    assert dataset.node == {"type": "dataset.uploaded", "params": {"dataset_id": dataset.id}}


@pytest.mark.slow
def test_events_resume_after_the_last_event_id(server_url: str, token: str, trained: dict[str, Any]) -> None:
    task_id = trained["task"].id
    with DragDLClient(server_url, token=token) as client:
        everything = list(client.events(task_id))
        stream = client.events(task_id)
        first = list(itertools.islice(stream, 4))
        stream.close()  # drops the connection mid-stream
        rest = list(client.events(task_id, last_event_id=first[-1].id))
        metric_ids = [point.id for point in client.metrics(task_id)]
    ids = [event.id for event in first + rest]
    assert ids == [event.id for event in everything]  # no event repeated, none skipped
    assert ids == sorted(set(ids)) and len(ids) > 6
    assert set(metric_ids) <= set(ids)
    assert everything[0].status == "QUEUED" and everything[-1].status == "SUCCEEDED"
    kinds = {event.kind for event in everything}
    assert {"status", "start", "metric", "artifact"} <= kinds


def test_an_invalid_graph_is_refused_with_the_node_table(cli: Cli, home: Path, server_url: str) -> None:
    graph = digits_graph(name="Broken")
    graph["nodes"] = [n for n in graph["nodes"] if n["id"] != "flatten"]
    graph["edges"] = [e for e in graph["edges"] if "flatten" not in (e["source"], e["target"])]
    graph["edges"].append({"source": "norm", "target": "dense"})
    path = write(home / "broken.json", graph)
    result = cli("submit", str(path), "--server", server_url, home=home)
    assert result.exit_code == 1, result.output
    assert "refused the graph" in result.output and "problem(s) in the graph" in result.output
    assert "dense (layer.Linear)" in result.output and "shape_mismatch" in result.output
    assert "Traceback" not in result.output
    with DragDLClient(server_url, token="dgl_wrong") as client, pytest.raises(ApiError) as caught:
        client.list_tasks()
    assert caught.value.status == 401 and caught.value.message == "invalid or revoked API token"


@pytest.mark.slow
def test_stop_a_task(cli: Cli, home: Path, server_url: str, token: str) -> None:
    path = write(home / "long.json", digits_graph(epochs=500, name="Long"))
    submitted = cli("submit", str(path), "--server", server_url, home=home)
    assert submitted.exit_code == 0, submitted.output
    task_id = submitted.output.split()[1]
    stopped = cli("stop", task_id, "--server", server_url, home=home)
    assert stopped.exit_code == 0, stopped.output
    assert f"task {task_id}" in stopped.output
    with DragDLClient(server_url, token=token) as client:
        assert client.wait(task_id).status == "STOPPED"
    again = cli("stop", task_id, "--server", server_url, home=home)
    assert again.exit_code == 0  # stopping a stopped task is not an error


@pytest.mark.parametrize("command", [["tasks"], ["stop", "abc"], ["submit", "graph.json"]])
def test_an_unreachable_server_is_one_clear_line(command: list[str], tmp_path: Path) -> None:
    write(tmp_path / "graph.json", digits_graph())
    url = f"http://127.0.0.1:{free_port()}"
    exe = Path(sys.executable).parent / "dragdl"
    result = subprocess.run(
        [str(exe), *command, "--server", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", "PATH": "", "HOME": str(tmp_path)},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"the DragDL server at {url} is unreachable" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr

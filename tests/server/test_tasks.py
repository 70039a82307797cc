"""The tasks API on a real local Ray: lifecycle, quotas, stop and resume, live events, ownership, delete,
and the orders of the task list.

Ray is started once for the session from the main thread; each test's app runs its own scheduler
against it. Every wait polls a condition with a deadline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from dragdl.db.models import Task, TaskEvent, TaskStatus
from dragdl.server.settings import Settings

from ..runner.support import (
    digits_graph,
    kill_task_workers,
    process_alive,
    slow_graph,
    start_shared_ray,
    wait_for,
)

FINAL = ("SUCCEEDED", "FAILED", "STOPPED")
Client = TestClient | httpx.Client
"""The app in this process, or a `dragdl serve` subprocess over HTTP."""
SQLITE = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


@pytest.fixture(scope="module", autouse=True)
def ray_cluster(request: pytest.FixtureRequest) -> None:
    if start_shared_ray():
        import ray

        request.config.add_cleanup(ray.shutdown)


@pytest.fixture(autouse=True)
def no_workers_left(ray_cluster: None) -> Iterator[None]:
    yield
    kill_task_workers()


# --- helpers ----------------------------------------------------------------------------------------


def submit(client: TestClient, graph: dict[str, Any], **body: Any) -> dict[str, Any]:
    response = client.post("/api/tasks", json={"graph": graph, **body})
    assert response.status_code == 201, response.text
    task: dict[str, Any] = response.json()
    return task


def get(client: Client, task_id: str) -> dict[str, Any]:
    response = client.get(f"/api/tasks/{task_id}")
    assert response.status_code == 200, response.text
    task: dict[str, Any] = response.json()
    return task


def wait_status(
    client: Client, task_id: str, statuses: tuple[str, ...], timeout_s: float = 120
) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        task = get(client, task_id)
        return task if task["status"] in statuses else None

    return wait_for(reached, timeout_s, f"task {task_id} to be {' or '.join(statuses)}")


def wait_until(
    client: Client, task_id: str, check: Callable[[dict[str, Any]], bool], what: str
) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        task = get(client, task_id)
        assert task["status"] not in FINAL, f"task ended ({task['status']}: {task['error']}) before {what}"
        return task if check(task) else None

    return wait_for(reached, 120, what, every_s=0.1)


def read_stream(
    client: Client,
    task_id: str,
    last_event_id: int | None = None,
    until: Callable[[list[dict[str, Any]]], bool] | None = None,
) -> list[dict[str, Any]]:
    """Parse the server-sent events of a task until the stream ends (or `until` says so)."""
    headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
    events: list[dict[str, Any]] = []
    with client.stream("GET", f"/api/tasks/{task_id}/events", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        current: dict[str, Any] = {}
        for line in response.iter_lines():
            if line.startswith("id: "):
                current["id"] = int(line[4:])
            elif line.startswith("event: "):
                current["event"] = line[7:]
            elif line.startswith("data: "):
                current["data"] = json.loads(line[6:])
            elif not line and "id" in current:
                events.append(current)
                current = {}
                if until is not None and until(events):
                    break
    return events


def statuses(events: list[dict[str, Any]]) -> list[str]:
    return [e["data"]["status"] for e in events if e["event"] == "status"]


def epoch_metrics(client: Client, task_id: str) -> list[int]:
    points = client.get(f"/api/tasks/{task_id}/metrics", params={"scope": "epoch"}).json()["data"]
    return [p["epoch"] for p in points]


def task_row(app: FastAPI, task_id: str) -> Task | None:
    with app.state.sessions() as db:
        row: Task | None = db.get(Task, task_id)
        return row


# --- tests --------------------------------------------------------------------------------------------


def test_a_submitted_task_runs_to_success_with_metrics_and_a_model(user_client: TestClient) -> None:
    started = time.monotonic()
    created = submit(user_client, digits_graph(epochs=3), name="digits run")
    assert created["status"] == "QUEUED" and created["attempts"] == 0
    assert created["config"]["epochs"] == 3 and created["config"]["optimizer"] == "adam"  # defaults filled in
    assert created["resources"] == {"cpus": 1.0, "gpus": 0.0}  # device cpu: no GPU
    done = wait_status(user_client, created["id"], FINAL)
    assert done["status"] == "SUCCEEDED", done["error"]
    assert done["attempts"] == 1 and done["progress"] == 1.0 and done["epoch"] == 3
    assert done["best_metrics"]["test_accuracy"] > 0.5 and done["best_metrics"]["val_loss"] > 0
    assert done["started_at"] and done["finished_at"] and 0 < done["elapsed_s"] < time.monotonic() - started
    events = read_stream(user_client, created["id"])
    assert statuses(events) == ["QUEUED", "RUNNING", "SUCCEEDED"]
    assert epoch_metrics(user_client, created["id"]) == [1, 2, 3]
    metrics = user_client.get(f"/api/tasks/{created['id']}/metrics").json()
    assert [p["scope"] for p in metrics["data"]].count("test") == 1
    models = user_client.get("/api/models").json()["data"]
    assert [m["task_id"] for m in models] == [created["id"]]
    assert models[0]["name"] == "digits run" and models[0]["metrics"]["epochs_completed"] == 3
    log = user_client.get(f"/api/tasks/{created['id']}/logs").json()
    assert "attempt 1 in process" in log["text"] and log["next_offset"] == log["size"] > 0
    assert (
        user_client.get(f"/api/tasks/{created['id']}/logs", params={"offset": log["size"]}).json()["text"]
        == ""
    )
    listing = user_client.get("/api/tasks").json()
    assert listing["count"] == 1 and listing["data"][0]["id"] == created["id"]
    assert user_client.get("/api/tasks", params={"status": "FAILED"}).json()["count"] == 0


@SQLITE
def test_graphs_are_validated_first_and_tasks_are_private(
    user_client: TestClient, other_client: TestClient, app: FastAPI
) -> None:
    bad = digits_graph()
    bad["nodes"][2]["params"]["out_features"] = 0
    bad["edges"].append({"source": "data", "target": "missing"})
    refused = user_client.post("/api/tasks", json={"graph": bad})
    assert refused.status_code == 422
    assert {e["node_id"] for e in refused.json()["detail"]["errors"]} >= {"dense"}
    server_path = digits_graph()
    server_path["nodes"][0] = {"id": "data", "type": "dataset.folder", "params": {"path": "/etc"}}
    forbidden = user_client.post("/api/tasks", json={"graph": server_path}).json()["detail"]["errors"]
    assert [e["code"] for e in forbidden] == ["dataset_path_forbidden"]
    no_gpu = {"graph": digits_graph(device="cuda"), "resources": {"gpus": 0}}
    [problem] = user_client.post("/api/tasks", json=no_gpu).json()["detail"]["errors"]
    assert (problem["code"], problem["node_id"], problem["field"]) == ("param_invalid", "train", "device")
    assert "0 GPUs" in problem["message"] and "resources.gpus: 1" in problem["message"]
    assert user_client.post("/api/tasks", json={}).status_code == 422
    saved = user_client.post("/api/graphs", json={"graph": digits_graph(epochs=1)}).json()
    assert other_client.post("/api/tasks", json={"graph_id": saved["id"]}).status_code == 404
    task = user_client.post("/api/tasks", json={"graph_id": saved["id"]}).json()
    assert task["graph_id"] == saved["id"] and task["name"] == "Digits"
    for method, path in [
        ("GET", ""),
        ("POST", "/stop"),
        ("POST", "/retry"),
        ("POST", "/clone"),
        ("GET", "/events"),
        ("GET", "/metrics"),
        ("GET", "/logs"),
        ("DELETE", ""),
    ]:
        response = other_client.request(method, f"/api/tasks/{task['id']}{path}")
        assert response.status_code == 404, (method, path, response.text)
    assert other_client.get("/api/tasks").json()["count"] == 0
    done = wait_status(user_client, task["id"], FINAL)
    assert done["status"] == "SUCCEEDED", done["error"]
    assert user_client.post(f"/api/tasks/{task['id']}/retry").status_code == 409
    assert user_client.post(f"/api/tasks/{task['id']}/stop").status_code == 409
    clone = user_client.post(f"/api/tasks/{task['id']}/clone").json()
    assert clone["status"] == "QUEUED" and clone["name"] == "Digits (copy)" and clone["id"] != task["id"]
    assert wait_status(user_client, clone["id"], FINAL)["status"] == "SUCCEEDED"
    assert user_client.delete(f"/api/tasks/{task['id']}").status_code == 204
    assert user_client.get(f"/api/tasks/{task['id']}").status_code == 404
    model = user_client.get("/api/models").json()["data"][0]
    assert user_client.get(f"/api/models/{model['id']}").status_code == 200  # the bundle outlives its task


@SQLITE
@pytest.mark.slow
def test_a_user_at_quota_waits_while_two_tasks_run(user_client: TestClient, app: FastAPI) -> None:
    # Half a CPU each: the cluster (2 CPUs here, at least 2 anywhere) could run all three at once,
    # so only the quota of 2 running tasks per user holds the third back.
    graph = slow_graph(epochs=2, batch_size=4)
    ids = [submit(user_client, graph, name=f"q{i}", resources={"cpus": 0.5})["id"] for i in range(3)]
    seen_waiting = False
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        tasks = {t["id"]: t["status"] for t in user_client.get("/api/tasks").json()["data"]}
        running = [i for i in ids if tasks[i] == "RUNNING"]
        assert len(running) <= 2, tasks
        if len(running) == 2 and tasks[ids[2]] == "QUEUED":
            seen_waiting = True
        if all(tasks[i] in FINAL for i in ids):
            break
        time.sleep(0.1)  # polling interval, bounded by the deadline
    assert seen_waiting
    assert [get(user_client, i)["status"] for i in ids] == ["SUCCEEDED"] * 3
    # The status timeline agrees: never more than two RUNNING at once.
    with app.state.sessions() as db:
        rows = db.scalars(select(TaskEvent).where(TaskEvent.kind == "status").order_by(TaskEvent.id))
        load = peak = 0
        for row in rows:
            load += {"RUNNING": 1, "SUCCEEDED": -1, "FAILED": -1, "STOPPED": -1}.get(row.data["status"], 0)
            peak = max(peak, load)
    assert peak == 2


@SQLITE
@pytest.mark.slow
def test_stop_checkpoints_then_retry_resumes_and_succeeds(
    user_client: TestClient, settings: Settings
) -> None:
    task = submit(user_client, slow_graph(epochs=8, batch_size=4))
    wait_until(user_client, task["id"], lambda t: t["status"] == "RUNNING" and t["progress"] > 0, "training")
    stopping = user_client.post(f"/api/tasks/{task['id']}/stop").json()
    assert stopping["stop_requested"] is True
    stopped = wait_status(user_client, task["id"], FINAL)
    assert stopped["status"] == "STOPPED", "the run ended before the stop: make it longer"
    assert stopped["error"] is None
    assert list((settings.artifacts_dir / task["id"] / "checkpoints").glob("ckpt-*.pt"))
    before = epoch_metrics(user_client, task["id"])
    retried = user_client.post(f"/api/tasks/{task['id']}/retry").json()
    assert retried["status"] == "QUEUED" and retried["resume"] is True
    done = wait_status(user_client, task["id"], ("SUCCEEDED", "FAILED"))
    assert done["status"] == "SUCCEEDED", done["error"]
    assert done["attempts"] == 2
    events = read_stream(user_client, task["id"])
    assert statuses(events) == ["QUEUED", "RUNNING", "STOPPED", "QUEUED", "RUNNING", "SUCCEEDED"]
    starts = [e["data"] for e in events if e["event"] == "start"]
    assert starts[0]["resumed_from_epoch"] is None and starts[1]["resumed_from_epoch"] is not None
    assert starts[1]["resumed_from_epoch"] == len(before) + 1  # continued in the epoch it stopped in
    assert epoch_metrics(user_client, task["id"]) == list(range(1, 9))


@SQLITE
def test_the_event_stream_follows_live_and_resumes_without_repeats(user_client: TestClient) -> None:
    task = submit(user_client, digits_graph(epochs=4, batch_size=32))

    def first_metric(seen: list[dict[str, Any]]) -> bool:
        return any(e["event"] == "metric" for e in seen)

    first = read_stream(user_client, task["id"], until=first_metric)
    assert first[0]["event"] == "status" and first[0]["data"]["status"] == "QUEUED"
    rest = read_stream(user_client, task["id"], last_event_id=first[-1]["id"])
    ids = [e["id"] for e in first + rest]
    assert ids == sorted(set(ids))
    assert statuses(first + rest) == ["QUEUED", "RUNNING", "SUCCEEDED"]
    assert rest[-1]["event"] == "status" and rest[-1]["data"]["status"] == "SUCCEEDED"
    assert {"start", "progress", "metric", "artifact"} <= {e["event"] for e in first + rest}
    assert [e["id"] for e in read_stream(user_client, task["id"])] == ids  # a full replay: the same events
    after = user_client.get(f"/api/tasks/{task['id']}/events", params={"after": ids[-2]}).text
    assert f"id: {ids[-1]}\n" in after and f"id: {ids[-2]}\n" not in after
    assert read_stream(user_client, task["id"], last_event_id=ids[-1]) == []  # finished: ends at once


@SQLITE
def test_deleting_a_running_task_kills_its_worker_and_removes_its_files(
    user_client: TestClient, app: FastAPI, settings: Settings
) -> None:
    task = submit(user_client, slow_graph(epochs=20))
    wait_until(user_client, task["id"], lambda t: t["status"] == "RUNNING" and t["progress"] > 0, "training")
    row = task_row(app, task["id"])
    assert row is not None and row.worker_pid is not None
    assert user_client.delete(f"/api/tasks/{task['id']}").status_code == 204
    wait_for(lambda: not process_alive(row.worker_pid or 0), 30, "the worker process to end")
    assert user_client.get(f"/api/tasks/{task['id']}").status_code == 404
    assert task_row(app, task["id"]) is None
    assert not (settings.artifacts_dir / task["id"]).exists()
    with app.state.sessions() as db:
        assert db.scalar(select(TaskEvent).where(TaskEvent.task_id == task["id"])) is None


def test_the_task_list_sorts_by_age_status_or_name(
    user_client: TestClient, other_client: TestClient, app: FastAPI
) -> None:
    # Finished rows written directly: the scheduler leaves them alone, and their times are exact.
    rows = {
        "a": ("Charlie", TaskStatus.SUCCEEDED),
        "b": ("alpha", TaskStatus.FAILED),
        "c": ("Bravo", TaskStatus.SUCCEEDED),
        "d": ("alpha", TaskStatus.STOPPED),
    }
    start = datetime(2030, 1, 1, tzinfo=UTC)
    ids: dict[str, str] = {}
    with app.state.sessions() as db:
        for minute, (key, (name, status)) in enumerate(rows.items()):
            row = Task(
                owner_id=user_client.user["id"],  # type: ignore[attr-defined]
                name=name,
                graph_snapshot={},
                status=status,
                created_at=start + timedelta(minutes=minute),
            )
            db.add(row)
            db.flush()
            ids[row.id] = key
        db.commit()

    def listed(**params: Any) -> str:
        response = user_client.get("/api/tasks", params=params)
        assert response.status_code == 200, response.text
        assert response.json()["count"] == len(rows)
        return "".join(ids[task["id"]] for task in response.json()["data"])

    assert listed() == listed(sort="newest") == "dcba"
    assert listed(sort="oldest") == "abcd"
    assert listed(sort="status") == "cabd"  # life order (SUCCEEDED, FAILED, STOPPED), then newest
    assert listed(sort="name") == "dbca"  # alpha, alpha (newest first), Bravo, Charlie: case ignored
    assert listed(sort="name", offset=1, limit=2) == "bc"
    assert (
        user_client.get("/api/tasks", params={"sort": "status", "status": "SUCCEEDED"}).json()["count"] == 2
    )
    assert other_client.get("/api/tasks", params={"sort": "name"}).json()["count"] == 0
    for wrong in ("created", "-created", "NAME", ""):
        refused = user_client.get("/api/tasks", params={"sort": wrong})
        assert refused.status_code == 422, (wrong, refused.text)
        assert refused.json()["detail"][0]["loc"] == ["query", "sort"]

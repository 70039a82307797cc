"""Fault tolerance with real processes: a SIGKILLed worker, a SIGKILLed server, a deterministic failure."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from ..runner.support import (
    corrupt_folder_graph,
    descendants,
    process_alive,
    slow_graph,
    wait_for,
)
from .test_tasks import (
    FINAL,
    SQLITE,
    Client,
    epoch_metrics,
    get,
    no_workers_left,
    ray_cluster,
    read_stream,
    statuses,
    submit,
    task_row,
    wait_status,
    wait_until,
)

__all__ = ["no_workers_left", "ray_cluster"]  # the fixtures, used here too

EPOCHS = 8
"""Long enough (a few seconds at least) that the kill lands while the run is still going."""


def metric_points(client: Client, task_id: str) -> list[dict[str, Any]]:
    points: list[dict[str, Any]] = client.get(f"/api/tasks/{task_id}/metrics").json()["data"]
    return points


def kept_before(points: list[dict[str, Any]], resumed_from_epoch: int) -> list[dict[str, Any]]:
    """The metrics a checkpoint taken at the start of `resumed_from_epoch` covers."""
    return [p for p in points if p["scope"] != "test" and p["epoch"] < resumed_from_epoch]


def assert_kept(before: list[dict[str, Any]], after: list[dict[str, Any]], resumed_from_epoch: int) -> None:
    """Every metric seen before the crash that the checkpoint covers is still there, unchanged."""
    covered = kept_before(before, resumed_from_epoch)
    assert covered and [p for p in covered if p not in after] == []


def second_start(events: list[dict[str, Any]]) -> dict[str, Any]:
    starts = [e["data"] for e in events if e["event"] == "start"]
    assert len(starts) == 2, starts
    return starts[1]


@SQLITE
@pytest.mark.slow
def test_a_killed_worker_resumes_from_its_last_checkpoint(user_client: TestClient, app: FastAPI) -> None:
    task = submit(user_client, slow_graph(epochs=EPOCHS))
    wait_until(
        user_client,
        task["id"],
        lambda t: t["epoch"] >= 2 and len(epoch_metrics(user_client, task["id"])) >= 1,
        "epoch 1 recorded and epoch 2 under way",
    )
    row = task_row(app, task["id"])
    assert row is not None and row.worker_pid is not None
    before = metric_points(user_client, task["id"])
    recorded = len([p for p in before if p["scope"] == "epoch"])
    os.kill(row.worker_pid, signal.SIGKILL)
    assert get(user_client, task["id"])["status"] == "RUNNING", (
        "the run ended before the kill: make it longer"
    )
    wait_for(lambda: not process_alive(row.worker_pid or 0), 30, "the killed worker to be gone")
    done = wait_status(user_client, task["id"], FINAL, timeout_s=240)
    assert done["status"] == "SUCCEEDED", done["error"]
    assert done["attempts"] == 2
    events = read_stream(user_client, task["id"])
    assert statuses(events) == ["QUEUED", "RUNNING", "QUEUED", "RUNNING", "SUCCEEDED"]
    requeued = [e["data"]["message"] for e in events if e["event"] == "status"][2]
    assert "worker lost" in requeued and "attempt 2 of 3" in requeued
    resumed = second_start(events)["resumed_from_epoch"]
    assert resumed is not None and resumed >= recorded  # at most the epoch in progress is lost
    assert epoch_metrics(user_client, task["id"]) == list(range(1, EPOCHS + 1))
    after = metric_points(user_client, task["id"])
    assert_kept(before, after, resumed)
    new = task_row(app, task["id"])
    assert new is not None and new.worker_pid not in (None, row.worker_pid)


@SQLITE
def test_an_error_on_real_data_fails_at_once_without_retries(
    admin_client: TestClient, tmp_path: Path
) -> None:
    # Administrators may read server paths: a folder whose 5.png is cut off after its header.
    task = submit(admin_client, corrupt_folder_graph(tmp_path / "images"))
    done = wait_status(admin_client, task["id"], FINAL)
    assert done["status"] == "FAILED" and done["attempts"] == 1
    assert done["error"]["node_id"] == "data"
    assert (
        done["error"]["message"].startswith("node data: cannot decode image")
        and "5.png" in done["error"]["message"]
    )
    events = read_stream(admin_client, task["id"])
    assert statuses(events) == ["QUEUED", "RUNNING", "FAILED"]
    assert [e["data"]["code"] for e in events if e["event"] == "error"] == [done["error"]["code"]]


# --- the server itself is killed ------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """`dragdl serve --no-auth` as a subprocess on a free loopback port."""

    def __init__(self, data_dir: Path, log: Path, env: dict[str, str] | None = None) -> None:
        self.port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DRAGDL_", "RAY_"))} | (env or {})
        exe = Path(sys.executable).parent / "dragdl"
        command = [str(exe), "serve", "--no-auth", "--port", str(self.port), "--data-dir", str(data_dir)]
        self.log = log.open("ab")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=30)
        wait_for(self._healthy, 90, "the server to answer")
        self.tree: set[int] = set()

    def _healthy(self) -> bool:
        assert self.process.poll() is None, f"the server exited ({self.process.returncode})"
        try:
            return self.http.get("/api/health").status_code == 200
        except httpx.TransportError:
            return False

    def remember_processes(self) -> None:
        self.tree |= set(descendants(self.process.pid))

    def kill(self) -> None:
        self.remember_processes()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def terminate(self, timeout_s: float = 90) -> None:
        """SIGTERM, as a service manager stops it; waits for the server to exit by itself."""
        self.remember_processes()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=timeout_s)

    def stop(self) -> None:
        self.remember_processes()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self.http.close()
        self.log.close()

    def reap(self) -> None:
        """Kill what the server started and left behind (Ray's agents survive a SIGKILLed head)."""
        for pid in self.tree:
            if process_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()
    for server in started:
        server.reap()


def task_column(data_dir: Path, task_id: str, column: str) -> Any:
    engine = create_engine(f"sqlite:///{data_dir / 'dragdl.db'}")
    try:
        with engine.connect() as conn:
            return conn.execute(text(f"SELECT {column} FROM tasks WHERE id = :id"), {"id": task_id}).scalar()
    finally:
        engine.dispose()


def worker_pid(data_dir: Path, task_id: str) -> int | None:
    pid: int | None = task_column(data_dir, task_id, "worker_pid")
    return pid


def task_status(data_dir: Path, task_id: str) -> str:
    return str(task_column(data_dir, task_id, "status"))


@pytest.mark.slow
def test_a_task_survives_the_server_being_killed(tmp_path: Path, servers: list[Server]) -> None:
    data_dir = tmp_path / "data"
    first = Server(data_dir, tmp_path / "server.log")
    servers.append(first)
    created = first.http.post("/api/tasks", json={"graph": slow_graph(epochs=EPOCHS)})
    assert created.status_code == 201, created.text
    task_id = created.json()["id"]

    def in_epoch_2() -> bool:
        task = get(first.http, task_id)
        assert task["status"] not in FINAL, task
        return task["epoch"] >= 2 and len(epoch_metrics(first.http, task_id)) >= 1

    wait_for(in_epoch_2, 180, "epoch 1 recorded and epoch 2 under way", every_s=0.1)
    old_worker = worker_pid(data_dir, task_id)
    assert old_worker is not None
    before = metric_points(first.http, task_id)
    first.kill()
    assert task_status(data_dir, task_id) == "RUNNING", "the run ended before the kill: make it longer"
    # The embedded Ray dies with its server, and the worker with it.
    wait_for(lambda: not process_alive(old_worker), 60, "the old worker to die with the server")

    second = Server(data_dir, tmp_path / "server.log")
    servers.append(second)
    done = wait_for(
        lambda: (task := get(second.http, task_id))["status"] in FINAL and task,
        240,
        "the task to finish on the restarted server",
    )
    assert done["status"] == "SUCCEEDED", done["error"]
    assert done["attempts"] == 2 and done["max_attempts"] == 4  # a restart does not use up a retry
    events = read_stream(second.http, task_id)
    assert statuses(events) == ["QUEUED", "RUNNING", "QUEUED", "RUNNING", "SUCCEEDED"]
    assert "server restarted" in [e["data"]["message"] for e in events if e["event"] == "status"][2]
    resumed = second_start(events)["resumed_from_epoch"]
    assert resumed is not None and resumed >= 2
    assert epoch_metrics(second.http, task_id) == list(range(1, EPOCHS + 1))
    after = metric_points(second.http, task_id)
    assert_kept(before, after, resumed)

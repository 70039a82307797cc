"""A real `dragdl serve` trains through a real database outage: PostgreSQL cut off behind a TCP proxy,
or the SQLite file write-locked past its busy timeout by another connection."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from ..runner.support import process_alive, slow_graph, sqlite_write_lock, wait_for
from .conftest import PostgresDatabases
from .proxy import CuttableProxy
from .test_fault_tolerance import Server, servers
from .test_tasks import FINAL, epoch_metrics, get, read_stream, statuses

__all__ = ["servers"]  # the fixture, used here too

EPOCHS = 6
HEARTBEAT_TIMEOUT_S = 120.0
"""The scheduler's default: no task may sit RUNNING without a live worker for longer."""


def epochs_on_disk(events: Path) -> int:
    """Epochs the worker wrote to its events.jsonl: training progress that needs no database."""
    if not events.exists():
        return 0
    lines = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    return sum(1 for e in lines if e["type"] == "metric" and e["scope"] == "epoch")


class Outage:
    """The database of a server made unavailable and available again."""

    def __init__(
        self, url: str, env: dict[str, str], make: Callable[[], AbstractContextManager[None]]
    ) -> None:
        self.url, self.env, self.make = url, env, make


@pytest.fixture(params=["postgresql", "sqlite"])
def outage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Outage]:
    if request.param == "sqlite":
        database = tmp_path / "data" / "dragdl.db"
        # The server gives up on a lock after 1 s (30 s by default), so the lock below outlasts it.
        url = f"sqlite:///{database}?timeout=1"
        yield Outage(url, {"DRAGDL_DATABASE_URL": url}, lambda: sqlite_write_lock(database))
        return
    databases: PostgresDatabases = request.getfixturevalue("postgres")
    direct = databases.create("dragdl_outage")
    target = make_url(direct)
    proxy = CuttableProxy((target.host or "127.0.0.1", target.port or 5432))
    proxied = target.set(port=proxy.port).render_as_string(hide_password=False)

    class Cut(AbstractContextManager[None]):
        def __enter__(self) -> None:
            proxy.cut()

        def __exit__(self, *exc: object) -> None:
            proxy.restore()

    try:
        yield Outage(direct, {"DRAGDL_DATABASE_URL": proxied}, Cut)
    finally:
        proxy.close()


def row(url: str, task_id: str) -> Any:
    engine = create_engine(url.split("?")[0])
    try:
        with engine.connect() as conn:
            query = text("SELECT status, worker_pid FROM tasks WHERE id = :id")
            return conn.execute(query, {"id": task_id}).one()
    finally:
        engine.dispose()


@pytest.mark.slow
def test_a_task_trains_through_a_database_outage(
    tmp_path: Path, servers: list[Server], outage: Outage
) -> None:
    data_dir = tmp_path / "data"
    server = Server(data_dir, tmp_path / "server.log", env=outage.env)
    servers.append(server)
    created = server.http.post(
        # Epochs of about half a second even on a fast CPU: the outage must span two of them and end
        # before the run does (the plain digits network trained all six in 0.3 s there).
        "/api/tasks",
        json={"graph": slow_graph(epochs=EPOCHS, batch_size=4)},
        timeout=120,
    )
    assert created.status_code == 201, created.text
    task_id = created.json()["id"]
    events = data_dir / "artifacts" / task_id / "events.jsonl"
    wait_for(lambda: len(epoch_metrics(server.http, task_id)) >= 1, 240, "epoch 1 recorded")
    with outage.make():
        cut_at = epochs_on_disk(events)
        # The outage lasts while two more epochs train: every database write meanwhile fails.
        wait_for(lambda: epochs_on_disk(events) >= cut_at + 2, 240, "two epochs during the outage", 0.1)
    assert epochs_on_disk(events) < EPOCHS, "the run ended during the outage: make it longer"

    orphaned_since: float | None = None

    def finished() -> dict[str, Any] | None:
        nonlocal orphaned_since
        status, pid = row(outage.url, task_id)
        if status == "RUNNING" and not (pid and process_alive(pid)):
            orphaned_since = orphaned_since or time.monotonic()
            assert time.monotonic() - orphaned_since < HEARTBEAT_TIMEOUT_S, "RUNNING without a worker"
        else:
            orphaned_since = None
        task = get(server.http, task_id)
        return task if task["status"] in FINAL else None

    done = wait_for(finished, 300, "the task to finish after the outage", every_s=0.5)
    assert done["status"] == "SUCCEEDED", done["error"]
    assert done["attempts"] == 1  # a short outage costs no attempt
    assert statuses(read_stream(server.http, task_id)) == ["QUEUED", "RUNNING", "SUCCEEDED"]
    assert epoch_metrics(server.http, task_id) == list(range(1, EPOCHS + 1))  # none lost, none twice

"""A full data disk, for real: `dragdl serve` on a small tmpfs data dir (issue 23, finding 4).

The disk fills while a task trains: its next checkpoint cannot be written, which is the machine's
fault, so the task is re-queued from its checkpoint; every launch while the disk stays full fails
before any process starts (the record of Ray's processes cannot be written), re-queues the task
without using up a retry and pauses launching. No worker process is left behind meanwhile (a warm
worker leaked per pass before), and once the disk has room again the task resumes and succeeds.

Needs root (mount); skipped with the reason elsewhere. On SQLite and PostgreSQL, both kept outside
the data dir, so that only the runner's files meet the full disk.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from dragdl.db.models import Task, TaskEvent, TaskStatus
from dragdl.db.session import make_engine, make_session_factory
from dragdl.runner.leftovers import RECORD

from ..servers import dragdl_serve
from .conftest import postgres_database
from .support import descendants, slow_graph, wait_for

pytestmark = pytest.mark.slow

FINAL = ("SUCCEEDED", "FAILED", "STOPPED")
ROOM_BYTES = 128 * 1024
"""Left free when the disk is filled: room for a few log lines, none for a checkpoint (~1 MB)."""


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m,mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'dragdl.db'}"
        return
    with postgres_database() as url:
        yield url


def fill(folder: Path, leave: int) -> int:
    """Write a file until the disk is full, then free `leave` bytes of it; returns its size."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        block = b"\0" * (1 << 20)
        while block:
            try:
                out.write(block)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                block = block[: len(block) // 2] if len(block) > 4096 else b""
        size = out.tell()
        out.truncate(max(0, size - leave))
    return size


def task_workers(server_pid: int) -> list[int]:
    """The server's worker processes (task attempts and warm workers: Ray actors of TaskWorker)."""
    found = []
    for pid in descendants(server_pid):
        with contextlib.suppress(OSError):
            title = Path(f"/proc/{pid}/cmdline").read_bytes()  # ray::[actor name:]TaskWorker[.method]
            if title.startswith(b"ray::") and b"TaskWorker" in title:
                found.append(pid)
    return found


def test_a_full_disk_requeues_the_task_leaks_no_worker_and_it_resumes_once_there_is_room(
    tmpfs: Path, database_url: str, tmp_path: Path
) -> None:
    env = {**os.environ, "DRAGDL_DATABASE_URL": database_url, "DRAGDL_WARM_WORKERS": "1"}
    env.pop("DRAGDL_RAY_ADDRESS", None)
    with dragdl_serve(tmpfs, tmp_path / "server.log", env=env, start_timeout_s=120) as url:
        client = httpx.Client(base_url=url, timeout=60, headers={"X-Requested-With": "test"})
        assert client.post("/api/auth/signup", json={"username": "ann", "password": "a long passphrase"})
        submitted = client.post("/api/tasks", json={"graph": slow_graph(epochs=3, batch_size=4)})
        assert submitted.status_code == 201, submitted.text
        task_id = submitted.json()["id"]
        checkpoints = tmpfs / "artifacts" / task_id / "checkpoints"
        wait_for(lambda: list(checkpoints.glob("ckpt-*.pt")), 300, "the first epoch's checkpoint")
        server_pid = int(json.loads((tmpfs / RECORD).read_text())["server_pid"])
        # The task's worker and the warm worker its launch started for the next CPU task.
        wait_for(lambda: len(task_workers(server_pid)) == 2, 120, "the task's and a warm worker")

        engine = make_engine(database_url)
        sessions = make_session_factory(engine)
        with sessions() as db:
            budget = db.get(Task, task_id).max_attempts  # type: ignore[union-attr]
        fill(tmpfs, ROOM_BYTES)

        def messages() -> list[str]:
            with sessions() as db:
                rows = db.scalars(
                    select(TaskEvent).where(TaskEvent.task_id == task_id).order_by(TaskEvent.id)
                )
                return [str(row.data.get("message", "")) for row in rows]

        def launches_refused() -> list[str]:
            return [m for m in messages() if m.startswith("the worker could not be started")]

        try:
            # Two launches refused: the first pass after the re-queue and one after its backoff.
            wait_for(lambda: len(launches_refused()) >= 2, 240, "two refused launches")
            seen = messages()
            infrastructure = [m for m in seen if m.startswith("infrastructure error")]
            assert infrastructure, seen  # the checkpoint's failure, not the task's own
            assert "No space left on device" in launches_refused()[0]
            assert "workers start again in" in launches_refused()[0]
            with sessions() as db:
                task = db.get(Task, task_id)
                assert task is not None and task.status == TaskStatus.QUEUED
                # The checkpoint's failure used up a retry; each refused launch gave its own back.
                assert task.max_attempts - budget == task.attempts - 1 >= 2
            # The failed attempt's worker ends; what is left is the idle warm worker at most, and no
            # pass while the disk stays full starts another (one leaked per pass before).
            wait_for(lambda: len(task_workers(server_pid)) <= 1, 60, "the failed attempt's worker to end")
            left = task_workers(server_pid)
            refused = len(launches_refused())
            wait_for(lambda: len(launches_refused()) > refused, 60, "one more refused launch")
            assert task_workers(server_pid) == left

            subprocess.run(["mount", "-o", "remount,size=128m", str(tmpfs)], check=True)

            def final() -> dict[str, object] | None:
                task: dict[str, object] = client.get(f"/api/tasks/{task_id}").json()
                return task if task["status"] in FINAL else None

            ended = wait_for(final, 300, "the task's end once the disk has room")
            assert ended["status"] == "SUCCEEDED", ended
            seen = messages()
            starts = [m for m in seen if m.startswith("attempt ") and " starting" in m]
            assert "(resuming)" in starts[-1], starts
            with sessions() as db:
                task = db.get(Task, task_id)
                assert task is not None
                assert task.max_attempts - budget == task.attempts - 2 == len(launches_refused())
            assert (tmpfs / "artifacts" / task_id / "model.safetensors").is_file()
            # Its worker ended; the warm worker refilled for the next task is the only one left.
            wait_for(lambda: len(task_workers(server_pid)) <= 1, 60, "the task's worker to end")
        finally:
            engine.dispose()

"""CPU-heavy work outside the server's process (issue 23's soak): a table upload is parsed, a
sequence set described and a sweep's importance computed by the CPU pool's worker process, so that
the GIL they held no longer delays every other user's requests; the pool's own contract (results
and errors come back, a full pool refuses at once with 503, a dead worker is replaced).

Where the work runs is checked by recording the readers in this process (the server's, under
TestClient): the worker imports its own copies, so the recorders stay empty once the work is moved,
and were called before. How fast the others are answered is a timing, measured by
`benchmarks/bench_abuse.py`; here the health checks of another user only have to go on while an
upload is being parsed (a pool waited for on the event loop would stop them all). SQLite only:
nothing here depends on the database engine."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session
from tests.engine.data.sequence_samples import series_set, ts_text
from tests.server.asgi import StreamedRequest, stream
from tests.server.test_sweep_bounds import LR, settled_sweep

from dragdl.engine.inputs import table_upload
from dragdl.server.services.cpu_pool import CpuPool, PoolBusy
from dragdl.server.services.uploads import UploadError
from dragdl.server.settings import Settings


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


def upload(client: TestClient, filename: str, data: bytes) -> Any:
    return client.post("/api/datasets", files=[("files", (filename, data))])


def recorder(calls: list[str], name: str, real: Any) -> Any:
    def record(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return real(*args, **kwargs)

    return record


def test_a_table_is_parsed_outside_the_server_while_another_user_is_answered(
    user_client: TestClient, other_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragdl.engine.data import tables

    here: list[str] = []
    monkeypatch.setattr(tables, "read_table", recorder(here, "read_table", tables.read_table))
    monkeypatch.setattr(
        table_upload, "check_table_shape", recorder(here, "check_table_shape", table_upload.check_table_shape)
    )
    rows = 300_000
    data = b"a,b,c\n" + b"".join(b"%d,%d.5,k%d\n" % (i, i, i % 7) for i in range(rows))
    answers: dict[str, Any] = {}
    sending = threading.Thread(target=lambda: answers.update(upload=upload(user_client, "big.csv", data)))
    sending.start()
    in_flight = 0
    while sending.is_alive():
        health = other_client.get("/api/health")
        assert health.status_code == 200, health.text
        in_flight += sending.is_alive()
    sending.join()
    response = answers["upload"]
    assert response.status_code == 201, response.text[:300]
    body = response.json()
    assert body["count"] == rows
    assert [(c["name"], c["kind"]) for c in body["columns"]] == [
        ("a", "number"),
        ("b", "number"),
        ("c", "category"),
    ]
    assert here == []  # neither checked nor read in the server's process
    assert in_flight >= 2, f"another user's health was answered {in_flight} times during the upload"


def test_a_sequence_set_is_described_outside_the_server(
    user_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragdl.engine.inputs.sequences import Sequences

    here: list[str] = []
    monkeypatch.setattr(
        Sequences, "describe_upload", recorder(here, "describe_upload", Sequences.describe_upload)
    )
    series = series_set(8, 1, [16] * 8, 0)
    text = ts_text(series, ["up", "down"] * 4, ["down", "up"]).encode()
    response = upload(user_client, "waves.ts", text)
    assert response.status_code == 201, response.text[:300]
    assert response.json()["kind"] == "sequence"
    assert here == []


def test_a_sweeps_importance_is_computed_outside_the_server(
    user_client: TestClient, db_session: Session, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    import optuna

    here: list[str] = []
    real = optuna.importance.get_param_importances
    monkeypatch.setattr(optuna.importance, "get_param_importances", recorder(here, "fanova", real))
    owner = user_client.user["id"]  # type: ignore[attr-defined]
    search = {"train": {**LR, "momentum": {"type": "float", "low": 0.0, "high": 0.9}}}
    sweep_id = settled_sweep(
        db_session, owner, search, 30, lambda n: {"train.lr": 0.01 + n / 100, "train.momentum": (n % 7) / 10}
    )
    assert user_client.get(f"/api/sweeps/{sweep_id}").status_code == 200  # starts the computation
    assert app.state.importance.wait_idle(120)
    body = user_client.get(f"/api/sweeps/{sweep_id}").json()
    assert set(body["importance"]) == {"train.lr", "train.momentum"}
    assert here == []


def test_an_upload_is_refused_with_503_while_the_pool_is_full(
    user_client: TestClient, app: FastAPI, settings: Settings
) -> None:
    pool = CpuPool(0, waiting=0)  # one job at a time, in the calling thread
    shared, app.state.cpu_pool = app.state.cpu_pool, pool
    release, started = threading.Event(), threading.Event()

    def hold() -> None:
        started.set()
        release.wait(60)

    holding = threading.Thread(target=pool.run, args=(hold,))
    holding.start()
    try:
        assert started.wait(60)
        response = upload(user_client, "t.csv", b"x,y\n1,2\n")
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"] == "5"
        assert "busy" in response.json()["detail"]
        # Nothing left behind (refused before the body was received: nothing was put there).
        assert not settings.datasets_dir.exists() or list(settings.datasets_dir.iterdir()) == []
    finally:
        release.set()
        holding.join()
    assert upload(user_client, "t.csv", b"x,y\n1,2\n").status_code == 201
    app.state.cpu_pool = shared


def test_one_users_uploads_leave_room_for_another_users(
    client: TestClient, user_client: TestClient, other_client: TestClient, app: FastAPI
) -> None:
    pool = CpuPool(0, waiting=2)  # three jobs at a time, at most two of one user's
    shared, app.state.cpu_pool = app.state.cpu_pool, pool
    alice = user_client.user["id"]  # type: ignore[attr-defined]
    release = threading.Event()
    started: list[threading.Event] = []

    def hold(owner: str | None) -> threading.Thread:
        began = threading.Event()
        started.append(began)

        def job() -> None:
            began.set()
            release.wait(60)

        view = pool if owner is None else pool.for_owner(owner)
        thread = threading.Thread(target=view.run, args=(job,))
        thread.start()
        assert began.wait(60)
        return thread

    holding = [hold(alice), hold(alice)]
    try:
        again = upload(user_client, "t.csv", b"x,y\n1,2\n")
        assert again.status_code == 503, again.text
        assert again.headers["Retry-After"] == "5"
        assert "your own 2 uploads are still being read" in again.json()["detail"]
        token = user_client.post("/api/auth/tokens", json={"name": "t"}).json()["token"]
        streamed = StreamedRequest(
            "POST",
            "/api/datasets",
            {"content-type": "multipart/form-data; boundary=b", "authorization": f"Bearer {token}"},
            [b"--b\r\n" + b"\0" * 1024**2] * 8,
        )
        stream(client, app, streamed)
        assert streamed.status == 503 and streamed.read == 0  # refused before its body is received
        # Another user's upload still goes in (run here by the zero-worker pool).
        assert upload(other_client, "t.csv", b"x,y\n1,2\n").status_code == 201
        holding.append(hold(None))  # the pool is now full: everyone waits
        full = upload(other_client, "t.csv", b"x,y\n1,2\n")
        assert full.status_code == 503 and "busy with 3 other uploads" in full.json()["detail"]
    finally:
        release.set()
        for thread in holding:
            thread.join()
    assert upload(user_client, "t.csv", b"x,y\n1,2\n").status_code == 201
    app.state.cpu_pool = shared


def test_a_users_share_leaves_room_in_the_smallest_pool() -> None:
    assert CpuPool(1, waiting=4).per_owner == 2
    assert CpuPool(0, waiting=1).per_owner == 1  # two jobs: one user takes one
    assert CpuPool(0, waiting=0).per_owner == 1  # one job: no room to share


class Unpicklable(Exception):
    def __init__(self, what: str, lock: Any) -> None:
        super().__init__(what)
        self.lock = lock


def raise_unpicklable() -> None:
    raise Unpicklable("cannot travel", threading.Lock())


def refuse_upload() -> None:
    raise UploadError("big.csv: above the limit", 413)


def test_jobs_run_in_a_worker_and_their_errors_come_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # The worker imports this module to run its functions, from the sys.path it is given (pytest
    # imports test modules without an entry for them).
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    pool = CpuPool(1)
    try:
        worker = pool.run(os.getpid)
        assert worker != os.getpid()
        assert pool.run(sorted, [3, 1, 2]) == [1, 2, 3]
        with pytest.raises(UploadError) as refused:
            pool.run(refuse_upload)
        assert (refused.value.status_code, refused.value.message) == (413, "big.csv: above the limit")
        with pytest.raises(RuntimeError, match="Unpicklable: cannot travel"):
            pool.run(raise_unpicklable)
        assert pool.run(os.getpid) == worker  # the same worker, still alive
        # A worker that dies fails its job with PoolBusy; the next job gets a new one.
        with pytest.raises(PoolBusy, match="stopped before it was done"):
            pool.run(os._exit, 1)
        replaced = pool.run(os.getpid)
        assert replaced not in (worker, os.getpid())
    finally:
        pool.close()


POOL_OWNER = """
import os, sys
from dragdl.server.services.cpu_pool import CpuPool

pool = CpuPool(1)
print(pool.run(os.getpid), flush=True)  # the worker's pid, once it runs
sys.stdin.read()  # wait to be killed
"""


def test_a_killed_servers_workers_end_by_themselves() -> None:
    """A server killed with SIGKILL cannot end its pool: its worker notices and exits."""
    import signal
    import subprocess
    import sys
    import time

    owner = subprocess.Popen(
        [sys.executable, "-c", POOL_OWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        worker = int(owner.stdout.readline())
        os.kill(worker, 0)  # running
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _alive(worker):
            assert time.monotonic() < deadline, f"pool worker {worker} outlived its killed server"
            time.sleep(0.2)
    finally:
        owner.kill()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # An exited child of init is reaped at once; a zombie counts as ended.
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"

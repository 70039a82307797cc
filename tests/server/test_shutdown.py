"""The server stopped under running tasks: SIGTERM checkpoints them for the next start; after a SIGKILL
the next start ends the Ray processes the killed server left behind."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from dragdl.engine.train.checkpoint import latest_checkpoint

from ..runner.support import descendants, digits_graph, process_alive, slow_graph, wait_for
from .test_fault_tolerance import Server, second_start, servers, task_status, worker_pid
from .test_tasks import FINAL, epoch_metrics, get, read_stream, statuses

__all__ = ["servers"]  # the fixture, used here too

EPOCHS = 6
"""Enough epochs that the run is still going when the signal's request reaches the worker, on a fast
machine too (an epoch of `slow_graph` takes about a second there)."""


@pytest.mark.slow
def test_sigterm_checkpoints_mid_epoch_and_the_next_start_resumes_there(
    tmp_path: Path, servers: list[Server]
) -> None:
    data_dir = tmp_path / "data"
    first = Server(data_dir, tmp_path / "server.log")
    servers.append(first)
    # Epochs of many seconds, so that the signal lands in the middle of one (the worker sees the
    # request at its next heartbeat, within a second).
    # Batches of one: epochs of two seconds or more even on a fast machine.
    graph = slow_graph(epochs=EPOCHS, batch_size=1)
    created = first.http.post("/api/tasks", json={"graph": graph}, timeout=120)
    assert created.status_code == 201, created.text
    task_id = created.json()["id"]

    def in_epoch_2() -> bool:
        task = get(first.http, task_id)
        assert task["status"] not in FINAL, task
        return task["epoch"] >= 2 and len(epoch_metrics(first.http, task_id)) >= 1

    wait_for(in_epoch_2, 240, "epoch 1 recorded and epoch 2 under way", every_s=0.1)
    old_worker = worker_pid(data_dir, task_id)
    assert old_worker is not None
    first.terminate()  # returns once the server has exited
    wait_for(lambda: not process_alive(old_worker), 30, "the old worker to end with the server's Ray")
    assert task_status(data_dir, task_id) == "QUEUED"  # handed back, not STOPPED, not left RUNNING
    checkpoint = latest_checkpoint(data_dir / "artifacts" / task_id)
    assert checkpoint is not None
    epoch, step = (int(part) for part in checkpoint.stem.split("-")[1:])
    assert epoch >= 2 and step > 0, f"{checkpoint.name} is not a checkpoint taken after epoch 1"

    second = Server(data_dir, tmp_path / "server.log")
    servers.append(second)
    done = wait_for(
        lambda: (task := get(second.http, task_id))["status"] in FINAL and task,
        300,
        "the task to finish on the restarted server",
    )
    assert done["status"] == "SUCCEEDED", done["error"]
    assert done["attempts"] == 2 and done["max_attempts"] == 4  # a shutdown does not use up a retry
    events = read_stream(second.http, task_id)
    assert statuses(events) == ["QUEUED", "RUNNING", "QUEUED", "RUNNING", "SUCCEEDED"]
    assert "shutting down" in [e["data"]["message"] for e in events if e["event"] == "status"][2]
    resumed = second_start(events)
    # The run goes on from the checkpoint it handed back: within its epoch, or (when the request
    # arrived as the epoch ended) at the start of the next one.
    expected = (epoch + 1, 0) if step == resumed["steps_per_epoch"] else (epoch, step)
    assert (resumed["resumed_from_epoch"], resumed["resumed_from_step"]) == expected
    assert epoch_metrics(second.http, task_id) == list(range(1, EPOCHS + 1))


SIGTERMS = 3
"""Stops in a row: the abort raced the shutdown (3 in 5 stops before the fix)."""


@pytest.mark.slow
def test_sigterm_under_a_running_task_exits_cleanly_and_leaves_no_ray(
    tmp_path: Path, servers: list[Server]
) -> None:
    data_dir = tmp_path / "data"
    task_id = ""
    workers: list[int | None] = [None]
    for stop in range(1, SIGTERMS + 1):
        log = tmp_path / f"server-{stop}.log"
        server = Server(data_dir, log)
        servers.append(server)
        if not task_id:  # one long task, resumed by each next start: always a worker to suspend
            graph = slow_graph(epochs=50)
            created = server.http.post("/api/tasks", json={"graph": graph}, timeout=120)
            assert created.status_code == 201, created.text
            task_id = created.json()["id"]
        worker = wait_for(
            lambda task_id=task_id: (pid := worker_pid(data_dir, task_id)) not in workers and pid,
            240,
            f"stop {stop}: a worker to run the task",
        )
        workers.append(worker)
        server.terminate()  # returns once the server has exited
        text = log.read_text(errors="replace")
        # Before the fix Ray's crash handler took the signal: a stack dump, then SIGABRT (-6) 3 s on.
        # After its graceful shutdown uvicorn raises the signal it caught again: -SIGTERM is its
        # normal end, told apart from a death by the signal by the "Finished" line below.
        code = server.process.returncode
        assert code in (0, -signal.SIGTERM), f"stop {stop}: exit code {code}"
        assert "Finished server process" in text, f"stop {stop}: uvicorn did not finish:\n{text[-3000:]}"
        assert "SIGTERM received" not in text, f"stop {stop}: Ray's signal handler ran:\n{text[-3000:]}"
        wait_for(
            lambda tree=server.tree: not [pid for pid in tree if process_alive(pid)],
            30,
            f"stop {stop}: the server's Ray processes to end with it",
        )
        assert task_status(data_dir, task_id) == "QUEUED"  # handed back for the next start


@pytest.mark.slow
def test_the_next_start_ends_the_ray_processes_a_killed_server_left(
    tmp_path: Path, servers: list[Server]
) -> None:
    data_dir = tmp_path / "data"
    first = Server(data_dir, tmp_path / "server.log")
    servers.append(first)
    created = first.http.post(
        "/api/tasks", json={"graph": digits_graph(epochs=200, batch_size=1)}, timeout=120
    )
    assert created.status_code == 201, created.text
    task_id = created.json()["id"]
    wait_for(lambda: worker_pid(data_dir, task_id), 240, "the task's worker to start")
    ray_processes = descendants(first.process.pid)
    assert ray_processes
    first.kill()

    alive_at_restart = [pid for pid in ray_processes if process_alive(pid)]
    assert alive_at_restart, "nothing of the old Ray outlived its server: the test shows nothing"
    second = Server(data_dir, tmp_path / "server.log")
    servers.append(second)
    # Ended while the new server started: once it answers, they are gone (allowing for reaping).
    wait_for(
        lambda: not [pid for pid in alive_at_restart if process_alive(pid)],
        5,
        "the old server's Ray processes to be gone",
    )

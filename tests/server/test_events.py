"""Live task events over a real uvicorn server: many open streams leave the database pool to everyone
else, every viewer gets every event once and in order, Last-Event-ID resumes, and each user's streams
are capped.

The runner is `IdleRunner` (no Ray): the test plays the worker, starting the attempt and writing its
events through the worker's own `DBReporter`. Every wait polls a condition with a deadline.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task, TaskEvent, TaskStatus
from dragdl.engine.train.events import LogEvent
from dragdl.runner.reporter import DBReporter
from dragdl.runner.transitions import finish, start_attempt
from dragdl.server import app as app_module
from dragdl.server.app import create_app
from dragdl.server.services.event_hub import EventHub
from dragdl.server.settings import Settings

from ..graphs import chain
from ..runner.support import wait_for
from ..servers import IdleRunner, serving
from .conftest import CSRF_HEADERS, PASSWORD

GRAPH = chain(
    "Events",
    [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("flat", "layer.Flatten", {}),
        ("fc", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 1, "device": "cpu", "seed": 0}),
    ],
)
PROMPT_S = 5.0
"""What "still answers" means while streams are open (the pool's own wait is 30 s)."""
SQLITE = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


@dataclass
class Served:
    app: FastAPI
    url: str
    settings: Settings
    clients: list[httpx.Client] = field(default_factory=list)

    def user(self, username: str) -> httpx.Client:
        """A client of a new account, authenticated with an API token (the first account is admin)."""
        with httpx.Client(base_url=self.url, timeout=30) as browser:
            signup = browser.post("/api/auth/signup", json={"username": username, "password": PASSWORD})
            assert signup.status_code == 201, signup.text
            token = browser.post("/api/auth/tokens", json={"name": "events"}, headers=CSRF_HEADERS)
            assert token.status_code == 201, token.text
        headers = {"Authorization": f"Bearer {token.json()['token']}"}
        client = httpx.Client(base_url=self.url, timeout=PROMPT_S, headers=headers)
        self.clients.append(client)
        return client

    def task(self, client: httpx.Client) -> str:
        created = client.post("/api/tasks", json={"graph": GRAPH}, timeout=60)
        assert created.status_code == 201, created.text
        return str(created.json()["id"])

    def event_ids(self, task_id: str) -> list[int]:
        with self.app.state.sessions() as db:
            query = select(TaskEvent.id).where(TaskEvent.task_id == task_id).order_by(TaskEvent.id)
            return list(db.scalars(query))


@contextmanager
def serve(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    monkeypatch.setattr(app_module, "create_runner", lambda settings, sessions: IdleRunner())
    app = create_app(settings)
    with serving(app) as url:
        served = Served(app, url, settings)
        try:
            yield served
        finally:
            for client in served.clients:
                client.close()


@pytest.fixture
def served(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    with serve(settings, monkeypatch) as server:
        yield server


class Worker:
    """Plays a task's worker: starts its attempt, then writes events as `DBReporter` does in Ray."""

    def __init__(self, served: Served, task_id: str) -> None:
        self.sessions = served.app.state.sessions
        self.task_id = task_id
        with self.sessions() as db:
            ref = start_attempt(db, db.get_one(Task, task_id), "attempt 1 started")
        assert ref is not None
        self.worker_ref = ref
        self.reporter = DBReporter(self.sessions, task_id, ref, served.settings.data_dir, min_interval_s=0)
        self.lines = 0

    def log(self, count: int) -> None:
        for _ in range(count):
            self.lines += 1
            self.reporter.emit(LogEvent(level="info", message=f"line {self.lines}"))

    def succeed(self) -> None:
        with self.sessions() as db:
            assert finish(db, self.task_id, TaskStatus.SUCCEEDED, "done", worker_ref=self.worker_ref)


def parse(lines: Iterator[str]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    current: dict[str, Any] = {}
    for line in lines:
        if line.startswith("id: "):
            current["id"] = int(line[4:])
        elif line.startswith("event: "):
            current["event"] = line[7:]
        elif line.startswith("data: "):
            current["data"] = json.loads(line[6:])
        elif not line and "id" in current:
            yield current["id"], current["event"], current["data"]
            current = {}


class Follower(threading.Thread):
    """Follows a task's stream in a thread until it ends; `opened` is set once the answer's head came."""

    def __init__(self, client: httpx.Client, task_id: str, last_event_id: int | None = None) -> None:
        super().__init__(daemon=True)
        self.client, self.task_id = client, task_id
        self.headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
        self.ids: list[int] = []
        self.statuses: list[str] = []
        self.status_code: int | None = None
        self.error: str | None = None
        self.opened = threading.Event()

    def run(self) -> None:
        try:
            path = f"/api/tasks/{self.task_id}/events"
            with self.client.stream("GET", path, headers=self.headers, timeout=60) as response:
                self.status_code = response.status_code
                self.opened.set()
                for event_id, kind, data in parse(response.iter_lines()):
                    self.ids.append(event_id)
                    if kind == "status":
                        self.statuses.append(data["status"])
        except Exception as exc:  # reported by the test, not lost in the thread
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.opened.set()


def follow(client: httpx.Client, task_id: str, last_event_id: int | None = None) -> Follower:
    follower = Follower(client, task_id, last_event_id)
    follower.start()
    assert follower.opened.wait(30), "the stream did not open"
    assert follower.status_code == 200, (follower.status_code, follower.error)
    return follower


def joined(followers: list[Follower], timeout_s: float = 60) -> None:
    for follower in followers:
        follower.join(timeout_s)
        assert not follower.is_alive(), "a stream did not end after the task's final status"
        assert follower.error is None, follower.error


# --- (a) open streams leave the database pool to everyone else ------------------------------------------


def test_open_streams_hold_no_database_connection(served: Served) -> None:
    pool = served.app.state.sessions.kw["bind"].pool
    streams = pool.size() + pool._max_overflow + 6  # more than the pool can ever hand out
    users = [served.user(f"viewer{n}") for n in range(2)]  # each user within the stream cap
    tasks = [served.task(user) for user in users]
    with ExitStack() as open_streams:
        for n in range(streams):
            client, task_id = users[n % 2], tasks[n % 2]
            try:
                response = open_streams.enter_context(client.stream("GET", f"/api/tasks/{task_id}/events"))
            except httpx.TimeoutException:
                pytest.fail(f"stream {n + 1} of {streams} did not open within {PROMPT_S} s")
            assert response.status_code == 200, (n, response.status_code, response.read())
        started = time.monotonic()
        health = users[0].get("/api/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        me = users[1].get("/api/auth/me")
        assert me.status_code == 200 and me.json()["username"] == "viewer1"
        task = users[0].get(f"/api/tasks/{tasks[0]}")
        assert task.status_code == 200 and task.json()["status"] == "QUEUED"
        listing = users[0].get("/api/tasks")
        assert listing.status_code == 200 and listing.json()["count"] == 1
        assert time.monotonic() - started < PROMPT_S * 2
        checked_out = pool.checkedout()
        assert checked_out <= 4, f"{checked_out} database connections held by {streams} idle streams"


# --- (b) many viewers, every event once and in order ----------------------------------------------------


def test_many_viewers_of_a_task_get_every_event_once_in_order(served: Served) -> None:
    users = [served.user(f"viewer{n}") for n in range(3)]
    admin = users[0]  # the first account: an administrator, who may watch anyone's task
    task_id = served.task(users[1])
    viewers = [users[1], admin]
    early = [follow(viewers[n % 2], task_id) for n in range(12)]
    worker = Worker(served, task_id)
    worker.log(40)
    late = [follow(viewers[n % 2], task_id) for n in range(12)]  # join a watcher that is running
    worker.log(40)
    worker.succeed()
    followers = early + late
    joined(followers)
    written = served.event_ids(task_id)
    assert len(written) == 2 + 80 + 1  # QUEUED, RUNNING, the logs, SUCCEEDED
    for follower in followers:
        assert follower.ids == written
        assert follower.statuses == ["QUEUED", "RUNNING", "SUCCEEDED"]
    assert served.app.state.events.watchers == {}  # the watcher stopped with the task
    assert served.app.state.events.open_streams == {}
    assert users[2].get(f"/api/tasks/{task_id}/events").status_code == 404  # not theirs


# --- (c) Last-Event-ID ----------------------------------------------------------------------------------


def test_last_event_id_resumes_without_gaps_or_repeats(served: Served) -> None:
    client = served.user("viewer")
    task_id = served.task(client)
    worker = Worker(served, task_id)
    worker.log(10)
    ids = served.event_ids(task_id)
    # Resumed live: the history after the id, then what is written while it is open.
    resumed = follow(client, task_id, last_event_id=ids[4])
    worker.log(10)
    wait_for(lambda: len(resumed.ids) >= len(ids) - 5 + 10, 30, "the resumed stream to follow live")
    worker.succeed()
    joined([resumed])
    everything = served.event_ids(task_id)
    assert resumed.ids == everything[5:]
    # A finished task: the rest of its history, then the stream ends; `?after=` does the same.
    assert [i for i, _, _ in parse(iter(read(client, task_id, ids[-1]).splitlines()))] == [
        i for i in everything if i > ids[-1]
    ]
    after = client.get(f"/api/tasks/{task_id}/events", params={"after": everything[-2]}).text
    assert f"id: {everything[-1]}\n" in after and f"id: {everything[-2]}\n" not in after
    assert "id: " not in read(client, task_id, everything[-1])


def read(client: httpx.Client, task_id: str, last_event_id: int) -> str:
    response = client.get(f"/api/tasks/{task_id}/events", headers={"Last-Event-ID": str(last_event_id)})
    assert response.status_code == 200
    return response.text


# --- (d) the cap ----------------------------------------------------------------------------------------


@SQLITE
def test_streams_are_capped_per_user_and_a_closed_one_frees_its_slot(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(replace(settings, max_event_streams_per_user=3), monkeypatch) as served:
        alice, bob = served.user("alice"), served.user("bob")
        task_id = served.task(alice)
        path = f"/api/tasks/{task_id}/events"
        with ExitStack() as first:
            opened = [first.enter_context(alice.stream("GET", path)) for _ in range(3)]
            assert [response.status_code for response in opened] == [200] * 3
            refused = alice.get(path)
            assert refused.status_code == 429, refused.text
            assert "3 of the 3" in refused.json()["detail"]
            assert int(refused.headers["Retry-After"]) > 0
            bob_task = served.task(bob)  # another user's allowance is their own
            with bob.stream("GET", f"/api/tasks/{bob_task}/events") as other:
                assert other.status_code == 200
            opened[0].close()  # the client goes away: its slot comes back

            def reopened() -> httpx.Response | None:
                response = first.enter_context(alice.stream("GET", path))
                if response.status_code == 429:
                    response.close()
                    return None
                return response

            assert wait_for(reopened, 30, "a slot to be free again", every_s=0.1).status_code == 200
        # All closed: the whole allowance is back.
        wait_for(lambda: not served.app.state.events.open_streams, 30, "every stream to close")
        with ExitStack() as second:
            again = [second.enter_context(alice.stream("GET", path)) for _ in range(3)]
            assert [response.status_code for response in again] == [200] * 3


# --- slow viewers -----------------------------------------------------------------------------------------


def test_a_viewer_that_falls_behind_is_ended_and_catches_up_on_reconnect(served: Served) -> None:
    # Over loopback a stalled client's socket buffers megabytes, so the hub is driven directly here: a
    # viewer whose stream is not read on while the task writes is the stalled client.
    client = served.user("viewer")
    task_id = served.task(client)
    worker = Worker(served, task_id)
    written = asyncio.run(_stalled_and_fast_viewers(served.app.state.sessions, task_id, worker))
    assert written == served.event_ids(task_id)


async def _stalled_and_fast_viewers(
    sessions: sessionmaker[Session], task_id: str, worker: Worker
) -> list[int]:
    hub = EventHub(sessions, 10, poll_s=0.05, backlog=15)
    stalled, fast = hub.open(1, task_id, 0), hub.open(1, task_id, 0)
    fast_ids = asyncio.create_task(_ids(fast.stream()))
    chunks = stalled.stream()
    seen = _chunk_ids([await anext(chunks) for _ in range(2)])  # retry:, then QUEUED and RUNNING
    waiting = asyncio.create_task(anext(chunks))  # joins the watcher, then waits for events
    watching = hub.watchers.get
    await _until(lambda: {stalled, fast} <= getattr(watching(task_id), "viewers", set()))
    await asyncio.to_thread(worker.log, 10)
    seen += _chunk_ids([await waiting])  # then not read on: at most 9 wait in its queue
    await asyncio.to_thread(worker.log, 20)
    await _until(lambda: stalled.ended or len(stalled.pending) >= 15)  # its backlog is full
    await asyncio.to_thread(worker.log, 5)  # more for a viewer that has its backlog unsent: ended
    await _until(lambda: stalled.ended)
    seen += await _ids(chunks)
    assert 2 < len(seen) <= 2 + 10, seen  # nothing more came: the stalled viewer was cut off
    assert hub.open_streams[1] == 1  # its slot is free
    await asyncio.to_thread(worker.succeed)
    everything = await fast_ids  # the fast viewer got every event and then the end
    assert len(everything) == 2 + 35 + 1
    resumed = await _ids(hub.open(1, task_id, seen[-1]).stream())  # the client reconnects: the rest
    assert seen + resumed == everything
    assert hub.watchers == {} and hub.open_streams == {}
    await hub.close()
    return everything


async def _ids(chunks: AsyncIterator[bytes]) -> list[int]:
    return _chunk_ids([chunk async for chunk in chunks])


def _chunk_ids(chunks: list[bytes]) -> list[int]:
    return [int(line[4:]) for chunk in chunks for line in chunk.split(b"\n") if line.startswith(b"id: ")]


async def _until(condition: Callable[[], bool], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)  # polling interval, bounded by the deadline

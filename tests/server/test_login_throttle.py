"""Login throttling: per account and per address with growing blocks (429 + Retry-After), success
clears the account, and password checks run a few at a time without starving other requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dragdl.server import auth
from dragdl.server.throttle import LoginThrottle

from .conftest import PASSWORD


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(app: FastAPI) -> Clock:
    clock = Clock()
    app.state.login_throttle = LoginThrottle(clock=clock)
    return clock


def signup_alice(client: TestClient) -> None:
    response = client.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD})
    assert response.status_code == 201, response.text


def login(client: TestClient, username: str, password: str) -> tuple[int, str | None]:
    response = client.post("/api/auth/login", json={"username": username, "password": password})
    return response.status_code, response.headers.get("retry-after")


def test_an_account_is_blocked_after_repeated_failures_for_growing_times(
    client: TestClient, anon_client: TestClient, clock: Clock
) -> None:
    assert (
        anon_client.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD}).status_code
        == 201
    )
    assert [login(client, "alice", "wrong password")[0] for _ in range(5)] == [401] * 5
    assert login(client, "alice", "wrong password") == (429, "1")
    assert login(client, "Alice", PASSWORD) == (429, "1")  # even the right password, any case
    clock.now += 1
    assert login(client, "alice", "wrong password") == (401, None)
    assert login(client, "alice", "wrong password") == (429, "2")
    clock.now += 2
    assert login(client, "alice", "wrong password")[0] == 401
    assert login(client, "alice", PASSWORD) == (429, "4")
    clock.now += 4
    assert login(client, "alice", PASSWORD) == (200, None)
    assert [login(client, "alice", "wrong password")[0] for _ in range(5)] == [401] * 5  # success cleared it


def test_an_address_is_blocked_across_accounts(
    client: TestClient, anon_client: TestClient, clock: Clock
) -> None:
    assert (
        anon_client.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD}).status_code
        == 201
    )
    answers = [login(client, f"guess{i}", "wrong password")[0] for i in range(20)]
    assert answers == [401] * 20
    status, retry = login(client, "alice", PASSWORD)
    assert status == 429 and retry == "1"
    clock.now += 1
    assert login(client, "alice", PASSWORD)[0] == 200


def test_the_429_names_the_wait(client: TestClient, clock: Clock) -> None:
    for _ in range(5):
        login(client, "nobody", "wrong password")
    response = client.post("/api/auth/login", json={"username": "nobody", "password": "x"})
    assert response.status_code == 429
    assert response.json()["detail"] == "too many failed sign-ins: try again in 1 s"


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_password_checks_run_a_few_at_a_time_and_others_stay_served(
    client: TestClient, anon_client: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (
        anon_client.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD}).status_code
        == 201
    )
    limit = app.state.settings.login_concurrency
    release = threading.Event()
    lock = threading.Lock()
    running = 0
    peak = 0
    verify = auth.verify_password

    def held(password_hash: str, password: str) -> bool:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        try:
            assert release.wait(60), "never released"
            return verify(password_hash, password)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr("dragdl.server.services.users.verify_password", held)
    logins = 12  # through `client` alone: one event loop, as under uvicorn (a bare TestClient: one a request)
    with ThreadPoolExecutor(max_workers=logins) as pool:
        futures = [pool.submit(login, client, "alice", PASSWORD) for _ in range(logins)]
        wait_for(lambda: running == limit, f"{limit} password checks to start")
        assert client.get("/api/health").status_code == 200  # answered while every login is pending
        assert client.get("/api/catalog").status_code == 200  # a thread-pool route too
        assert running == limit and not any(future.done() for future in futures)
        release.set()
        answers = [future.result(timeout=60) for future in futures]
    assert answers == [(200, None)] * logins
    assert peak == limit

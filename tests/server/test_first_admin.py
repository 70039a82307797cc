"""The first sign-up of a server becomes its administrator: exactly one, however many sign up at once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response

from dragdl.server.services import users as user_service

from .conftest import PASSWORD

SIGNUPS = 6


def test_concurrent_first_signups_make_exactly_one_administrator(
    client: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every sign-up first looks whether an account exists, then hashes the password, then stores
    # the account. The barrier holds each request after its look until all of them have looked, so
    # the requests interleave in the way that made two administrators, on every run and database.
    barrier = threading.Barrier(SIGNUPS, timeout=30)
    hash_password = user_service.hash_password

    def hash_when_all_have_looked(password: str) -> str:
        barrier.wait()
        return hash_password(password)

    monkeypatch.setattr(user_service, "hash_password", hash_when_all_have_looked)

    def signup(index: int) -> Response:
        body: dict[str, Any] = {"username": f"user{index}", "password": PASSWORD}
        return TestClient(app).post("/api/auth/signup", json=body)

    with ThreadPoolExecutor(SIGNUPS) as pool:
        answers = list(pool.map(signup, range(SIGNUPS)))

    assert [a.status_code for a in answers] == [201] * SIGNUPS, [a.text for a in answers]
    admins = [a.json()["username"] for a in answers if a.json()["is_admin"]]
    assert len(admins) == 1, f"administrators: {admins}"
    listed = TestClient(app)
    listed.post("/api/auth/login", json={"username": admins[0], "password": PASSWORD})
    users = listed.get("/api/users").json()["data"]
    assert sorted(u["username"] for u in users if u["is_admin"]) == admins
    assert len(users) == SIGNUPS

"""Shared server fixtures: both databases, the app with its lifespan, and signed-in clients.

Fixtures (all function-scoped unless noted):

- `db_url`: parametrized over `sqlite` (a file under `tmp_path`) and `postgresql` (one database per
  test session, created on first use, emptied before each test, dropped at the end). A module or test
  that only needs one database narrows it with
  `@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)`.
  PostgreSQL is `$DRAGDL_TEST_POSTGRES_URL` (default: the local server); when it cannot be reached the
  `postgresql` cases are skipped with the reason shown.
- `settings`: `Settings` with the data dir under `tmp_path` and `db_url`; override the fixture in a
  module (or use `dataclasses.replace(settings, ...)` before `app`) to change options.
- `app`: `create_app(settings)`, lifespan not yet run.
- `client`: an anonymous `TestClient` entered as a context manager, so the lifespan (migrations,
  runner) runs once per test. Every other client of the test shares that app and its state.
- `anon_client`: another anonymous client (no cookie), for 401 checks next to signed-in ones.
- `db_session`: a SQLAlchemy `Session` on the app's database (after the lifespan started).
- `make_client(username, admin=False, *, auth="cookie", password=PASSWORD) -> TestClient`: signs the
  user up through the API unless it exists, then returns a new signed-in client (each call logs in
  anew; `auth="token"` creates a personal API token and sends it as `Authorization: Bearer`). The
  first account of a server becomes admin, so the helper first creates the bootstrap administrator
  `root`; `admin=True` makes the new user an administrator through `PATCH /api/users/{id}`. Cookie
  clients send `X-Requested-With` on every request (the CSRF rule, see `dragdl.server.auth`). Each
  returned client has a `.user` dict (the `UserPublic` JSON).
- `admin_client`: the bootstrap administrator (`root`); `user_client` (`alice`) and `other_client`
  (`bob`): two ordinary users.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Protocol

import pytest
from argon2 import PasswordHasher, profiles
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from dragdl.db.models import Base
from dragdl.server import auth
from dragdl.server.app import create_app
from dragdl.server.settings import Settings

PASSWORD = "correct horse battery"
BOOTSTRAP_ADMIN = "root"
CSRF_HEADERS = {"X-Requested-With": "XMLHttpRequest"}
POSTGRES_URL = os.environ.get("DRAGDL_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


class PostgresDatabases:
    """Creates throw-away PostgreSQL databases on the test server and drops them at the end."""

    def __init__(self, server_url: str) -> None:
        self.server_url = make_url(server_url)
        self.created: list[str] = []
        self.error: str | None = None
        self._shared: str | None = None
        try:
            self._admin = create_engine(self.server_url, isolation_level="AUTOCOMMIT")
            with self._admin.connect() as conn:
                conn.execute(text("SELECT 1"))
        except Exception as exc:  # any driver or network error means: no PostgreSQL here
            self.error = f"PostgreSQL not reachable at {server_url}: {exc}"

    def create(self, prefix: str = "dragdl_test") -> str:
        """A new empty database; returns its URL."""
        if self.error:
            pytest.skip(self.error)
        name = f"{prefix}_{os.getpid()}_{secrets.token_hex(4)}"
        with self._admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        self.created.append(name)
        return self.server_url.set(database=name).render_as_string(hide_password=False)

    def drop(self, url: str) -> None:
        name = make_url(url).database
        with self._admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        if name in self.created:
            self.created.remove(name)

    def shared(self) -> str:
        """The session's database for app tests, emptied (but not dropped) before each test."""
        if self._shared is None:
            self._shared = self.create()
        else:
            truncate_all(self._shared)
        return self._shared

    def close(self) -> None:
        if self.error:
            return
        for name in list(self.created):
            with self._admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self._admin.dispose()


def truncate_all(url: str) -> None:
    """Empty every table of the models (not `alembic_version`), resetting sequences."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("SET LOCAL lock_timeout = '10s'"))
            existing = set(
                conn.scalars(text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"))
            )
            names = [f'"{t.name}"' for t in Base.metadata.sorted_tables if t.name in existing]
            if names:
                conn.execute(text(f"TRUNCATE {', '.join(names)} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()


@pytest.fixture(scope="session", autouse=True)
def cheap_password_hashing() -> Iterator[None]:
    """Production argon2 costs ~0.3 s a hash on a busy CI core; tests hash hundreds of passwords."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(auth, "_hasher", PasswordHasher.from_parameters(profiles.CHEAPEST))
        auth._dummy_hash.cache_clear()
        yield
    auth._dummy_hash.cache_clear()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresDatabases]:
    databases = PostgresDatabases(POSTGRES_URL)
    try:
        yield databases
    finally:
        databases.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'dragdl.db'}"
    if request.param == "postgresql":
        databases: PostgresDatabases = request.getfixturevalue("postgres")
        return databases.shared()
    raise ValueError(f"db_url: unknown database {request.param!r} (use 'sqlite' or 'postgresql')")


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    return Settings(data_dir=tmp_path / "data", database_url=db_url)


@pytest.fixture
def app(settings: Settings) -> FastAPI:
    return create_app(settings)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def anon_client(client: TestClient, app: FastAPI) -> TestClient:
    return TestClient(app)


@pytest.fixture
def db_session(client: TestClient, app: FastAPI) -> Iterator[Session]:
    with app.state.sessions() as session:
        yield session


class MakeClient(Protocol):
    def __call__(
        self,
        username: str,
        admin: bool = False,
        *,
        auth: Literal["cookie", "token"] = "cookie",
        password: str = PASSWORD,
    ) -> TestClient: ...


def _expect(response: Any, status: int, what: str) -> dict[str, Any]:
    assert response.status_code == status, f"{what}: {response.status_code} {response.text}"
    body: dict[str, Any] = response.json()
    return body


@pytest.fixture
def make_client(client: TestClient, app: FastAPI) -> MakeClient:
    clients: dict[str, TestClient] = {}

    def signed_in(username: str, password: str, auth: str) -> TestClient:
        new = TestClient(app)
        if auth == "cookie":
            new.headers.update(CSRF_HEADERS)
            _expect(
                new.post("/api/auth/login", json={"username": username, "password": password}), 200, "login"
            )
        else:
            login = TestClient(app)
            _expect(
                login.post("/api/auth/login", json={"username": username, "password": password}), 200, "login"
            )
            token = _expect(
                login.post("/api/auth/tokens", json={"name": "tests"}, headers=CSRF_HEADERS), 201, "token"
            )
            new.headers["Authorization"] = f"Bearer {token['token']}"
        me = _expect(new.get("/api/auth/me"), 200, "me")
        new.user = me  # type: ignore[attr-defined]
        return new

    def bootstrap_admin() -> TestClient:
        if BOOTSTRAP_ADMIN not in clients:
            signup = client.post("/api/auth/signup", json={"username": BOOTSTRAP_ADMIN, "password": PASSWORD})
            if signup.status_code != 409:  # already there when a test created it itself
                _expect(signup, 201, f"signup {BOOTSTRAP_ADMIN}")
            clients[BOOTSTRAP_ADMIN] = signed_in(BOOTSTRAP_ADMIN, PASSWORD, "cookie")
        return clients[BOOTSTRAP_ADMIN]

    def make(
        username: str,
        admin: bool = False,
        *,
        auth: Literal["cookie", "token"] = "cookie",
        password: str = PASSWORD,
    ) -> TestClient:
        root = bootstrap_admin()
        if username == BOOTSTRAP_ADMIN:
            return signed_in(username, PASSWORD, auth)
        signup = TestClient(app).post("/api/auth/signup", json={"username": username, "password": password})
        if signup.status_code != 409:
            user = _expect(signup, 201, f"signup {username}")
            if admin:
                _expect(root.patch(f"/api/users/{user['id']}", json={"is_admin": True}), 200, "promote")
        return signed_in(username, password, auth)

    return make


@pytest.fixture
def admin_client(make_client: MakeClient) -> TestClient:
    return make_client(BOOTSTRAP_ADMIN, admin=True)


@pytest.fixture
def user_client(make_client: MakeClient) -> TestClient:
    return make_client("alice")


@pytest.fixture
def other_client(make_client: MakeClient) -> TestClient:
    return make_client("bob")

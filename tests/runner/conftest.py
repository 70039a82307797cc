"""A migrated database with users and tasks, for the runner's tests (no server, no Ray).

SQLite unless a test asks for both databases with
`@pytest.mark.parametrize("config", ["sqlite", "postgresql"], indirect=True)`: PostgreSQL is
`$DRAGDL_TEST_POSTGRES_URL` (default: the local server), one throw-away database per test, skipped
with the reason when it cannot be reached.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.migrate import upgrade_database
from dragdl.db.models import Task, TaskStatus, User
from dragdl.db.session import make_engine, make_session_factory
from dragdl.runner.base import WorkerConfig

from .support import digits_graph

MakeTask = Callable[..., Task]


POSTGRES_URL = os.environ.get("DRAGDL_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A new empty PostgreSQL database for one test, dropped afterwards."""
    server = make_url(POSTGRES_URL)
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    name = f"dragdl_runner_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # any driver or network error means: no PostgreSQL here
        admin.dispose()
        pytest.skip(f"PostgreSQL not reachable at {POSTGRES_URL}: {exc}")
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def config(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[WorkerConfig]:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    database = getattr(request, "param", "sqlite")
    if database == "sqlite":
        yield WorkerConfig(database_url=f"sqlite:///{tmp_path / 'runner.db'}", data_dir=data_dir)
        return
    if database != "postgresql":
        raise ValueError(f"config: unknown database {database!r} (use 'sqlite' or 'postgresql')")
    with postgres_database() as url:
        yield WorkerConfig(database_url=url, data_dir=data_dir)


@pytest.fixture
def sessions(config: WorkerConfig) -> Iterator[sessionmaker[Session]]:
    upgrade_database(config.database_url)
    engine = make_engine(config.database_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def make_user(sessions: sessionmaker[Session]) -> Callable[..., User]:
    def make(name: str, quota: int | None = None) -> User:
        with sessions() as db:
            user = User(username=name, password_hash="!", max_running_tasks=quota)
            db.add(user)
            db.commit()
            return user

    return make


@pytest.fixture
def make_task(sessions: sessionmaker[Session]) -> MakeTask:
    def make(owner: User, name: str = "t", graph: dict[str, Any] | None = None, **values: Any) -> Task:
        values.setdefault("status", TaskStatus.QUEUED)
        values.setdefault("resources", {"cpus": 1.0, "gpus": 0.0})
        with sessions() as db:
            task = Task(owner_id=owner.id, name=name, graph_snapshot=graph or digits_graph(), **values)
            db.add(task)
            db.commit()
            return task

    return make

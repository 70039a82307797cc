"""A migrated SQLite database with users and tasks, for the runner's tests (no server, no Ray)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.migrate import upgrade_database
from dragdl.db.models import Task, TaskStatus, User
from dragdl.db.session import make_engine, make_session_factory
from dragdl.runner.base import WorkerConfig

from .support import digits_graph

MakeTask = Callable[..., Task]


@pytest.fixture
def config(tmp_path: Path) -> WorkerConfig:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    return WorkerConfig(database_url=f"sqlite:///{tmp_path / 'runner.db'}", data_dir=data_dir)


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

"""Alembic migrations: `upgrade head` builds exactly the schema of `db/models.py`, on both databases.

When this fails after a change to `models.py`, add a migration (see `dragdl.db.migrate`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Column, MetaData, String, func, insert, inspect, select, text
from sqlalchemy.orm import Session

from dragdl.db.migrate import INITIAL_REVISION, alembic_config, current_revision, upgrade_database
from dragdl.db.models import Base, Task, TaskEvent, TaskStatus, User
from dragdl.db.session import make_engine, make_session_factory
from dragdl.runner.transitions import add_event

from .conftest import PostgresDatabases


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with nothing in it (PostgreSQL: created for this test and dropped after)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    databases: PostgresDatabases = request.getfixturevalue("postgres")
    url = databases.create("dragdl_migrations")
    try:
        yield url
    finally:
        databases.drop(url)


def schema_differences(url: str) -> list[object]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def head() -> str:
    revision = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert revision is not None
    return revision


def test_the_migrations_form_one_line() -> None:
    script = ScriptDirectory.from_config(alembic_config())
    assert len(script.get_heads()) == 1
    assert [r.revision for r in script.walk_revisions()][-1] == INITIAL_REVISION


def test_upgrade_builds_the_schema_of_the_models(empty_db: str) -> None:
    upgrade_database(empty_db)
    assert schema_differences(empty_db) == []
    assert current_revision(empty_db) == head()
    upgrade_database(empty_db)  # a second start changes nothing
    assert current_revision(empty_db) == head()


def test_downgrade_to_nothing_and_back(empty_db: str) -> None:
    upgrade_database(empty_db)
    engine = make_engine(empty_db)
    try:
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "base")
        with engine.connect() as connection:
            assert set(inspect(connection).get_table_names()) <= {"alembic_version"}
    finally:
        engine.dispose()
    upgrade_database(empty_db)
    assert schema_differences(empty_db) == []


def test_a_database_made_before_migrations_is_adopted(empty_db: str) -> None:
    # Before migrations the server created the tables of the first release, without a version table.
    engine = make_engine(empty_db)
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), INITIAL_REVISION)
            connection.execute(text("DROP TABLE alembic_version"))
    finally:
        engine.dispose()
    upgrade_database(empty_db)
    assert current_revision(empty_db) == head()
    assert schema_differences(empty_db) == []


def test_the_comparison_would_notice_a_missing_migration(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    upgrade_database(url)
    changed = MetaData()
    for table in Base.metadata.sorted_tables:
        table.to_metadata(changed)
    changed.tables["users"].append_column(Column("nickname", String(40)))
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            diffs = compare_metadata(MigrationContext.configure(connection), changed)
    finally:
        engine.dispose()
    assert [(d[0], d[3].name) for d in diffs] == [("add_column", "nickname")]


# -- task_events ids on SQLite ---------------------------------------------------------------------


def add_task_with_events(db: Session, owner_id: int, name: str, events: int) -> str:
    """A task and its events; returns the task's id. A Core insert names only the columns it sets
    (and those with defaults), which the first release's table has; an ORM insert would name later
    columns too."""
    values = {"owner_id": owner_id, "name": name, "graph_snapshot": {}, "status": TaskStatus.SUCCEEDED}
    task_id = str(db.execute(insert(Task).values(**values)).inserted_primary_key[0])
    for i in range(events):
        add_event(db, task_id, "log", {"level": "info", "message": f"{name} {i}"})
    db.commit()
    return task_id


def event_rows(url: str) -> list[tuple[Any, ...]]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT id, task_id, kind, data FROM task_events ORDER BY id"))
            return [tuple(row) for row in rows]
    finally:
        engine.dispose()


def sqlite_task_events(url: str) -> tuple[str, dict[str, list[str | None]]]:
    """The CREATE TABLE statement of task_events and its indexes (name -> columns)."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            sql = connection.scalar(
                text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'task_events'")
            )
            indexes = inspect(connection).get_indexes("task_events")
    finally:
        engine.dispose()
    return str(sql), {ix["name"] or "": ix["column_names"] for ix in indexes}


@pytest.mark.parametrize("events_before_upgrade", [False, True], ids=["fresh", "upgraded"])
def test_an_event_id_is_never_handed_out_twice(empty_db: str, events_before_upgrade: bool) -> None:
    # An event id is the SSE id a client resumes from: after the newest task (and so the newest
    # events) is deleted, the next event must still get an id above every id a client has seen.
    # SQLite needs its AUTOINCREMENT table for this (revision 0002); PostgreSQL's sequence has it.
    url = empty_db
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    try:
        if events_before_upgrade:  # a database of the first release, with events in it
            with engine.begin() as connection:
                command.upgrade(alembic_config(connection), INITIAL_REVISION)
        else:
            upgrade_database(url)
        with sessions() as db:
            # A Core insert names only the columns it sets, which the first release's table has.
            inserted = db.execute(insert(User).values(username="alice", password_hash="x"))
            user_id = inserted.inserted_primary_key[0]
            db.commit()
            older = add_task_with_events(db, user_id, "older", 3)
            newest = add_task_with_events(db, user_id, "newest", 4)
        before = event_rows(url)
        if events_before_upgrade:
            upgrade_database(url)
            assert event_rows(url) == before  # the table copy keeps every row and id
            assert schema_differences(url) == []
        if engine.dialect.name == "sqlite":
            sql, indexes = sqlite_task_events(url)
            assert "AUTOINCREMENT" in sql
            assert indexes == {
                "ix_task_events_task_id_id": ["task_id", "id"],
                "ix_task_events_task_kind": ["task_id", "kind"],
            }
        seen = max(row[0] for row in before)

        with sessions() as db:
            db.delete(db.get_one(Task, newest))  # as the server deletes a task: events cascade
            db.commit()
            assert db.scalar(select(func.max(TaskEvent.id))) < seen
            event = add_event(db, older, "log", {"level": "info", "message": "after the delete"})
            db.commit()
            assert event.id > seen
    finally:
        engine.dispose()


# -- users.founder (revision 0003) -----------------------------------------------------------------


def test_an_upgraded_server_keeps_its_first_administrator_as_the_founder(empty_db: str) -> None:
    # The founder column makes the first sign-up race-free; on a server that already has accounts
    # the oldest administrator with a password is the one the first sign-up made.
    engine = make_engine(empty_db)
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0002")
        with engine.begin() as connection:
            for name, password_hash, admin in [
                ("local", "!", True),
                ("root", "argon2-hash", True),
                ("alice", "argon2-hash", False),
                ("bob", "argon2-hash", True),
            ]:
                values = {"username": name, "password_hash": password_hash, "is_admin": admin}
                connection.execute(insert(User).values(**values))
        upgrade_database(empty_db)
        with engine.connect() as connection:
            rows = connection.execute(select(User.username, User.founder).order_by(User.id)).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in rows] == [("local", None), ("root", True), ("alice", None), ("bob", None)]
    assert schema_differences(empty_db) == []

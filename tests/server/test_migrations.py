"""Alembic migrations: `upgrade head` builds exactly the schema of `db/models.py`, on both databases.

When this fails after a change to `models.py`, add a migration (see `dragdl.server.db.migrate`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Column, MetaData, String, inspect, text

from dragdl.server.db.migrate import INITIAL_REVISION, alembic_config, current_revision, upgrade_database
from dragdl.server.db.models import Base
from dragdl.server.db.session import make_engine

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

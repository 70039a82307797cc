"""Bring the database schema up to date on start-up (Alembic, configured in code: no alembic.ini).

The migrations ship inside the package (`dragdl/db/migrations`). To add one after changing
`models.py`, generate it against a database at the current head and review it:

    python -c "from dragdl.db.migrate import make_revision; make_revision('sqlite:///tmp.db', 'msg')"
"""

from __future__ import annotations

import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect, text

from dragdl.db.session import make_engine

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
INITIAL_REVISION = "0001"
# Any constant: concurrent servers starting against one PostgreSQL database migrate one at a time.
_PG_LOCK_KEY = 0x6472_6167_646C

log = logging.getLogger(__name__)


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("version_path_separator", "os")
    config.set_main_option("file_template", "r%%(rev)s_%%(slug)s")
    config.attributes["connection"] = connection
    return config


def upgrade_database(url: str) -> None:
    """`alembic upgrade head` on the database at `url` (SQLite or PostgreSQL)."""
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
            _adopt_unversioned(connection)
            command.upgrade(alembic_config(connection), "head")
    finally:
        engine.dispose()


def current_revision(url: str) -> str | None:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def _adopt_unversioned(connection: Connection) -> None:
    """Databases made before migrations existed (tables created from the models) join at revision 1."""
    tables = set(inspect(connection).get_table_names())
    if "users" in tables and "alembic_version" not in tables:
        log.warning(
            "database has tables but no migration history: marking it as revision %s", INITIAL_REVISION
        )
        command.stamp(alembic_config(connection), INITIAL_REVISION)


def make_revision(url: str, message: str, rev_id: str | None = None) -> None:
    """Development helper: autogenerate a new revision from the difference between `url` and the models."""
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            command.revision(alembic_config(connection), message=message, autogenerate=True, rev_id=rev_id)
    finally:
        engine.dispose()

"""Alembic environment: runs on the connection `dragdl.db.migrate` hands over.

For `alembic revision --autogenerate` during development, see `dragdl.db.migrate.make_revision`.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from dragdl.db.models import Base

config = context.config
target_metadata = Base.metadata


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("offline (--sql) migrations are not supported; run them against a database")
connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through dragdl.db.migrate, which passes the connection")
run(connection)

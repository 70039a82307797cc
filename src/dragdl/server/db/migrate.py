"""Bring the database schema up to date on start-up."""

from __future__ import annotations

from dragdl.server.db.models import Base
from dragdl.server.db.session import make_engine


def upgrade_database(url: str) -> None:
    # Placeholder until the Alembic migrations land: create missing tables.
    engine = make_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()

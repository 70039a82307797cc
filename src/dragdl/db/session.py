"""Engine and session factory for SQLite (WAL) or PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.orm import Session, sessionmaker


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        _private_sqlite_files(url)
        # Several processes (server, Ray workers) share the file: WAL lets readers run during writes,
        # and the busy timeout makes a writer wait for the lock instead of failing at once
        # (30 s unless the URL says otherwise, e.g. `sqlite:///dragdl.db?timeout=5`).
        connect_args: dict[str, Any] = {"check_same_thread": False}
        if "timeout" not in make_url(url).query:
            connect_args["timeout"] = 30
        engine = create_engine(url, connect_args=connect_args)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def _private_sqlite_files(url: str) -> None:
    """The database file readable by its owner only, created so when new (SQLite gives the WAL and
    shared-memory files the database file's mode) and tightened when an older version left it 0644."""
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    if not path.parent.is_dir():
        return  # SQLite reports it on connect
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    for name in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if name.exists():
            os.chmod(name, 0o600)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)

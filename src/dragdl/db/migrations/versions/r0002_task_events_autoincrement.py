"""task_events ids are never reused on SQLite: the table becomes AUTOINCREMENT.

An event's id is its server-sent event id, the point a client resumes from with Last-Event-ID.
Without AUTOINCREMENT SQLite hands out max(rowid) + 1, so after the newest events are deleted
(deleting a task deletes its events) the next event gets an id a client has already seen, and a
client resuming from that id skips it. SQLite cannot change this on an existing table: batch mode
copies the table into a new AUTOINCREMENT one, rows and indexes included; copying the rows also
starts the table's sequence at the highest id kept. PostgreSQL's BIGSERIAL sequence never goes
back, so nothing changes there.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _recreate_task_events(autoincrement: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table(
        "task_events", recreate="always", table_kwargs={"sqlite_autoincrement": autoincrement}
    ):
        pass


def upgrade() -> None:
    _recreate_task_events(autoincrement=True)


def downgrade() -> None:
    _recreate_task_events(autoincrement=False)

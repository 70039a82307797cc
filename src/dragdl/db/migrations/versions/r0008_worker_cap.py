"""A cap per user on the workers of one distributed run (each is a process of about 0.5 GB).
NULL = the server default, as for the other caps.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 08:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("users", sa.Column("max_workers_per_task", sa.Integer(), nullable=True))


def downgrade() -> None:
    # Batch mode: SQLite drops a column only by rebuilding the table.
    with op.batch_alter_table("users") as batch:
        batch.drop_column("max_workers_per_task")

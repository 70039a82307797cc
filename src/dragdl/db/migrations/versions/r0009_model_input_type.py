"""Models know their input type (images, table, sequence): the web UI picks the prediction page by it.

Models stored before this revision are image or table models: a table model is the one with input
columns.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 08:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("models", sa.Column("input_type", sa.String(32), nullable=False, server_default="images"))
    op.execute("UPDATE models SET input_type = 'table' WHERE input_columns IS NOT NULL")


def downgrade() -> None:
    # Batch mode: SQLite drops a column only by rebuilding the table.
    with op.batch_alter_table("models") as batch:
        batch.drop_column("input_type")

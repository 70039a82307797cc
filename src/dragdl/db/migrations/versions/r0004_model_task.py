"""Models know their task kind and, for tables, their input columns and target.

- `task`: the kind the model was trained for (classification | regression), as model.json says.
  Every model stored before this revision is a classifier, which the server default says.
- `input_columns`: the columns a table model takes (name, kind, missing, categories), as JSON;
  NULL for image models.
- `target`: the column a table model predicts; NULL for image models.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 00:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("models", sa.Column("task", sa.String(32), nullable=False, server_default="classification"))
    op.add_column("models", sa.Column("input_columns", sa.JSON(), nullable=True))
    op.add_column("models", sa.Column("target", sa.String(200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("models") as batch:
        batch.drop_column("target")
        batch.drop_column("input_columns")
        batch.drop_column("task")

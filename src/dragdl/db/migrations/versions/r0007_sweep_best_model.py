"""Sweeps remember the model registered as their best, so that the models of the other trials can
stay out of the user's model list.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 08:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Batch mode: SQLite adds a foreign key only by rebuilding the table.
    with op.batch_alter_table("sweeps") as batch:
        batch.add_column(sa.Column("best_model_id", sa.String(32), nullable=True))
        batch.create_foreign_key(
            "fk_sweeps_best_model_id_models", "models", ["best_model_id"], ["id"], ondelete="SET NULL"
        )


def downgrade() -> None:
    with op.batch_alter_table("sweeps") as batch:
        batch.drop_constraint("fk_sweeps_best_model_id_models", type_="foreignkey")
        batch.drop_column("best_model_id")

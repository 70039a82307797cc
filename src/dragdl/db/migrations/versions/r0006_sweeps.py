"""Sweeps: a hyper-parameter search and its trials (each trial a task of the owner).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 04:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sweeps",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("graph_id", sa.String(32), sa.ForeignKey("graphs.id", ondelete="SET NULL"), nullable=True),
        sa.Column("base_graph", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("trials", sa.Integer(), nullable=False),
        sa.Column("parallel", sa.Integer(), nullable=False),
        sa.Column("objective", sa.String(64), nullable=False),
        sa.Column("direction", sa.String(16), nullable=False),
        sa.Column("sampler", sa.String(16), nullable=False),
        sa.Column("pruner", sa.String(16), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("resources", sa.JSON(), nullable=False),
        sa.Column("error", sa.String(1000), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_sweeps_owner_id", "sweeps", ["owner_id"])
    op.create_index("ix_sweeps_graph_id", "sweeps", ["graph_id"])
    op.create_index("ix_sweeps_status", "sweeps", ["status"])
    op.create_index("ix_sweeps_created_at", "sweeps", ["created_at"])
    op.create_table(
        "sweep_trials",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("sweep_id", sa.String(32), sa.ForeignKey("sweeps.id", ondelete="CASCADE"), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.String(32), sa.ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("intermediate", sa.JSON(), nullable=False),
        sa.Column("system_attrs", sa.JSON(), nullable=False),
        sa.Column("last_event_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_sweep_trials_sweep_number", "sweep_trials", ["sweep_id", "number"], unique=True)


def downgrade() -> None:
    op.drop_table("sweep_trials")
    op.drop_table("sweeps")

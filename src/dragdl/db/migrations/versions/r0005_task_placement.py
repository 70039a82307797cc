"""Tasks record where they run and why they wait.

- `worker_node`: the cluster node the scheduler placed the current (or last) attempt on, so a
  restarted server knows what its adopted workers hold on each node.
- `queued_reason`: why a QUEUED task has not started ({"code", "message", "details"}), e.g. no node
  of the cluster can hold it; NULL once it starts.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("tasks", sa.Column("worker_node", sa.String(64), nullable=True))
    op.add_column("tasks", sa.Column("queued_reason", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("queued_reason")
        batch.drop_column("worker_node")

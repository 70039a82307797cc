"""Per-user limits and a race-free first administrator.

- `dataset_quota_bytes`, `artifact_quota_bytes`: storage quotas; `max_cpus_per_task`,
  `max_gpus_per_task`: caps on what one task may reserve. NULL = the server default, as for
  `max_running_tasks`.
- `founder`: TRUE on the account the first sign-up made administrator, NULL elsewhere, under a
  unique index, so two concurrent first sign-ups cannot both claim it. An existing server already
  has its first account: the oldest administrator with a password is marked, so a later sign-up
  cannot claim it either (the sign-up also counts accounts first).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 21:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UNUSABLE_PASSWORD = "!"
"""dragdl.server.auth.UNUSABLE_PASSWORD, repeated: a migration does not follow later code changes."""


def upgrade() -> None:
    op.add_column("users", sa.Column("dataset_quota_bytes", sa.BigInteger(), nullable=True))
    op.add_column("users", sa.Column("artifact_quota_bytes", sa.BigInteger(), nullable=True))
    op.add_column("users", sa.Column("max_cpus_per_task", sa.Float(), nullable=True))
    op.add_column("users", sa.Column("max_gpus_per_task", sa.Float(), nullable=True))
    op.add_column("users", sa.Column("founder", sa.Boolean(), nullable=True))
    op.create_index(op.f("ix_users_founder"), "users", ["founder"], unique=True)
    users = sa.table(
        "users",
        sa.column("id", sa.Integer()),
        sa.column("is_admin", sa.Boolean()),
        sa.column("password_hash", sa.String()),
        sa.column("founder", sa.Boolean()),
    )
    oldest_admin = (
        sa.select(sa.func.min(users.c.id))
        .where(users.c.is_admin.is_(True), users.c.password_hash != _UNUSABLE_PASSWORD)
        .scalar_subquery()
    )
    op.execute(users.update().where(users.c.id == oldest_admin).values(founder=True))


def downgrade() -> None:
    op.drop_index(op.f("ix_users_founder"), table_name="users")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("founder")
        batch.drop_column("max_gpus_per_task")
        batch.drop_column("max_cpus_per_task")
        batch.drop_column("artifact_quota_bytes")
        batch.drop_column("dataset_quota_bytes")

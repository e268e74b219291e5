"""investigations.request_id: the HTTP request that created an investigation, carried by its job's log lines.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("investigations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("request_id", sa.String(length=128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("investigations", schema=None) as batch_op:
        batch_op.drop_column("request_id")

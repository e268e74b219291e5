"""procrastinate's migrations named 03.04.00: the retry of failed jobs (the newest up to procrastinate 3.10.0).

`pre` and `post` files both: bugsleuth migrates at start-up, with the new code already in place.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from app.migrations import procrastinate_sql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

MIGRATIONS = (
    "03.04.00_01_pre_add_retry_failed_job_procedure.sql",
    "03.04.00_50_post_add_retry_failed_job_procedure.sql",
)
"""procrastinate's migration files this revision applies, in order."""


def upgrade() -> None:
    procrastinate_sql.apply(MIGRATIONS)


def downgrade() -> None:
    raise NotImplementedError("procrastinate ships no downgrade migrations")

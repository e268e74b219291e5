"""procrastinate's schema up to its migrations named 03.03.00 (procrastinate 3.3).

Its whole history from `00.00.00_01_initial.sql`, as its Django app applies it; PostgreSQL only.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from app.migrations import procrastinate_sql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

MIGRATIONS = (
    "00.00.00_01_initial.sql",
    "00.05.00_01_drop_started_at_column.sql",
    "00.05.00_02_drop_started_at_column.sql",
    "00.05.00_03_drop_procrastinate_version_table.sql",
    "00.06.00_01_fix_procrastinate_fetch_job.sql",
    "00.07.01_01_fix_trigger_status_events_insert.sql",
    "00.08.01_01_add_queueing_lock_column.sql",
    "00.10.00_01_close_fetch_job_race_condition.sql",
    "00.10.00_02_add_defer_job_function.sql",
    "00.11.00_03_add_procrastinate_periodic_defers.sql",
    "00.12.00_01_add_foreign_key_index.sql",
    "00.14.00_01_add_locks_to_periodic_defer.sql",
    "00.15.02_01_fix_procrastinate_defer_periodic_job.sql",
    "00.16.00_01_add_finish_job_and_retry_job_functions.sql",
    "00.17.00_01_add_trigger_on_job_deletion.sql",
    "00.17.00_02_delete_finished_jobs.sql",
    "00.17.00_03_add_checks_to_finish_job.sql",
    "00.17.00_04_add_checks_to_retry_job.sql",
    "00.18.01_01_fix_finish_job_compat_issue.sql",
    "00.19.00_01_add_index_on_procrastinate_jobs.sql",
    "00.22.00_01_add_kwargs_to_defer_periodic_job.sql",
    "00.23.00_01_null_locks_excluded.sql",
    "01.00.00_01_remove_old_finish_job_function.sql",
    "01.01.01_01_job_id_bigint.sql",
    "02.00.03_01_add_job_priority.sql",
    "02.05.00_01_add_periodic_job_priority.sql",
    "02.06.00_01_add_cancel_states.sql",
    "02.08.00_01_add_additional_params_to_retry_job.sql",
    "02.14.01_01_add_indexes_for_fetch_job.sql",
    "03.00.00_01_pre_cancel_notification.sql",
    "03.00.00_50_post_cancel_notification.sql",
    "03.01.00_01_pre_add_heartbeat.sql",
    "03.01.00_50_post_add_heartbeat.sql",
    "03.02.00_01_pre_batch_defer_jobs.sql",
    "03.02.00_50_post_batch_defer_jobs.sql",
    "03.03.00_01_pre_priority_lock_fetch_job.sql",
)
"""procrastinate's migration files this revision applies, in order."""


def upgrade() -> None:
    procrastinate_sql.apply(MIGRATIONS)


def downgrade() -> None:
    raise NotImplementedError("procrastinate ships no downgrade migrations")

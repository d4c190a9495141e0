"""usage_daily and usage_backfill: token usage per thread, day and model (issue 33)

Revision ID: 0009_usage
Revises: 0008_provenance
Create Date: 2026-12-08

Hand-written (app/usage/tables.py mirrors it; tests/test_migrations.py compares them).

Creating the tables is instant. The backfill of threads stored before then runs in batches of
short transactions (:func:`app.usage.backfill.backfill_sync`), so a large database keeps
serving while it runs and a stopped migration resumes where it stopped. Threads written
meanwhile by a server with this code count themselves; one written by an older server during
a rolling upgrade is caught by ``loomsync-server usage-backfill --again`` (docs/operations.md).
"""

from collections.abc import Sequence

from alembic import op

from app.usage.backfill import backfill_sync

revision: str = "0009_usage"
down_revision: str | None = "0008_provenance"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    op.execute(
        """
        CREATE TABLE usage_daily (
            thread_id uuid NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
            day date NOT NULL,
            model text NOT NULL,
            provider text NOT NULL,
            org_id text,
            owner_id text NOT NULL,
            visibility text NOT NULL,
            agent text NOT NULL,
            repository text,
            workspace text,
            turns integer NOT NULL,
            without_usage integer NOT NULL,
            tool_calls integer NOT NULL,
            input_tokens bigint NOT NULL,
            output_tokens bigint NOT NULL,
            cache_read_tokens bigint NOT NULL,
            cache_write_tokens bigint NOT NULL,
            reasoning_tokens bigint NOT NULL,
            CONSTRAINT usage_daily_pkey PRIMARY KEY (thread_id, day, model, provider)
        )
        """
    )
    op.execute("CREATE INDEX usage_daily_org_day ON usage_daily (org_id, day)")
    op.execute("CREATE INDEX usage_daily_owner_day ON usage_daily (owner_id, day)")
    op.execute("CREATE INDEX usage_daily_model ON usage_daily (model, provider)")
    op.execute(
        """
        CREATE TABLE usage_backfill (
            id smallint PRIMARY KEY,
            after_thread uuid,
            threads_done bigint NOT NULL DEFAULT 0,
            started_at timestamptz NOT NULL DEFAULT now(),
            finished_at timestamptz,
            CONSTRAINT usage_backfill_one_row CHECK (id = 1)
        )
        """
    )
    op.execute("INSERT INTO usage_backfill (id) VALUES (1)")
    with op.get_context().autocommit_block():
        backfill_sync(op.get_bind())


def downgrade() -> None:
    op.execute("DROP TABLE usage_backfill")
    op.execute("DROP TABLE usage_daily")

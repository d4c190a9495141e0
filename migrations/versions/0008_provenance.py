"""thread_files and provenance_backfill: the provenance index (issue 32)

Revision ID: 0008_provenance
Revises: 0007
Create Date: 2026-12-07

Hand-written (app/provenance/tables.py mirrors it; tests/test_migrations.py compares them).
Another migration may land beside this one from the same parent: the integrator re-chains
``down_revision`` (the name says what it holds, so the two never clash).

Creating the tables is instant. The backfill of threads stored before (which files each one's
tool calls touched) then runs in batches of short transactions, each committed on its own
(:func:`app.provenance.backfill.backfill_sync`), so a large database keeps serving while it
runs and a stopped migration resumes where it stopped (``provenance_backfill.after_thread``).
Threads written meanwhile by a server that already has this code index themselves; one
written by an older server during a rolling upgrade is caught by
``loomsync-server provenance-backfill --again`` (docs/operations.md).
"""

from collections.abc import Sequence

from alembic import op

from app.provenance.backfill import backfill_sync

revision: str = "0008_provenance"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    op.execute(
        """
        CREATE TABLE thread_files (
            thread_id uuid NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
            path text NOT NULL,
            seq integer NOT NULL,
            action text NOT NULL,
            via text NOT NULL,
            CONSTRAINT thread_files_pkey PRIMARY KEY (thread_id, path, seq, action),
            CONSTRAINT thread_files_action CHECK (action IN ('read', 'edit', 'write', 'delete')),
            CONSTRAINT thread_files_via CHECK (via IN ('tool', 'shell'))
        )
        """
    )
    op.execute("CREATE INDEX thread_files_path ON thread_files (path, thread_id)")
    op.execute(
        """
        CREATE TABLE provenance_backfill (
            id smallint PRIMARY KEY,
            after_thread uuid,
            threads_done bigint NOT NULL DEFAULT 0,
            files_found bigint NOT NULL DEFAULT 0,
            started_at timestamptz NOT NULL DEFAULT now(),
            finished_at timestamptz,
            CONSTRAINT provenance_backfill_one_row CHECK (id = 1)
        )
        """
    )
    op.execute("INSERT INTO provenance_backfill (id) VALUES (1)")
    with op.get_context().autocommit_block():
        backfill_sync(op.get_bind())


def downgrade() -> None:
    op.execute("DROP TABLE provenance_backfill")
    op.execute("DROP TABLE thread_files")

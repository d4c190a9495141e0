"""audit_events: who created, deleted, forked or re-shared which thread, when, from where

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29

Hand-written (app/audit/tables.py mirrors it; tests/test_migrations.py compares the two).
Events are inserted in the transaction of the write they describe. ``thread_id`` has no
foreign key: the trail must outlive anything that happens to a thread. The primary key starts
with the thread id, as every table's does, so the table can be distributed by thread id.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE audit_events (
            id uuid NOT NULL,
            occurred_at timestamptz NOT NULL DEFAULT now(),
            actor_id text NOT NULL,
            actor_org text,
            actor_roles text[] NOT NULL DEFAULT '{}',
            action text NOT NULL,
            thread_id uuid NOT NULL,
            client_ip text,
            request_id text,
            details jsonb NOT NULL DEFAULT '{}',
            PRIMARY KEY (thread_id, id)
        )
        """
    )
    op.execute("CREATE INDEX audit_events_recent ON audit_events (occurred_at DESC, id DESC)")
    op.execute(
        "CREATE INDEX audit_events_thread ON audit_events (thread_id, occurred_at DESC, id DESC)"
    )
    op.execute(
        "CREATE INDEX audit_events_actor ON audit_events (actor_id, occurred_at DESC, id DESC)"
    )


def downgrade() -> None:
    op.execute("DROP TABLE audit_events")

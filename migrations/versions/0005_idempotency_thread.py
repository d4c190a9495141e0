"""idempotency_keys.thread_id: the thread whose document a stored answer holds

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Hand-written (app/idempotency/tables.py mirrors it; tests/test_migrations.py compares the two).
A create's or fork's stored answer is the whole thread. When a later write replaces that
thread's text (a PUT, say the client's ``loomsync redact`` pushing the redacted version, or a
PATCH of its metadata), the server rewrites those answers with the thread as it is now, so no
stored answer keeps text the owner replaced (issue 12 item 3). ``thread_id`` names the thread
(NULL for answers that hold no document: appends); the partial index keeps the rewrite one
index probe. Existing answers are backfilled from their ``Location`` header (at most one key
lifetime of rows, ``LOOMSYNC_IDEMPOTENCY_KEY_TTL``).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE idempotency_keys ADD COLUMN thread_id uuid")
    op.execute(
        """
        UPDATE idempotency_keys
        SET thread_id = CAST(substring(headers->>'location' FROM '/api/threads/T-(.+)$') AS uuid)
        WHERE headers->>'location' ~ '^/api/threads/T-[0-9a-f-]{36}$'
        """
    )
    op.execute(
        "CREATE INDEX idempotency_keys_thread ON idempotency_keys (thread_id)"
        " WHERE thread_id IS NOT NULL"
    )


def downgrade() -> None:
    op.execute("DROP INDEX idempotency_keys_thread")
    op.execute("ALTER TABLE idempotency_keys DROP COLUMN thread_id")

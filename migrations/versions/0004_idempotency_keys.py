"""idempotency_keys: the first answer to each keyed POST, replayed to its retries

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

Hand-written (app/idempotency/tables.py mirrors it; tests/test_migrations.py compares the two).
One row per (user, ``Idempotency-Key``): the fingerprint of the request it was first used with
and the answer it got, inserted as the last statement of the transaction of the write it
answers, so a row exists exactly when its write committed. Rows older than ``LOOMSYNC_IDEMPOTENCY_KEY_TTL``
are ignored and purged (``idempotency_keys_created`` keeps the purge an index range scan). The
key is per user, not per thread, so unlike the other tables the primary key starts with the
user id.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE idempotency_keys (
            user_id text NOT NULL,
            key text NOT NULL,
            fingerprint bytea NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            status smallint NOT NULL,
            headers jsonb NOT NULL,
            body bytea NOT NULL,
            PRIMARY KEY (user_id, key)
        )
        """
    )
    op.execute("CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)")


def downgrade() -> None:
    op.execute("DROP TABLE idempotency_keys")

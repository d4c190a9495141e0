"""search_version on both vector tables and the search_reindex progress table (issue 14)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

Issue 14 replaced PostgreSQL's ``to_tsvector('english')`` by the shared analyzer
(loomsync.core.textsearch): every stored vector must be rebuilt. This migration only adds what is
instant, so it never holds a lock for long on a large database:

- ``search_version smallint NOT NULL DEFAULT 0`` on ``threads`` and ``thread_messages``: a
  constant default is stored in the catalog (``attmissingval``, PostgreSQL 11 and later), not
  written into each row, so the ``ALTER TABLE`` rewrites nothing. Every existing row reads 0,
  "made by the old SQL vectors"; the write path stores
  :data:`loomsync.core.textsearch.vectors.VERSION` with each vector it makes, and any row written
  without it (by an older server still running) stays 0, so it is rebuilt too.
- ``search_reindex``: one row per table, the online rebuild's progress (version, the last key
  done, counts, times), so that it resumes where it stopped and ``serve`` knows in one read
  whether a rebuild is due.

The rebuild itself (app/threads/reindex.py) runs after the migration, in batches of short
transactions, while the server serves: ``loomsync-server reindex`` or, by default, in the
background of ``loomsync-server serve`` (docs/operations.md). ``lock_timeout`` keeps the two
``ALTER TABLE`` from queueing behind a long query (and every other query behind them): the
migration fails after 10 s instead, and can simply be run again.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    op.execute("ALTER TABLE threads ADD COLUMN search_version smallint NOT NULL DEFAULT 0")
    op.execute("ALTER TABLE thread_messages ADD COLUMN search_version smallint NOT NULL DEFAULT 0")
    op.execute(
        """
        CREATE TABLE search_reindex (
            target text PRIMARY KEY,
            version smallint NOT NULL,
            after_thread uuid,
            after_seq integer,
            rebuilt bigint NOT NULL DEFAULT 0,
            skipped bigint NOT NULL DEFAULT 0,
            started_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            finished_at timestamptz,
            CONSTRAINT search_reindex_target CHECK (target IN ('threads', 'thread_messages'))
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE search_reindex")
    op.execute("ALTER TABLE thread_messages DROP COLUMN search_version")
    op.execute("ALTER TABLE threads DROP COLUMN search_version")

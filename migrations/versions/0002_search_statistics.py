"""larger statistics targets for the search vectors

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

The planner estimates how many rows a tsquery matches from the most common lexemes ANALYZE
keeps (100 x the statistics target). With the default target, a word missing from that list is
assumed to be in 0.5% of 2 million messages, and searches for rare words hash-joined every
readable thread (78 ms) instead of following the few matching messages (2 ms). A target of 1000
keeps ten times more lexemes, so rare words are estimated as rare.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE thread_messages ALTER COLUMN search_vector SET STATISTICS 1000")
    op.execute("ALTER TABLE threads ALTER COLUMN search_vector SET STATISTICS 1000")


def downgrade() -> None:
    op.execute("ALTER TABLE thread_messages ALTER COLUMN search_vector SET STATISTICS -1")
    op.execute("ALTER TABLE threads ALTER COLUMN search_vector SET STATISTICS -1")

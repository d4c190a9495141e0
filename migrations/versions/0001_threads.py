"""threads, thread_messages and thread_commits, with weighted tsvector columns and GIN indexes

Revision ID: 0001
Revises:
Create Date: 2026-11-29

Hand-written. Message bodies and the document are ``json`` (never ``jsonb``): ``json`` keeps the
text verbatim, including ``\\u0000`` escapes and lone surrogates that ``jsonb`` rejects.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE threads (
            id uuid PRIMARY KEY,
            owner_id text NOT NULL,
            org_id text,
            version integer NOT NULL,
            visibility text NOT NULL,
            is_shared_with_support boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            last_activity_at timestamptz NOT NULL,
            archived_at timestamptz,
            deleted_at timestamptz,
            title text,
            tags text[] NOT NULL DEFAULT '{}',
            is_pinned boolean NOT NULL DEFAULT false,
            workspace_root text,
            git_branch text,
            git_remote_url text,
            provider text,
            model text,
            message_count integer NOT NULL DEFAULT 0,
            document json NOT NULL,
            search_vector tsvector NOT NULL,
            CONSTRAINT threads_visibility CHECK (visibility IN ('private', 'organization', 'public')),
            CONSTRAINT threads_version_positive CHECK (version >= 1)
        )
        """
    )
    op.execute(
        "CREATE INDEX threads_owner_activity ON threads (owner_id, last_activity_at DESC, id DESC)"
        " WHERE deleted_at IS NULL"
    )
    op.execute(
        "CREATE INDEX threads_org_activity ON threads (org_id, last_activity_at DESC, id DESC)"
        " WHERE deleted_at IS NULL"
    )
    op.execute(
        "CREATE INDEX threads_activity ON threads (last_activity_at DESC, id DESC)"
        " WHERE deleted_at IS NULL"
    )
    op.execute("CREATE INDEX threads_search ON threads USING gin (search_vector)")
    op.execute(
        """
        CREATE TABLE thread_messages (
            thread_id uuid NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
            seq integer NOT NULL,
            role text NOT NULL,
            body json NOT NULL,
            content_hash bytea NOT NULL,
            search_vector tsvector NOT NULL,
            PRIMARY KEY (thread_id, seq)
        )
        """
    )
    op.execute("CREATE INDEX thread_messages_search ON thread_messages USING gin (search_vector)")
    op.execute(
        """
        CREATE TABLE thread_commits (
            thread_id uuid NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
            sha text NOT NULL,
            PRIMARY KEY (thread_id, sha)
        )
        """
    )
    op.execute("CREATE INDEX thread_commits_sha_prefix ON thread_commits (sha text_pattern_ops)")


def downgrade() -> None:
    op.execute("DROP TABLE thread_commits")
    op.execute("DROP TABLE thread_messages")
    op.execute("DROP TABLE threads")

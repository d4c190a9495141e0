"""share_links, login_codes, web_sessions: share links and browser sign-in (issue 13)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

Hand-written (app/sharing/tables.py and app/web/tables.py mirror it; tests/test_migrations.py
compares them). Only hashes of secrets are stored: a share link's secret, a login code and a
session cookie are each 256 random bits, so SHA-256 of them is enough (no slow hash needed).

``audit_events.actor_id`` becomes nullable: every use of a share link is an audit event, and a
link is opened by anyone holding it, signed in or not (NULL: an anonymous actor). The downgrade
writes those as ``''``, a user id no token can carry (API.md section 3: an empty ``sub`` is
refused), so the trail keeps them.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE share_links (
            thread_id uuid NOT NULL,
            id uuid NOT NULL,
            secret_hash bytea NOT NULL,
            created_by text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz,
            revoked_at timestamptz,
            last_used_at timestamptz,
            use_count integer NOT NULL DEFAULT 0,
            CONSTRAINT share_links_pkey PRIMARY KEY (thread_id, id)
        )
        """
    )
    op.execute("CREATE UNIQUE INDEX share_links_secret ON share_links (secret_hash)")
    op.execute("CREATE UNIQUE INDEX share_links_id ON share_links (id)")
    op.execute(
        """
        CREATE TABLE login_codes (
            code_hash bytea PRIMARY KEY,
            user_id text NOT NULL,
            org_id text,
            roles text[] NOT NULL DEFAULT '{}',
            token_expires_at timestamptz NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz NOT NULL,
            used_at timestamptz
        )
        """
    )
    op.execute("CREATE INDEX login_codes_expiry ON login_codes (expires_at)")
    op.execute(
        """
        CREATE TABLE web_sessions (
            id_hash bytea PRIMARY KEY,
            user_id text NOT NULL,
            org_id text,
            roles text[] NOT NULL DEFAULT '{}',
            csrf_token text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz NOT NULL,
            ended_at timestamptz
        )
        """
    )
    op.execute("CREATE INDEX web_sessions_expiry ON web_sessions (expires_at)")
    op.execute("ALTER TABLE audit_events ALTER COLUMN actor_id DROP NOT NULL")


def downgrade() -> None:
    op.execute("UPDATE audit_events SET actor_id = '' WHERE actor_id IS NULL")
    op.execute("ALTER TABLE audit_events ALTER COLUMN actor_id SET NOT NULL")
    op.execute("DROP TABLE web_sessions")
    op.execute("DROP TABLE login_codes")
    op.execute("DROP TABLE share_links")

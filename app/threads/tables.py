"""SQLAlchemy table definitions (ARCHITECTURE.md "Storage"); migrations 0001 and 0007 create them.

- ``threads``: one row per thread; the document without its messages as ``json`` (verbatim
  text, NUL escapes kept), plus denormalised columns for list, search and access.
- ``thread_messages``: one row per message, keyed ``(thread_id, seq)``, with its exact JSON text.
- ``thread_commits``: commit SHAs, btree ``text_pattern_ops`` for prefix search.
- ``search_reindex``: progress of the online rebuild of the vectors (migration 0007,
  app/threads/reindex.py). ``search_version`` on both vector tables says which analyzer made
  a row's vector (:data:`loomsync.core.textsearch.vectors.VERSION`; 0: PostgreSQL's own).

Every primary key starts with the thread id, so all three tables distribute and co-locate by
thread id (docs/scaling.md).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, TSVECTOR, UUID

metadata = MetaData()

threads = Table(
    "threads",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("owner_id", Text, nullable=False),
    Column("org_id", Text),
    Column("version", Integer, nullable=False),
    Column("visibility", Text, nullable=False),
    Column("is_shared_with_support", Boolean, nullable=False, server_default=text("false")),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("last_activity_at", DateTime(timezone=True), nullable=False),
    Column("archived_at", DateTime(timezone=True)),
    Column("deleted_at", DateTime(timezone=True)),
    Column("title", Text),
    Column("tags", ARRAY(Text), nullable=False, server_default=text("'{}'")),
    Column("is_pinned", Boolean, nullable=False, server_default=text("false")),
    Column("workspace_root", Text),
    Column("git_branch", Text),
    Column("git_remote_url", Text),
    Column("provider", Text),
    Column("model", Text),
    Column("message_count", Integer, nullable=False, server_default=text("0")),
    Column("document", JSON(none_as_null=True), nullable=False),
    Column("search_vector", TSVECTOR, nullable=False),
    Column("search_version", SmallInteger, nullable=False, server_default=text("0")),
    CheckConstraint(
        "visibility IN ('private', 'organization', 'public')", name="threads_visibility"
    ),
    CheckConstraint("version >= 1", name="threads_version_positive"),
)
Index(
    "threads_owner_activity",
    threads.c.owner_id,
    threads.c.last_activity_at.desc(),
    threads.c.id.desc(),
    postgresql_where=threads.c.deleted_at.is_(None),
)
Index(
    "threads_org_activity",
    threads.c.org_id,
    threads.c.last_activity_at.desc(),
    threads.c.id.desc(),
    postgresql_where=threads.c.deleted_at.is_(None),
)
Index(
    "threads_activity",
    threads.c.last_activity_at.desc(),
    threads.c.id.desc(),
    postgresql_where=threads.c.deleted_at.is_(None),
)
Index("threads_search", threads.c.search_vector, postgresql_using="gin")

thread_messages = Table(
    "thread_messages",
    metadata,
    Column(
        "thread_id",
        UUID(as_uuid=True),
        ForeignKey("threads.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("seq", Integer, primary_key=True),
    Column("role", Text, nullable=False),
    Column("body", JSON(none_as_null=True), nullable=False),
    Column("content_hash", LargeBinary, nullable=False),
    Column("search_vector", TSVECTOR, nullable=False),
    Column("search_version", SmallInteger, nullable=False, server_default=text("0")),
)
Index("thread_messages_search", thread_messages.c.search_vector, postgresql_using="gin")

thread_commits = Table(
    "thread_commits",
    metadata,
    Column(
        "thread_id",
        UUID(as_uuid=True),
        ForeignKey("threads.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("sha", Text, primary_key=True),
)
Index("thread_commits_sha_prefix", thread_commits.c.sha, postgresql_ops={"sha": "text_pattern_ops"})

search_reindex = Table(
    "search_reindex",
    metadata,
    Column("target", Text, primary_key=True),
    Column("version", SmallInteger, nullable=False),
    Column("after_thread", UUID(as_uuid=True)),
    Column("after_seq", Integer),
    Column("rebuilt", BigInteger, nullable=False, server_default=text("0")),
    Column("skipped", BigInteger, nullable=False, server_default=text("0")),
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("finished_at", DateTime(timezone=True)),
    CheckConstraint("target IN ('threads', 'thread_messages')", name="search_reindex_target"),
)

"""The browser sign-in tables (migration 0006): one-time login codes and web sessions.

- ``login_codes``: a code minted for a bearer-token holder (``POST /api/login-codes``, or
  ``loomsync-server token login``), exchanged once at ``/login`` for a session; only its SHA-256
  is stored, it lives ``LOGIN_CODE_TTL`` seconds, ``used_at`` marks it spent.
- ``web_sessions``: the session behind the HttpOnly cookie; only the SHA-256 of the cookie's
  value is stored. It carries the identity of the token the code was minted with (user, org,
  roles) and never outlives that token (``expires_at``); ``ended_at`` is set by ``/logout``.
  ``csrf_token`` is the synchronizer token every state-changing form of the session carries.
"""

from __future__ import annotations

from sqlalchemy import Column, DateTime, Index, LargeBinary, MetaData, Table, Text, text
from sqlalchemy.dialects.postgresql import ARRAY

metadata = MetaData()

login_codes = Table(
    "login_codes",
    metadata,
    Column("code_hash", LargeBinary, primary_key=True),
    Column("user_id", Text, nullable=False),
    Column("org_id", Text),
    Column("roles", ARRAY(Text), nullable=False, server_default=text("'{}'")),
    Column("token_expires_at", DateTime(timezone=True), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("used_at", DateTime(timezone=True)),
)
Index("login_codes_expiry", login_codes.c.expires_at)

web_sessions = Table(
    "web_sessions",
    metadata,
    Column("id_hash", LargeBinary, primary_key=True),
    Column("user_id", Text, nullable=False),
    Column("org_id", Text),
    Column("roles", ARRAY(Text), nullable=False, server_default=text("'{}'")),
    Column("csrf_token", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True)),
)
Index("web_sessions_expiry", web_sessions.c.expires_at)

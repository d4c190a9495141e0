"""Request and response models of the share-link routes (API.md section 1, issue 13 item 1)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.config import MAX_SHARE_LINK_SECONDS
from loomsync.core.document import jsontext

#: A link's state when listed: ``live`` opens the thread; ``revoked`` (by DELETE, or by the
#: thread's deletion) and ``expired`` answer 410.
LinkState = Literal["live", "revoked", "expired"]


class ShareLinkRequest(BaseModel):
    """Body of ``POST /api/threads/{id}/share-links`` (optional: no body, or ``{}``, makes a
    link that never expires, or lives ``LOOMSYNC_SHARE_LINK_MAX_AGE`` when that is set)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    expires_in: int | None = Field(
        default=None,
        ge=1,
        le=MAX_SHARE_LINK_SECONDS,
        description="Seconds from now until the link stops working (410); absent or null: "
        "never (or LOOMSYNC_SHARE_LINK_MAX_AGE, when the server sets one; longer is a 422)",
    )

    @field_validator("expires_in", mode="before")
    @classmethod
    def _integral(cls, value: Any) -> Any:
        """``3600.0`` and ``36E2`` are the integer 3600 (JSON does not tell them apart)."""
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, jsontext.JsonNumber):
            exact = value.to_decimal()
            if exact.is_finite() and exact == exact.to_integral_value() and exact.adjusted() < 19:
                return int(exact)
        return value


class ShareLinkCreated(BaseModel):
    """201 answer of a create: ``url`` holds the link's secret, shown this once (only its hash
    is stored; a lost URL is revoked and made again)."""

    id: str = Field(description="The link's id (a UUID), to list and revoke it")
    thread_id: str
    url: str = Field(
        description="Absolute URL of the viewer page: LOOMSYNC_PUBLIC_URL (or the request's "
        "base URL) + /s/<secret>; the same secret opens GET /api/shared/<secret> as JSON"
    )
    created_at: str
    expires_at: str | None = Field(description="RFC 3339 UTC; null: never expires")


class ShareLink(BaseModel):
    """A link as listed: never its secret or URL."""

    id: str
    thread_id: str
    state: LinkState
    created_by: str
    created_at: str
    expires_at: str | None
    revoked_at: str | None
    last_used_at: str | None
    use_count: int = Field(description="How many times the link opened its thread")


class ShareLinkPage(BaseModel):
    """A thread's links, newest first (revoked and expired ones included); pass
    ``next_cursor`` back as ``cursor`` for the next page (null: done)."""

    links: list[ShareLink]
    next_cursor: str | None

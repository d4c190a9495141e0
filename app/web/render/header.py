"""The header of a thread's page: title, repository, branch, commits, model, owner, visibility
and counts, from its ``threads`` row and document (API.md section 2), every value cleaned text
(the template escapes it) and bounded in length."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.web.pagetime import page_time
from app.web.render.text import clean

#: Commits listed in the header; the rest are counted.
SHOWN_COMMITS = 8
_MAX_FIELD = 300


@dataclass(frozen=True, slots=True)
class Header:
    """What the page says about a thread before its messages."""

    id: str
    title: str
    facts: list[tuple[str, str]]  # (label, value) pairs that are set, in display order
    commits: list[str]
    more_commits: int
    message_count: int


def _text(value: Any) -> str:
    return clean(value)[:_MAX_FIELD] if isinstance(value, str) else ""


def header(row: Any, document: dict[str, Any], thread_id: str) -> Header:
    """The header of the thread whose row (app/threads/reads.load_row) and decoded document
    (without messages) are given."""
    meta = document.get("metadata")
    title = _text(meta.get("title")) if isinstance(meta, dict) else ""
    commits_raw = document.get("git_commits")
    commits = (
        [c for c in commits_raw if isinstance(c, str)] if isinstance(commits_raw, list) else []
    )
    model = " / ".join(v for v in (_text(row.provider), _text(row.model)) if v)
    facts = [
        ("Repository", _text(row.git_remote_url)),
        ("Workspace", _text(row.workspace_root)),
        ("Branch", _text(row.git_branch)),
        ("Model", model),
        ("Owner", _text(row.owner_id)),
        ("Organization", _text(row.org_id)),
        ("Visibility", _text(row.visibility)),
        ("Messages", f"{row.message_count:,}"),
        ("Started", page_time(row.created_at)),
        ("Last activity", page_time(row.last_activity_at)),
    ]
    return Header(
        id=thread_id,
        title=title or "Untitled thread",
        facts=[(label, value) for label, value in facts if value],
        commits=[_text(c)[:40] for c in commits[:SHOWN_COMMITS]],
        more_commits=max(0, len(commits) - SHOWN_COMMITS),
        message_count=row.message_count,
    )

"""How a thread summary (API.md section 2, ThreadSummary) is shown in the lists of ``/`` and
``/search``: plain values for the templates, which escape them."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from app.web.pagetime import page_time
from app.web.reading import page_start

UNTITLED = "Untitled thread"


def thread_href(thread_id: str, message_index: int | None = None) -> str:
    """The viewer's URL of a thread (``/t/{id}``), at one message when ``message_index`` is
    given: ``/t/{id}?from={its page's start}#m-{index}`` (``?from`` left out on the first
    page), so the page that holds the message opens in one load, without JavaScript."""
    href = f"/t/{thread_id}"
    if message_index is None:
        return href
    start = page_start(message_index)
    return f"{href}?from={start}#m-{message_index}" if start else f"{href}#m-{message_index}"


def repository_name(url: str | None) -> str | None:
    """``user/project`` of a git remote URL (https or scp-like ``git@host:user/project.git``)."""
    if not url:
        return None
    path = urlsplit(url).path if "://" in url else url.partition(":")[2] or url
    path = path.strip("/").removesuffix(".git")
    return path or url


def thread_view(summary: dict[str, Any], message_index: int | None = None) -> dict[str, Any]:
    """The fields one list row shows, from a ThreadSummary dict."""
    return {
        "id": summary["id"],
        "href": thread_href(summary["id"], message_index),
        "title": summary["title"] or UNTITLED,
        "untitled": not summary["title"],
        "repository": repository_name(summary["git_remote_url"]),
        "branch": summary["git_branch"],
        "model": summary["model"],
        "messages": summary["message_count"],
        "visibility": summary["visibility"],
        "owner": summary["owner_id"],
        "last_activity": summary["last_activity_at"],
        "last_activity_text": page_time(summary["last_activity_at"]),
    }
